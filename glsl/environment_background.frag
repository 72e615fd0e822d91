#version 330 core
// The environment itself behind everything ("show the environment as background"): the radiance
// cube's sharpest level along each pixel's view ray, exposed and tone mapped as the model is.
#include "ibl.glsl"
#include "tonemap.glsl"
in vec2 v_uv;
uniform mat4 u_clip_to_direction;   // inverse of (view rotation x projection)
out vec4 out_color;

void main() {
    vec4 far_point = u_clip_to_direction * vec4(v_uv * 2.0 - 1.0, 1.0, 1.0);
    vec3 direction = normalize(far_point.xyz / far_point.w);
    out_color = vec4(tone_map(textureLod(u_env_specular, u_env_rotation * direction, 0.0).rgb), 1.0);
}
