// Percentage-closer filtering as the hardware does it: one tap of a LINEAR sampler2DShadow is
// the bilinear mix of a 2x2 compare (where p.z is no deeper than the map). One tap, not a grid:
// llvmpipe pays about as much for each as for the rest of the pixel; the ground's shadow is
// softened by blurring its map instead (viewer/render/shadows.py). Outside the map: lit.
float shadow_lit(sampler2DShadow map, vec4 q) {
    if (q.w <= 0.0) return 1.0;  // behind a spot light
    vec3 p = q.xyz / q.w;        // 1 for a directional light's orthographic map
    if (any(lessThan(p.xy, vec2(0.0))) || any(greaterThan(p.xy, vec2(1.0)))) return 1.0;
    return texture(map, vec3(p.xy, min(p.z, 1.0)));
}
