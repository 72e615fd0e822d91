#version 330 core
// The shadow pass (with skinning.vert built with SHADOW_PASS 1, see viewer/render/shadows.py):
// the cast map keeps only depth; the contact map (an orthographic camera on the ground looking
// up, its far plane where the contact shadow fades out) is as dark as the surface is near the
// ground: 1 at the ground, 0 at the far plane (the depth test keeps the lowest surface).
out vec4 out_color;

void main() {
    out_color = vec4(1.0 - gl_FragCoord.z);
}
