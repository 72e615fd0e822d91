#version 330 core
// Vertex color times the texture (the font atlas is white where glyphs are).
in vec2 v_uv;
in vec4 v_color;
uniform sampler2D u_texture;
out vec4 out_color;
void main() {
    out_color = v_color * texture(u_texture, v_uv);
}
