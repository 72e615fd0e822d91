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
out vec4 out_color;

#include "shadow_pcf.glsl"

void main() {
    vec4 world = vec4(mix(u_extent.x, u_extent.z, v_uv.x), u_ground_y, mix(u_extent.y, u_extent.w, v_uv.y), 1.0);
    float dark = 0.0;
    if (u_has_contact) {
        vec2 uv = (u_contact_matrix * world).xy;
        if (all(greaterThan(uv, vec2(0.0))) && all(lessThan(uv, vec2(1.0)))) dark = texture(u_contact_map, uv).r;
    }
    if (u_has_cast) dark = max(dark, 1.0 - shadow_lit(u_shadow_map, (u_shadow_matrix * world).xyz));
    out_color = vec4(dark);
}
