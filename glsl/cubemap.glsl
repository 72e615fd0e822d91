// Cube-map faces as OpenGL samples them (the order +X -X +Y -Y +Z -Z, rows as uploaded): the
// direction through the point (s, t) of a face, s and t in 0..1. The cube holds world directions,
// so a lookup needs no flip.
vec3 cube_face_direction(int face, vec2 st) {
    vec2 c = st * 2.0 - 1.0;
    if (face == 0) return normalize(vec3(1.0, -c.y, -c.x));
    if (face == 1) return normalize(vec3(-1.0, -c.y, c.x));
    if (face == 2) return normalize(vec3(c.x, 1.0, c.y));
    if (face == 3) return normalize(vec3(c.x, -1.0, -c.y));
    if (face == 4) return normalize(vec3(c.x, -c.y, 1.0));
    return normalize(vec3(-c.x, -c.y, -1.0));
}
