#version 330 core
// The ground's shadow, once per frame into a small map over the ground under the character
// (viewer/render/shadows.py), so the ground drawn on screen reads one texel, not the filters:
// the darker of the blurred contact shadow and the cast shadow (percentage-closer filtered),
// then blurred by the softness.
in vec2 v_uv;
uniform sampler2D u_contact_map;
uniform sampler2DShadow u_shadow_map;
uniform mat4 u_contact_matrix;   // world -> the contact map's uv
uniform mat4 u_shadow_matrix;    // world -> the shadow map's [0, 1]^3
uniform bool u_has_contact;
uniform bool u_has_cast;
uniform vec4 u_extent;           // x0, z0, x1, z1: the map's square on the ground
uniform float u_ground_y;
uniform vec2 u_spread;           // the softness: the taps' spacing on the ground (world x, z)
out vec4 out_color;

#include "shadow_pcf.glsl"

void main() {
    vec4 world = vec4(mix(u_extent.x, u_extent.z, v_uv.x), u_ground_y, mix(u_extent.y, u_extent.w, v_uv.y), 1.0);
    // Both maps' coordinates are linear in the world point: each tap's are the centre's plus
    // multiples of one step along x and z, not a matrix product per tap (llvmpipe pays for each).
    vec4 contact = u_contact_matrix * world, shadow = u_shadow_matrix * world;
    vec4 contact_x = u_contact_matrix[0] * u_spread.x, contact_z = u_contact_matrix[2] * u_spread.y;
    vec4 shadow_x = u_shadow_matrix[0] * u_spread.x, shadow_z = u_shadow_matrix[2] * u_spread.y;
    // A 3x3 Gaussian of taps (each already a bilinear mix) spread by the softness: the blur in
    // this one pass, not in passes of its own (each costs llvmpipe a flush).
    float sum = 0.0;
    for (int i = -1; i <= 1; ++i) {
        for (int j = -1; j <= 1; ++j) {
            float weight = (i == 0 ? 2.0 : 1.0) * (j == 0 ? 2.0 : 1.0);
            float dark = 0.0;
            if (u_has_contact) {
                vec2 uv = (contact + float(i) * contact_x + float(j) * contact_z).xy;
                if (all(greaterThan(uv, vec2(0.0))) && all(lessThan(uv, vec2(1.0)))) dark = texture(u_contact_map, uv).r;
            }
            if (u_has_cast) {
                dark = max(dark, 1.0 - shadow_lit(u_shadow_map, shadow + float(i) * shadow_x + float(j) * shadow_z));
            }
            sum += weight * dark;
        }
    }
    out_color = vec4(sum / 16.0);
}
