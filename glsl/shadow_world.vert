#version 330 core
// The shadow pass's draws (viewer/render/shadows.py): the posed mesh's world positions, skinned
// and morphed once this frame by skinning.vert with SHADOW_PASS (transform feedback), placed in
// each shadow map's view, so the maps do not skin the mesh again.
in vec3 in_position;
uniform mat4 u_view;
uniform mat4 u_projection;

void main() {
    gl_Position = u_projection * u_view * vec4(in_position, 1.0);
}
