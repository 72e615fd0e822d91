#version 330 core
// The glTF 2.0 metallic-roughness material (viewer/render/materials.py sets its uniforms and
// textures), lit by an environment (image-based light through ibl.glsl) or, with
// RenderOptions.environment "none", by the simple light (a key and a fill light and a sky/ground
// ambient), plus the file's KHR_lights_punctual lights; then exposure, tone mapping and sRGB
// (tonemap.glsl).
//
// The BRDF is the glTF spec's Appendix B: Schlick Fresnel (F90 = 1), the GGX distribution, the
// height-correlated Smith GGX visibility and a Lambert diffuse. It is composed as Babylon.js 9.28's
// PBRMaterial composes a glTF material (its defaults, and the glTF loader's settings), since its
// pictures are the reference:
//   - the diffuse colour is base * (1 - 0.04) * (1 - metallic) (Babylon's default "legacy specular
//     energy conservation"), F0 = mix(0.04, base, metallic);
//   - roughness r gives alpha = r^2 + 0.0005; specular anti-aliasing (the glTF loader turns it on)
//     widens alpha by 0.75 * |dN| and lights see max(r, |dN|^(2/3)) as their roughness;
//   - the environment's specular reflectance is the split sum F0 * A + B, times the multiple-
//     scattering energy compensation 1 + F0 * (1 / (A + B) - 1) (also on the lights' specular);
//   - rough surfaces see their prefiltered radiance blended towards the irradiance by alpha
//     (Babylon's MIX_IBL_RADIANCE_WITH_IRRADIANCE);
//   - occlusion darkens the environment's diffuse light; the specular is darkened by Babylon's
//     radiance occlusion ((n.v + ao)^2 - 1 + ao) and, on normal-mapped surfaces, its horizon
//     occlusion; lights are not occluded;
//   - emissive (factor x texture x KHR_materials_emissive_strength) is added; unlit is the base
//     colour alone (still exposed and tone mapped, as Babylon's).
// Debug looks stay as they were: wireframe draws a flat colour; a skin view (SHADED 0; u_paint,
// see skinning.vert) draws v_paint under a plain grey light that keeps its hue (no tone mapping).
//
// What a material has is compiled in, not branched on at run time (llvmpipe runs both sides of
// every branch): viewer.render.materials.GpuMaterial.defines gives
//   TEXTURES      bit s: slot s (SLOT_*) has a texture
//   UV1           bit s: slot s reads TEXCOORD_1 (else TEXCOORD_0)
//   MIRROR        bits 2s, 2s+1: slot s wraps s, t MIRRORED_REPEAT (emulated here: the texture
//                 clamps to its edge and the coordinate is folded, sampled with the unfolded
//                 coordinate's derivatives so the mip level is the same)
//   ALPHA_MODE    ALPHA_OPAQUE, ALPHA_MASK or ALPHA_BLEND
//   UNLIT         KHR_materials_unlit
// and the renderer HAS_TANGENTS (the mesh has TANGENT; else the tangent frame comes from
// screen-space derivatives), ENVIRONMENT (image-based light; 0: the simple light's sky and
// ground), LIGHTS (how many punctual lights, at most MAX_LIGHTS) and SHADED (0: a skin view). u_uv_transform[s] is slot s's KHR_texture_transform.
// LABELS 1 (skinning.vert) also writes the part index and the camera-space depth to render
// targets 1 and 2, from the same draw as the colour.

#include "ibl.glsl"
#include "tonemap.glsl"

in vec3 v_world_position;
in vec3 v_normal;
in vec4 v_tangent;
in vec2 v_uv;
in vec2 v_uv1;
in vec4 v_color;
in vec4 v_paint;

#ifndef TEXTURES
#define TEXTURES 0
#endif
#ifndef UV1
#define UV1 0
#endif
#ifndef MIRROR
#define MIRROR 0
#endif
#ifndef ALPHA_MODE
#define ALPHA_MODE 0
#endif
#ifndef UNLIT
#define UNLIT 0
#endif
#ifndef HAS_TANGENTS
#define HAS_TANGENTS 0
#endif
#ifndef ENVIRONMENT
#define ENVIRONMENT 0
#endif
#ifndef SHADED
#define SHADED 1
#endif
#ifndef LIGHTS
#define LIGHTS 0
#endif
#define SLOT_BASE_COLOR 0
#define SLOT_METALLIC_ROUGHNESS 1
#define SLOT_NORMAL 2
#define SLOT_OCCLUSION 3
#define SLOT_EMISSIVE 4
#define SLOTS 5
#define ALPHA_OPAQUE 0
#define ALPHA_MASK 1
#define ALPHA_BLEND 2
#define MAX_LIGHTS 8
#define LIGHT_DIRECTIONAL 0
#define LIGHT_POINT 1
#define LIGHT_SPOT 2
#define PI 3.14159265359

