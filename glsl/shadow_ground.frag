#version 330 core
// The ground as a shadow catcher: black, as opaque as the shadow is dark (blended over), so
// the lit ground is the picture without shadows. The darkness was composed once this frame
// into a map over the quad (shadow_compose.frag).
in vec3 v_world_position;
uniform sampler2D u_ground_map;
uniform vec4 u_extent;     // x0, z0, x1, z1: the square of the map's texture (the quad drawn is the part it darkens)
uniform float u_intensity;
out vec4 out_color;

void main() {
    vec2 uv = (v_world_position.xz - u_extent.xy) / (u_extent.zw - u_extent.xy);
    out_color = vec4(0.0, 0.0, 0.0, u_intensity * texture(u_ground_map, uv).r);
}
