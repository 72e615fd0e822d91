#version 330 core
// Colored lines and points in world space: the ground grid and the skeleton overlay.
in vec3 in_position;
in vec4 in_color;
uniform mat4 u_view;
uniform mat4 u_projection;
uniform float u_point_size;
out vec4 v_color;
out vec3 v_world_position;
void main() {
    v_color = in_color;
    v_world_position = in_position;
    gl_Position = u_projection * u_view * vec4(in_position, 1.0);
    gl_PointSize = u_point_size;
}
