#version 330 core
// One face of one mip of the GGX-prefiltered radiance cube: the radiance a GGX lobe of slope
// u_alpha gathers around the texel's direction (n = v = r), by importance sampling with a fixed
// count of Hammersley points, each read from the source cube's mip whose texel covers that
// sample's solid angle (filtered importance sampling: no fireflies from a few bright texels).
// As Babylon.js's HDRFiltering does when a texture is prefiltered.
#include "cubemap.glsl"
uniform samplerCube u_source;   // level 0 and its box-filtered mips
uniform int u_face;
uniform float u_size;           // this mip's face size in texels
uniform float u_alpha;          // GGX alpha for this mip
uniform float u_source_size;    // level 0 face size
uniform float u_source_mips;
uniform int u_samples;
out vec4 out_color;

const float PI = 3.14159265358979;

vec2 hammersley(int i, int n) {
    uint bits = uint(i);
    bits = (bits << 16u) | (bits >> 16u);
    bits = ((bits & 0x55555555u) << 1u) | ((bits & 0xAAAAAAAAu) >> 1u);
    bits = ((bits & 0x33333333u) << 2u) | ((bits & 0xCCCCCCCCu) >> 2u);
    bits = ((bits & 0x0F0F0F0Fu) << 4u) | ((bits & 0xF0F0F0F0u) >> 4u);
    bits = ((bits & 0x00FF00FFu) << 8u) | ((bits & 0xFF00FF00u) >> 8u);
    return vec2((float(i) + 0.5) / float(n), float(bits) * 2.3283064365386963e-10);
}

void main() {
    vec3 n = cube_face_direction(u_face, gl_FragCoord.xy / u_size);
    vec3 tangent = normalize(cross(abs(n.z) < 0.999 ? vec3(0.0, 0.0, 1.0) : vec3(1.0, 0.0, 0.0), n));
    vec3 bitangent = cross(n, tangent);
    float a2 = u_alpha * u_alpha;
    float texel_solid_angle = 4.0 * PI / (6.0 * u_source_size * u_source_size);
    vec3 sum = vec3(0.0);
    float weight = 0.0;
    for (int i = 0; i < u_samples; ++i) {
        vec2 xi = hammersley(i, u_samples);
        float cos_h = sqrt((1.0 - xi.x) / (1.0 + (a2 - 1.0) * xi.x));
        float sin_h = sqrt(max(1.0 - cos_h * cos_h, 0.0));
        float phi = 2.0 * PI * xi.y;
        vec3 h = vec3(sin_h * cos(phi), sin_h * sin(phi), cos_h);
        float n_dot_l = 2.0 * cos_h * cos_h - 1.0;
        if (n_dot_l <= 0.0) {
            continue;
        }
        vec3 l = vec3(2.0 * cos_h * h.x, 2.0 * cos_h * h.y, n_dot_l);
        float denominator = cos_h * cos_h * (a2 - 1.0) + 1.0;
        float d = a2 / (PI * denominator * denominator);
        float sample_solid_angle = 4.0 / (float(u_samples) * d);   // 1 / (count * pdf), pdf = D / 4
        float lod = clamp(0.5 * log2(sample_solid_angle / texel_solid_angle) + 1.0, 0.0, u_source_mips - 1.0);
        vec3 direction = tangent * l.x + bitangent * l.y + n * l.z;
        sum += textureLod(u_source, direction, lod).rgb * n_dot_l;
        weight += n_dot_l;
    }
    out_color = vec4(sum / max(weight, 1e-6), 1.0);
}
