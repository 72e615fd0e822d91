#version 330 core
// The ID pass (with skinning.vert built with PICK_IDS 1, see Renderer.pick): which mesh and
// which of its triangles is nearest at the pixel. The viewer turns the triangle into a bone on
// the CPU (viewer.model.weights.triangle_bone), the same function the numpy ray cast uses.

uniform uint u_pick_mesh;       // 1 + the mesh's index in scene.meshes (0 stays "nothing")
uniform int u_first_triangle;   // the drawn submesh's first triangle in the mesh's index buffer

out uvec2 out_id;

void main() {
    // Without a geometry shader, gl_PrimitiveID counts the triangles of this draw call.
    out_id = uvec2(u_pick_mesh, uint(gl_PrimitiveID + u_first_triangle));
}
