#version 330 core
// Widens each line into a screen-space quad u_line_width pixels wide: core profiles (and
// llvmpipe) draw GL lines only 1 pixel wide, too thin for a skeleton overlay.
layout(lines) in;
layout(triangle_strip, max_vertices = 4) out;

in vec4 v_color[];
in vec3 v_world_position[];
out vec4 g_color;
out vec3 g_world_position;

uniform vec2 u_viewport;
uniform float u_line_width;

void main() {
    vec4 a = gl_in[0].gl_Position;
    vec4 b = gl_in[1].gl_Position;
    if (a.w <= 0.0 || b.w <= 0.0) return;  // an end behind the camera
    vec2 sa = a.xy / a.w * u_viewport * 0.5;
    vec2 sb = b.xy / b.w * u_viewport * 0.5;
    vec2 direction = sb - sa;
    if (dot(direction, direction) < 1e-6) direction = vec2(1.0, 0.0);
    vec2 normal = normalize(vec2(-direction.y, direction.x)) * u_line_width * 0.5;
    vec2 offset_a = normal / (u_viewport * 0.5) * a.w;
    vec2 offset_b = normal / (u_viewport * 0.5) * b.w;
    g_color = v_color[0]; g_world_position = v_world_position[0];
    gl_Position = vec4(a.xy + offset_a, a.zw); EmitVertex();
    gl_Position = vec4(a.xy - offset_a, a.zw); EmitVertex();
    g_color = v_color[1]; g_world_position = v_world_position[1];
    gl_Position = vec4(b.xy + offset_b, b.zw); EmitVertex();
    gl_Position = vec4(b.xy - offset_b, b.zw); EmitVertex();
    EndPrimitive();
}
