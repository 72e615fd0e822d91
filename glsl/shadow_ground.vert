#version 330 core
// The shadow catcher's quad on the ground (two triangles from the vertex id, no buffers).
uniform mat4 u_view;
uniform mat4 u_projection;
uniform vec4 u_quad;      // x0, z0, x1, z1: the part of the ground map's square that it darkens
uniform float u_ground_y;
out vec3 v_world_position;

void main() {
    int corner = gl_VertexID < 3 ? gl_VertexID : gl_VertexID - 2;  // 0 1 2, 1 2 3
    if (gl_VertexID == 3) corner = 2;
    if (gl_VertexID == 4) corner = 1;
    vec2 t = vec2(corner & 1, corner >> 1);
    v_world_position = vec3(mix(u_quad.x, u_quad.z, t.x), u_ground_y, mix(u_quad.y, u_quad.w, t.y));
    gl_Position = u_projection * u_view * vec4(v_world_position, 1.0);
}
