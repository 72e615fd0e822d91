// Percentage-closer filtering: the fraction of a 3x3 grid of taps (each a hardware 2x2 compare)
// around p.xy, radius apart (uv), where p.z is no deeper than the map. Outside the map: lit.
float shadow_pcf(sampler2DShadow map, vec3 p, float radius) {
    if (any(lessThan(p.xy, vec2(0.0))) || any(greaterThan(p.xy, vec2(1.0)))) return 1.0;
    float z = min(p.z, 1.0);
    float lit = 0.0;
    for (int i = -1; i <= 1; ++i) {
        for (int j = -1; j <= 1; ++j) {
            lit += texture(map, vec3(p.xy + vec2(i, j) * radius, z));
        }
    }
    return lit / 9.0;
}
