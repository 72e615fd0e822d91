// Image-based light from an environment (viewer.render.environment.Environment.use sets these),
// shaped as Babylon.js's PBR shader reads its environment texture; see that module's docstring.
uniform samplerCube u_env_specular;  // radiance cube, mip chain; lookups in world directions
uniform sampler2D u_env_brdf;        // split-sum table: x = n.v, y = roughness -> (scale, bias)
uniform vec3 u_env_sh[9];            // irradiance / pi as 9 spherical-harmonic terms (basis below)
uniform float u_env_mips;            // mip levels of u_env_specular (9 for a 256 cube)
uniform mat3 u_env_rotation;         // world direction -> environment direction (rotation about +Y)

// Babylon's convertRoughnessToAverageSlope: alpha = roughness^2 + MINIMUMVARIANCE.
float ibl_alpha(float roughness) {
    return roughness * roughness + 0.0005;
}

// Lambertian radiance for albedo 1 (irradiance / pi) around the normal n: Babylon's
// computeEnvironmentIrradiance from its pre-scaled harmonics. Multiply by the diffuse colour.
vec3 ibl_diffuse(vec3 n) {
    vec3 d = u_env_rotation * n;
    return max(u_env_sh[0]
        + u_env_sh[1] * d.y + u_env_sh[2] * d.z + u_env_sh[3] * d.x
        + u_env_sh[4] * (d.x * d.y) + u_env_sh[5] * (d.y * d.z) + u_env_sh[6] * (3.0 * d.z * d.z - 1.0)
        + u_env_sh[7] * (d.x * d.z) + u_env_sh[8] * (d.x * d.x - d.y * d.y), 0.0);
}

// Radiance arriving along r, filtered for a GGX lobe of average slope alpha_g: the mip Babylon's
// shader picks, lod = 0.8 * log2(cube size * alpha_g) (getLodFromAlphaG, lodGenerationScale 0.8).
vec3 ibl_specular_alpha(vec3 r, float alpha_g) {
    float lod = 0.8 * log2(exp2(u_env_mips - 1.0) * alpha_g);
    return textureLod(u_env_specular, u_env_rotation * r, clamp(lod, 0.0, u_env_mips - 1.0)).rgb;
}

vec3 ibl_specular(vec3 r, float roughness) {
    return ibl_specular_alpha(r, ibl_alpha(roughness));
}

// What Babylon's PBR material uses as the environment's specular radiance (its default
// MIX_IBL_RADIANCE_WITH_IRRADIANCE): the filtered radiance along r, mixed towards the irradiance
// around the normal (ibl_diffuse) by alpha_g, so rough surfaces are lit as a diffuse one would be.
// As in Babylon, alpha_g is not clamped: past 1 (specular anti-aliasing on rough, curved metal)
// the mix overshoots, below zero where r sees a sun.
vec3 ibl_radiance(vec3 r, float alpha_g, vec3 irradiance) {
    return mix(ibl_specular_alpha(r, alpha_g), irradiance, alpha_g);
}

// Split-sum environment BRDF (height-correlated Smith GGX): specular reflectance is
// f0 * x + f90 * y. Babylon's table holds (bias, scale + bias); this one (scale, bias).
vec2 ibl_brdf(float n_dot_v, float roughness) {
    return texture(u_env_brdf, vec2(clamp(n_dot_v, 0.0, 1.0), clamp(roughness, 0.0, 1.0))).rg;
}
