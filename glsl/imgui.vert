#version 330 core
// Dear ImGui vertices: screen-space position (pixels), atlas UV, 8-bit RGBA color.
in vec2 in_position;
in vec2 in_uv;
in vec4 in_color;
uniform mat4 u_projection;  // display rect -> clip space, Y down like ImGui
out vec2 v_uv;
out vec4 v_color;
void main() {
    v_uv = in_uv;
    v_color = in_color;
    gl_Position = u_projection * vec4(in_position, 0.0, 1.0);
}
