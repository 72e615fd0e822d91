#version 330 core
// One face of the environment cube from the equirectangular picture, picked as Babylon.js's
// PanoramaToCubeMapTools picks (the nearest pixel, rounded as it rounds), in its orientation for
// a right-handed scene: world direction d is at u = 0.5 + atan(d.x, -d.z) / 2pi (so -Z is the
// middle of the picture, +X three quarters across) and v = acos(d.y) / pi from the top.
// A picture much wider than four faces is averaged over u_samples x u_samples points a texel.
#include "cubemap.glsl"
uniform sampler2D u_equirect;   // rows top first, nearest
uniform int u_face;
uniform float u_size;           // face size in texels
uniform int u_samples;
out vec4 out_color;

const float PI = 3.14159265358979;

vec3 equirect(vec3 d) {
    ivec2 size = textureSize(u_equirect, 0);
    float u = atan(d.x, -d.z) / (2.0 * PI) + 0.5;
    float from_bottom = acos(clamp(-d.y, -1.0, 1.0)) / PI;
    int column = clamp(int(floor(u * float(size.x) + 0.5)), 0, size.x - 1);
    int row = size.y - 1 - clamp(int(floor(from_bottom * float(size.y) + 0.5)), 0, size.y - 1);
    return texelFetch(u_equirect, ivec2(column, row), 0).rgb;
}

void main() {
    vec3 sum = vec3(0.0);
    vec2 corner = floor(gl_FragCoord.xy);
    for (int i = 0; i < u_samples; ++i) {
        for (int j = 0; j < u_samples; ++j) {
            vec2 st = (corner + (vec2(i, j) + 0.5) / float(u_samples)) / u_size;
            sum += equirect(cube_face_direction(u_face, st));
        }
    }
    out_color = vec4(sum / float(u_samples * u_samples), 1.0);
}