uniform sampler2D u_base_color_texture;          // sRGB texture: GL decodes it
uniform sampler2D u_metallic_roughness_texture;  // B metal, G rough
uniform sampler2D u_normal_texture;
uniform sampler2D u_occlusion_texture;           // R
uniform sampler2D u_emissive_texture;            // sRGB texture
uniform mat3 u_uv_transform[SLOTS];

uniform vec4 u_base_color;          // linear RGBA factor
uniform vec3 u_emissive;            // factor x strength
uniform float u_metallic;
uniform float u_roughness;
uniform float u_normal_scale;
uniform float u_occlusion_strength;
uniform float u_alpha_cutoff;

uniform vec3 u_camera_position;
uniform vec3 u_key_direction;       // towards the key light (the skin views' light)
uniform bool u_flat_color;          // wireframe overlay
uniform vec3 u_sky;                 // the simple light's ambient radiance from above and below
uniform vec3 u_ground;
uniform vec4 u_light_position[MAX_LIGHTS];   // world xyz, kind (LIGHT_*)
uniform vec4 u_light_direction[MAX_LIGHTS];  // world direction the light shines along, 1/range^2 (0: none)
uniform vec3 u_light_color[MAX_LIGHTS];      // colour x intensity
uniform vec2 u_light_cone[MAX_LIGHTS];       // spot: the cone's scale and offset on cos(angle)

layout(location = 0) out vec4 out_color;
#ifndef SHADOWS
#define SHADOWS 0
#endif
#ifndef SHADOW_LIGHT
#define SHADOW_LIGHT 0
#endif
#if SHADOWS
// The cast shadow (viewer/render/shadows.py): SHADOW_LIGHT is the index of the light it
// blocks, -1 the environment's light (an environment has no single direction: the key light
// placed with --key-light darkens it by the intensity).
uniform sampler2DShadow u_shadow_map;
uniform mat4 u_shadow_matrix;     // world -> the shadow map's [0, 1]^3
uniform float u_shadow_intensity;
uniform float u_shadow_offset;    // normal offset (world units): no acne where the light grazes
#include "shadow_pcf.glsl"
#endif
#ifndef LABELS
#define LABELS 0
#endif
#if LABELS
flat in int v_part;
in float v_view_depth;
layout(location = 1) out uint out_part;
layout(location = 2) out float out_depth;
#endif

bool has_texture(int slot) { return ((TEXTURES >> slot) & 1) != 0; }

vec2 slot_uv(int slot) {
    vec2 uv = ((UV1 >> slot) & 1) != 0 ? v_uv1 : v_uv;
    return (u_uv_transform[slot] * vec3(uv, 1.0)).xy;
}

vec4 sample_slot(sampler2D image, int slot, vec2 uv) {
    int mirror = (MIRROR >> (2 * slot)) & 3;
    if (mirror == 0) return texture(image, uv);
    vec2 folded = 1.0 - abs(mod(uv, 2.0) - 1.0);  // GL's MIRRORED_REPEAT
    return textureGrad(image, vec2((mirror & 1) != 0 ? folded.x : uv.x, (mirror & 2) != 0 ? folded.y : uv.y),
                       dFdx(uv), dFdy(uv));
}

// Karis's fit of the split-sum table (scale A, bias B), for the simple light (no table bound).
vec2 brdf_fit(float n_dot_v, float roughness) {
    vec4 r = roughness * vec4(-1.0, -0.0275, -0.572, 0.022) + vec4(1.0, 0.0425, 1.04, -0.04);
    float a004 = min(r.x * r.x, exp2(-9.28 * n_dot_v)) * r.x + r.y;
    return vec2(-1.04, 1.04) * a004 + r.zw;
}

vec3 sky_light(vec3 direction) { return mix(u_ground, u_sky, 0.5 + 0.5 * direction.y); }

