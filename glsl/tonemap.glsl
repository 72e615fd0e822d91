// Exposure, tone mapping and the sRGB encoding at the end of every lit program, as Babylon.js's
// image processing (imageProcessingFunctions, with contrast 1 and nothing else on) does them:
// colour * exposure, then the tone curve, then pow(c, 1/2.2) (Babylon's default: its engine's
// useExactSrgbConversions is off) and a clamp to 0..1.
// The #define TONE_MAPPING selects the curve (viewer.render.tonemap.TONE_MAPPING_CODES; every
// program that includes this file is built with tone_mapping_defines()):
//   0 none (clamp only), 1 khr-neutral (Khronos PBR Neutral), 2 aces (Babylon's TONEMAPPING_ACES).
// A #define, not a uniform: llvmpipe runs both sides of every branch, so a uniform choice made
// every lit pixel pay for both curves (about 10 % of a CesiumMan frame). The exposure stays a
// uniform (set_tone_mapping).
#ifndef TONE_MAPPING
#error tonemap.glsl needs TONE_MAPPING defined: viewer.render.tonemap.tone_mapping_defines
#endif
uniform float u_exposure;

// Khronos PBR Neutral, as the Khronos reference (and Babylon's TONEMAPPING_KHR_PBR_NEUTRAL) has it.
vec3 tone_map_khr_neutral(vec3 color) {
    const float start_compression = 0.8 - 0.04;
    const float desaturation = 0.15;
    float x = min(color.r, min(color.g, color.b));
    float offset = x < 0.08 ? x - 6.25 * x * x : 0.04;
    color -= offset;
    float peak = max(color.r, max(color.g, color.b));
    if (peak < start_compression) {
        return color;
    }
    const float d = 1.0 - start_compression;
    float new_peak = 1.0 - d * d / (peak + d - start_compression);
    color *= new_peak / peak;
    float g = 1.0 - 1.0 / (desaturation * (peak - new_peak) + 1.0);
    return mix(color, vec3(new_peak), g);
}

// Babylon's TONEMAPPING_ACES: the fitted ACES (an input matrix, the RRT+ODT rational fit, the
// output matrix), clamped. GLSL's mat3 takes columns: each vec3 below is one column.
vec3 tone_map_aces(vec3 color) {
    const mat3 input_matrix = mat3(
        vec3(0.59719, 0.07600, 0.02840),
        vec3(0.35458, 0.90834, 0.13383),
        vec3(0.04823, 0.01566, 0.83777));
    const mat3 output_matrix = mat3(
        vec3(1.60475, -0.10208, -0.00327),
        vec3(-0.53108, 1.10813, -0.07276),
        vec3(-0.07367, -0.00605, 1.07602));
    vec3 v = input_matrix * color;
    vec3 a = v * (v + 0.0245786) - 0.000090537;
    vec3 b = v * (0.983729 * v + 0.4329510) + 0.238081;
    return clamp(output_matrix * (a / b), 0.0, 1.0);
}

// Linear light in, display sRGB (0..1) out.
vec3 tone_map(vec3 linear_color) {
    vec3 color = max(linear_color, 0.0) * u_exposure;
#if TONE_MAPPING == 1
    color = tone_map_khr_neutral(color);
#elif TONE_MAPPING == 2
    color = tone_map_aces(color);
#endif
    return clamp(pow(max(color, 0.0), vec3(1.0 / 2.2)), 0.0, 1.0);
}
