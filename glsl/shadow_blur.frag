#version 330 core
// One direction of a separable Gaussian blur of the contact map (the softness).
in vec2 v_uv;
uniform sampler2D u_image;
uniform vec2 u_step;    // one texel along the blur's direction, in uv
uniform float u_sigma;  // texels
out vec4 out_color;

void main() {
    float sigma = max(u_sigma, 0.3);
    int reach = int(min(ceil(2.5 * sigma), 24.0));
    float total = 0.0, sum = 0.0;
    for (int k = -reach; k <= reach; ++k) {
        float w = exp(-0.5 * float(k * k) / (sigma * sigma));
        sum += w * texture(u_image, v_uv + float(k) * u_step).r;
        total += w;
    }
    out_color = vec4(sum / total);
}
