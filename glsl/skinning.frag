#version 330 core
// Lit base color: base color factor x vertex color x base color texture, a key and a fill
// light, hemispheric ambient and a soft specular. Wireframe draws a flat color. A skin view
// (u_paint, see skinning.vert) draws v_paint under a plain grey light that keeps its hue.
// LABELS 1 (skinning.vert) also writes the part index and the camera-space depth to render
// targets 1 and 2, from the same draw as the colour.

in vec3 v_world_position;
in vec3 v_normal;
in vec2 v_uv;
in vec4 v_color;
in vec4 v_paint;

uniform vec4 u_base_color;
uniform sampler2D u_base_color_texture;
uniform vec3 u_camera_position;
uniform vec3 u_key_direction;   // towards the light, world space
uniform bool u_flat_color;      // wireframe overlay
uniform int u_paint;            // PAINT_*: what colours the mesh

layout(location = 0) out vec4 out_color;
#ifndef LABELS
#define LABELS 0
#endif
#if LABELS
flat in int v_part;
in float v_view_depth;
layout(location = 1) out uint out_part;
layout(location = 2) out float out_depth;
#endif

void main() {
#if LABELS
    out_part = uint(v_part);
    out_depth = v_view_depth;
#endif
    vec4 base = u_base_color * v_color * texture(u_base_color_texture, v_uv);
    if (u_flat_color) {
        out_color = base;
        return;
    }
    vec3 n = normalize(v_normal);
    vec3 view = normalize(u_camera_position - v_world_position);
    if (dot(n, view) < 0.0) n = -n;  // two-sided lighting for open meshes
    vec3 key = normalize(u_key_direction);
    if (u_paint != PAINT_NONE) {
        out_color = vec4(v_paint.rgb * (0.55 + 0.45 * max(dot(n, key), 0.0)), 1.0);
        return;
    }
    vec3 fill = normalize(vec3(-key.x, 0.3, -key.z));
    float hemisphere = 0.5 + 0.5 * n.y;
    vec3 ambient = mix(vec3(0.22, 0.21, 0.20), vec3(0.38, 0.40, 0.45), hemisphere);
    float diffuse = max(dot(n, key), 0.0) * 0.75 + max(dot(n, fill), 0.0) * 0.25;
    float specular = pow(max(dot(n, normalize(key + view)), 0.0), 48.0) * 0.18;
    vec3 color = base.rgb * (ambient + diffuse) + specular;
    out_color = vec4(pow(color, vec3(1.0 / 1.15)), 1.0);  // drawn opaque (glTF OPAQUE: alpha ignored)
}
