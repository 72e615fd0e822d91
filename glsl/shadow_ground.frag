#version 330 core
// The ground as a shadow catcher: black, as opaque as the shadow is dark (blended over), so
// the lit ground is the picture without shadows. The darker of the contact shadow and the
// cast shadow (percentage-closer filtered) wins.
in vec3 v_world_position;
uniform sampler2D u_contact_map;
uniform sampler2DShadow u_shadow_map;
uniform mat4 u_contact_matrix;   // world -> the contact map's uv
uniform mat4 u_shadow_matrix;    // world -> the shadow map's [0, 1]^3
uniform bool u_has_contact;
uniform bool u_has_cast;
uniform float u_intensity;
uniform float u_shadow_radius;   // the filter's radius, in uv
out vec4 out_color;

#include "shadow_pcf.glsl"

void main() {
    float dark = 0.0;
    if (u_has_contact) {
        vec2 uv = (u_contact_matrix * vec4(v_world_position, 1.0)).xy;
        if (all(greaterThan(uv, vec2(0.0))) && all(lessThan(uv, vec2(1.0)))) dark = texture(u_contact_map, uv).r;
    }
    if (u_has_cast) {
        vec3 p = (u_shadow_matrix * vec4(v_world_position, 1.0)).xyz;
        dark = max(dark, 1.0 - shadow_pcf(u_shadow_map, p, u_shadow_radius));
    }
    out_color = vec4(0.0, 0.0, 0.0, u_intensity * dark);
}