float distribution_ggx(float n_dot_h, float alpha) {
    float a2 = alpha * alpha;
    float d = n_dot_h * n_dot_h * (a2 - 1.0) + 1.0;
    return a2 / (PI * d * d);
}

float visibility_smith_ggx_correlated(float n_dot_l, float n_dot_v, float alpha) {
    float a2 = alpha * alpha;
    float ggx_v = n_dot_l * sqrt(n_dot_v * n_dot_v * (1.0 - a2) + a2);
    float ggx_l = n_dot_v * sqrt(n_dot_l * n_dot_l * (1.0 - a2) + a2);
    return 0.5 / (ggx_v + ggx_l);
}

void main() {
#if LABELS
    out_part = uint(v_part);
    out_depth = v_view_depth;
#endif
    if (u_flat_color) {
        out_color = u_base_color * v_color;
        return;
    }
    vec3 view = normalize(u_camera_position - v_world_position);
    vec3 n = normalize(v_normal);
    if (SHADED == 0) {
        if (dot(n, view) < 0.0) n = -n;  // two-sided lighting for open meshes
        out_color = vec4(v_paint.rgb * (0.55 + 0.45 * max(dot(n, normalize(u_key_direction)), 0.0)), 1.0);
        return;
    }

    vec4 base = u_base_color * v_color;
    if (has_texture(SLOT_BASE_COLOR)) base *= sample_slot(u_base_color_texture, SLOT_BASE_COLOR, slot_uv(SLOT_BASE_COLOR));
    if (ALPHA_MODE == ALPHA_MASK) {
        if (base.a < u_alpha_cutoff) discard;
        base.a = 1.0;
    } else if (ALPHA_MODE == ALPHA_OPAQUE) {
        base.a = 1.0;
    }
    if (UNLIT != 0) {
        out_color = vec4(tone_map(base.rgb), base.a);
        return;
    }

    // The normal: back faces (drawn only for double-sided materials) flip the whole frame.
    float facing = gl_FrontFacing ? 1.0 : -1.0;
    vec3 geometric = n * facing;
    bool bumped = has_texture(SLOT_NORMAL);
    if (bumped) {
        vec2 uv = slot_uv(SLOT_NORMAL);
        vec3 t, b;
        if (HAS_TANGENTS != 0) {
            t = normalize(v_tangent.xyz - n * dot(n, v_tangent.xyz));
            b = cross(n, t) * (v_tangent.w < 0.0 ? -1.0 : 1.0);
        } else {
            // From screen-space derivatives: t along +u, b along -v (image up: glTF's v runs down).
            vec3 dp_dx = dFdx(v_world_position), dp_dy = dFdy(v_world_position);
            vec2 duv_dx = dFdx(uv), duv_dy = dFdy(uv);
            float det = duv_dx.x * duv_dy.y - duv_dy.x * duv_dx.y;
            det = abs(det) < 1e-20 ? 1e-20 : det;
            vec3 dp_du = (duv_dy.y * dp_dx - duv_dx.y * dp_dy) / det;
            vec3 dp_dv = (duv_dx.x * dp_dy - duv_dy.x * dp_dx) / det;
            t = dp_du - n * dot(n, dp_du);
            t = dot(t, t) > 0.0 ? normalize(t) : normalize(cross(n, abs(n.y) < 0.9 ? vec3(0, 1, 0) : vec3(1, 0, 0)));
            b = cross(n, t);
            if (dot(b, dp_dv) > 0.0) b = -b;
        }
        vec3 m = sample_slot(u_normal_texture, SLOT_NORMAL, uv).xyz * 2.0 - 1.0;
        m.xy *= u_normal_scale;
        n = normalize(mat3(t, b, n) * m);
    }
    n *= facing;

    float metallic = u_metallic, roughness = u_roughness;
    if (has_texture(SLOT_METALLIC_ROUGHNESS)) {
        vec4 texel = sample_slot(u_metallic_roughness_texture, SLOT_METALLIC_ROUGHNESS, slot_uv(SLOT_METALLIC_ROUGHNESS));
        metallic *= texel.b;
        roughness *= texel.g;
    }
    metallic = clamp(metallic, 0.0, 1.0);
    roughness = clamp(roughness, 0.0, 1.0);
    float occlusion = 1.0;
    if (has_texture(SLOT_OCCLUSION)) {
        float texel = sample_slot(u_occlusion_texture, SLOT_OCCLUSION, slot_uv(SLOT_OCCLUSION)).r;
        occlusion = 1.0 + u_occlusion_strength * (texel - 1.0);
    }
    vec3 emissive = u_emissive;
    if (has_texture(SLOT_EMISSIVE)) emissive *= sample_slot(u_emissive_texture, SLOT_EMISSIVE, slot_uv(SLOT_EMISSIVE)).rgb;

    vec3 diffuse_color = base.rgb * (0.96 * (1.0 - metallic));
    vec3 f0 = mix(vec3(0.04), base.rgb, metallic);
    vec3 n_dx = dFdx(n), n_dy = dFdy(n);
    float slope = max(dot(n_dx, n_dx), dot(n_dy, n_dy));
    float light_roughness = max(roughness, pow(clamp(slope, 0.0, 1.0), 0.333));
    float alpha = roughness * roughness + 0.0005 + 0.75 * sqrt(slope);
    float n_dot_v_signed = dot(n, view);
    float n_dot_v = abs(n_dot_v_signed) + 1e-7;

    vec2 split = ENVIRONMENT != 0 ? ibl_brdf(n_dot_v, roughness) : brdf_fit(n_dot_v, roughness);
    vec3 energy = 1.0 + f0 * (1.0 / (split.x + split.y) - 1.0);
    vec3 reflected = reflect(-view, n);
    vec3 irradiance, radiance;
    if (ENVIRONMENT != 0) {
        irradiance = ibl_diffuse(n);
        radiance = ibl_radiance(reflected, alpha, irradiance);  // unclamped, as Babylon's
    } else {
        irradiance = sky_light(n);
        radiance = mix(sky_light(reflected), irradiance, clamp(alpha, 0.0, 1.0));
    }
    float specular_occlusion = clamp((n_dot_v_signed + occlusion) * (n_dot_v_signed + occlusion) - 1.0 + occlusion, 0.0, 1.0);
    if (bumped) {
        float horizon = clamp(1.0 + 1.1 * dot(reflected, geometric), 0.0, 1.0);
        specular_occlusion *= horizon * horizon;
    }
    vec3 color = irradiance * diffuse_color * occlusion
               + radiance * (f0 * split.x + split.y) * energy * specular_occlusion;

#if SHADOWS
    float lit = shadow_lit(u_shadow_map, u_shadow_matrix * vec4(v_world_position + geometric * u_shadow_offset, 1.0));
    float shadowed = mix(1.0, lit, u_shadow_intensity);
#if SHADOW_LIGHT < 0
    color *= shadowed;
#endif
#endif
    float light_alpha = light_roughness * light_roughness + 0.0005;
    for (int i = 0; i < LIGHTS; ++i) {
        vec4 position = u_light_position[i];
        vec4 direction = u_light_direction[i];
        vec3 l = -direction.xyz;
        float attenuation = 1.0;
        if (int(position.w) != LIGHT_DIRECTIONAL) {
            vec3 offset = position.xyz - v_world_position;
            float distance2 = max(dot(offset, offset), 1e-8);
            l = offset * inversesqrt(distance2);
            float ratio = distance2 * direction.w;  // (d / range)^2
            attenuation = clamp(1.0 - ratio * ratio, 0.0, 1.0) / distance2;
            if (int(position.w) == LIGHT_SPOT) {
                float cone = clamp(dot(direction.xyz, -l) * u_light_cone[i].x + u_light_cone[i].y, 0.0, 1.0);
                attenuation *= cone * cone;
            }
        }
        float n_dot_l = dot(n, l);
#if SHADOWS && SHADOW_LIGHT >= 0
        if (i == SHADOW_LIGHT) attenuation *= shadowed;
#endif
        if (n_dot_l <= 0.0 || attenuation <= 0.0) continue;
        vec3 h = normalize(l + view);
        float v_dot_h = clamp(dot(view, h), 0.0, 1.0);
        vec3 fresnel = f0 + (1.0 - f0) * pow(1.0 - v_dot_h, 5.0);
        float specular = distribution_ggx(clamp(dot(n, h), 0.0, 1.0), light_alpha)
                       * visibility_smith_ggx_correlated(n_dot_l, n_dot_v, light_alpha);
        color += (diffuse_color / PI + fresnel * specular * energy) * (n_dot_l * attenuation) * u_light_color[i];
    }
    color += emissive;
    out_color = vec4(tone_map(max(color, 0.0)), base.a);  // Babylon clamps before its image processing
}
