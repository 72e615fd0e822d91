#version 330 core
// Fades with distance from u_fade_center (the grid); u_fade_radius <= 0 disables fading.
// With WIDE_LINES the inputs come from lines.geom.
#ifdef WIDE_LINES
#define v_color g_color
#define v_world_position g_world_position
#endif
in vec4 v_color;
in vec3 v_world_position;
uniform vec3 u_fade_center;
uniform float u_fade_radius;
uniform bool u_round_points;
out vec4 out_color;
void main() {
    float alpha = v_color.a;
    if (u_fade_radius > 0.0) {
        float d = length(v_world_position.xz - u_fade_center.xz) / u_fade_radius;
        alpha *= clamp(1.0 - d * d, 0.0, 1.0);
    }
    if (u_round_points && length(gl_PointCoord - vec2(0.5)) > 0.5) discard;
    out_color = vec4(v_color.rgb, alpha);
}
