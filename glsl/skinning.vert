#version 330 core
// Skinned mesh vertex shader. Injected #defines (see viewer/render/shaders.py):
//   SKINNING      one of SKINNING_CPU (vertices already skinned), SKINNING_UNIFORM_ARRAY,
//                 SKINNING_BONE_TEXTURE (viewer.render.renderer.SkinningMode, also injected)
//   BONE_COUNT    number of bone matrices (uniform array size)
//   INFLUENCES    4 or 8 joint influences per vertex
//   BONES_PER_ROW matrices per row of the bone texture (4 texels each)
//   SKINNING_DQ   1: dual-quaternion skinning (optional, default 0: linear blend skinning). Each
//                 bone's mat4 (uniform array or texture alike) then holds, as columns, its rotation
//                 quaternion, its dual part and its symmetric scale/shear (P00 P01 P02 P11, P12
//                 P22 0 0), packed on the CPU (viewer/model/dual_quaternions.py, which is also the
//                 CPU path's maths): the scale blended linearly, the quaternions as libigl's dqs blends them
//   INSTANCED     1: a crowd, one instance per character (optional, default 0): an instance
//                 draws copy in_instance_copy (per instance: the draw order may differ from the
//                 copies' order, blended crowds drawing back to front), reading its bones from
//                 texture rows in_instance_copy * BONES_PER_INSTANCE + joint (with
//                 SKINNING_BONE_TEXTURE) and its world matrix from the per-instance in_instance_world
//   BONES_PER_INSTANCE  matrices per instance in the bone texture (with INSTANCED)
//   MORPH_TARGETS morph targets morphed here, before skinning (optional, default 0: none, or
//                 the CPU morphed the vertices): their deltas in u_morph_texture (RGBA32F,
//                 MORPH_TEXTURE_WIDTH texels a row; vertex v, target t starts at texel
//                 (v * MORPH_TARGETS + t) * MORPH_TEXELS: its position delta, then with
//                 MORPH_NORMALS its normal delta, then with MORPH_TANGENTS its tangent's xyz
//                 delta), their weights packed four to a vec4
//   PAINT_NONE, PAINT_WEIGHTS, PAINT_BONE_MAP, PAINT_VERTEX  the values of u_paint (what colours
//                 the mesh): its materials; joint u_paint_joint's weight as a heatmap, or each
//                 vertex's dominant joint's colour, both from the joint/weight attributes here
//                 (viewer/render/paint.py computes the same colours in numpy); or in_paint, the
//                 colours numpy computed (CPU skinning, meshes without a skin, the weight check)
//   PICK_IDS      1: the ID pass (glsl/pick.frag, Renderer.pick): the same morph, skinning and
//                 placement, and only gl_Position (no normals, no paint) (optional, default 0)
//   SHADOW_PASS   1: the shadow pass (glsl/shadow.frag, viewer/render/shadows.py): as PICK_IDS,
//                 the same morph, skinning and placement, and v_world_position, which transform
//                 feedback captures once a frame for every shadow map to draw (default 0)
//   LABELS        1: the labelled draw (Renderer.render_labels, boneviewer synth): besides the
//                 colour, in_part (the labelled bone that most influences the vertex, plus one,
//                 computed in numpy) passed on flat, and the camera-space depth along the view
//                 axis, both written by skinning.frag to further render targets (default 0)
// Matrices arrive as row-major numpy bytes, which GLSL reads as their transpose: exactly what
// the column-vector products below need (the row-vector p @ F @ W @ V @ P).

in vec3 in_position;
in vec3 in_normal;
in vec4 in_tangent;   // xyz and handedness w (glTF TANGENT); absent: (0, 0, 0, 1), unused
in vec2 in_uv;        // TEXCOORD_0
in vec2 in_uv1;       // TEXCOORD_1 (absent: zeros)
in vec4 in_color;
in vec4 in_paint;
#if SKINNING != SKINNING_CPU
in ivec4 in_joints0;
in vec4 in_weights0;
#if INFLUENCES == 8
in ivec4 in_joints1;
in vec4 in_weights1;
#endif
#endif

#ifndef INSTANCED
#define INSTANCED 0
#endif
#ifndef PICK_IDS
#define PICK_IDS 0
#endif
#ifndef LABELS
#define LABELS 0
#endif
#ifndef SHADOW_PASS
#define SHADOW_PASS 0
#endif
#if LABELS
in int in_part;
flat out int v_part;      // flat: a pixel's part is one vertex's, never a blend of two bone numbers
out float v_view_depth;   // affine in view space, so the perspective-correct interpolation is exact
#endif
#if INSTANCED
in mat4 in_instance_world;
in int in_instance_copy;  // which copy's bones (gl_InstanceID is only the draw order)
#else
uniform mat4 u_world;
#endif
uniform mat4 u_view;
uniform mat4 u_projection;
uniform int u_paint;        // PAINT_*
uniform int u_paint_joint;  // PAINT_WEIGHTS: whose weights (-1: none)

// Blender's weight ramp: 0 blue, 0.25 cyan, 0.5 green, 0.75 yellow, 1 red (paint.heat_color).
vec3 heat_color(float weight) {
    float t = clamp(weight, 0.0, 1.0) * 4.0;
    return clamp(vec3(t - 2.0, t < 2.0 ? t : 4.0 - t, 2.0 - t), 0.0, 1.0);
}

// A stable colour per joint: hue, saturation and value from the R3 sequence (paint.bone_color).
vec3 bone_color(int joint) {
    vec3 hsv = fract(float(joint) * vec3(0.8191725, 0.6710436, 0.5497005) + 0.85);
    float saturation = 0.45 + 0.55 * hsv.y, value = 0.65 + 0.35 * hsv.z;
    vec3 k = clamp(abs(mod(hsv.x * 6.0 + vec3(0.0, 4.0, 2.0), 6.0) - 3.0) - 1.0, 0.0, 1.0);
    return value * (1.0 + saturation * (k - 1.0));
}

#if SKINNING == SKINNING_UNIFORM_ARRAY
uniform mat4 u_bones[BONE_COUNT];
mat4 bone_matrix(int j) { return u_bones[j]; }
#elif SKINNING == SKINNING_BONE_TEXTURE
uniform sampler2D u_bone_texture;
mat4 bone_matrix(int j) {
#if INSTANCED
    j += in_instance_copy * BONES_PER_INSTANCE;
#endif
    int x = (j % BONES_PER_ROW) * 4;
    int y = j / BONES_PER_ROW;
    // Four texels hold the four rows of the row-major matrix; as columns they form its
    // transpose, the same matrix the uniform array path gets.
    return mat4(texelFetch(u_bone_texture, ivec2(x, y), 0),
                texelFetch(u_bone_texture, ivec2(x + 1, y), 0),
                texelFetch(u_bone_texture, ivec2(x + 2, y), 0),
                texelFetch(u_bone_texture, ivec2(x + 3, y), 0));
}
#endif

#ifndef SKINNING_DQ
#define SKINNING_DQ 0
#endif
#if SKINNING != SKINNING_CPU && SKINNING_DQ
// One influence into the sums: a quaternion on the other hemisphere from the sum so far is
// added with its weight negated (q and -q are one rotation); the scale with the weight as is.
void dq_add(int joint, float weight, inout vec4 real, inout vec4 dual, inout vec4 scale0, inout vec4 scale1) {
    mat4 bone = bone_matrix(joint);
    float signed_weight = dot(real, bone[0]) < 0.0 ? -weight : weight;
    real += signed_weight * bone[0];
    dual += signed_weight * bone[1];
    scale0 += weight * bone[2];
    scale1 += weight * bone[3];
}

// The blend as one affine matrix (column vectors): the blended scale/shear, then the rotation
// of the normalized real part, then the translation libigl's dqs takes from the dual part.
mat4 dq_matrix(vec4 real, vec4 dual, vec4 scale0, vec4 scale1) {
    float len = length(real);
    vec4 c0 = real / len, ce = dual / len;
    vec3 d0 = c0.xyz, de = ce.xyz;
    vec3 t = 2.0 * (c0.w * de - ce.w * d0 + cross(d0, de));
    float x = c0.x, y = c0.y, z = c0.z, w = c0.w;
    mat3 rotation = mat3(1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y + w * z), 2.0 * (x * z - w * y),
                         2.0 * (x * y - w * z), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z + w * x),
                         2.0 * (x * z + w * y), 2.0 * (y * z - w * x), 1.0 - 2.0 * (x * x + y * y));
    mat3 scale = mat3(scale0.xyz, vec3(scale0.y, scale0.w, scale1.x), vec3(scale0.z, scale1.x, scale1.y));
    mat3 linear = rotation * scale;
    return mat4(vec4(linear[0], 0.0), vec4(linear[1], 0.0), vec4(linear[2], 0.0), vec4(t, 1.0));
}
#endif

#ifndef MORPH_TARGETS
#define MORPH_TARGETS 0
#endif
#ifndef MORPH_NORMALS
#define MORPH_NORMALS 0
#endif
#ifndef MORPH_TANGENTS
#define MORPH_TANGENTS 0
#endif
#if MORPH_TARGETS > 0
uniform sampler2D u_morph_texture;
uniform vec4 u_morph_weights[(MORPH_TARGETS + 3) / 4];
vec4 morph_texel(int index) {
    return texelFetch(u_morph_texture, ivec2(index % MORPH_TEXTURE_WIDTH, index / MORPH_TEXTURE_WIDTH), 0);
}
#endif

out vec3 v_world_position;
out vec3 v_normal;
out vec4 v_tangent;   // world-space tangent, handedness in w
out vec2 v_uv;
out vec2 v_uv1;
out vec4 v_color;
out vec4 v_paint;

void main() {
    vec3 position = in_position;
    vec3 normal = in_normal;
    vec3 tangent = in_tangent.xyz;
#if MORPH_TARGETS > 0
    // Morphing comes before skinning (glTF, Babylon); gl_VertexID is the vertex's index.
    for (int t = 0; t < MORPH_TARGETS; ++t) {
        float weight = u_morph_weights[t / 4][t % 4];
        if (weight != 0.0) {
            int texel = (gl_VertexID * MORPH_TARGETS + t) * MORPH_TEXELS;
            position += weight * morph_texel(texel).xyz;
#if MORPH_NORMALS
            normal += weight * morph_texel(texel + 1).xyz;
#endif
#if MORPH_TANGENTS
            tangent += weight * morph_texel(texel + 1 + MORPH_NORMALS).xyz;
#endif
        }
    }
#endif
#if INSTANCED
    mat4 world = in_instance_world;
#else
    mat4 world = u_world;
#endif
#if SKINNING != SKINNING_CPU && SKINNING_DQ
    vec4 real = vec4(0.0), dual = vec4(0.0), scale0 = vec4(0.0), scale1 = vec4(0.0);
    for (int k = 0; k < 4; ++k) {
        dq_add(in_joints0[k], in_weights0[k], real, dual, scale0, scale1);
    }
#if INFLUENCES == 8
    for (int k = 0; k < 4; ++k) {
        dq_add(in_joints1[k], in_weights1[k], real, dual, scale0, scale1);
    }
#endif
    mat4 model = world * dq_matrix(real, dual, scale0, scale1);
#elif SKINNING != SKINNING_CPU
    mat4 skin = in_weights0.x * bone_matrix(in_joints0.x)
              + in_weights0.y * bone_matrix(in_joints0.y)
              + in_weights0.z * bone_matrix(in_joints0.z)
              + in_weights0.w * bone_matrix(in_joints0.w);
#if INFLUENCES == 8
    skin += in_weights1.x * bone_matrix(in_joints1.x)
          + in_weights1.y * bone_matrix(in_joints1.y)
          + in_weights1.z * bone_matrix(in_joints1.z)
          + in_weights1.w * bone_matrix(in_joints1.w);
#endif
    mat4 model = world * skin;
#else
    mat4 model = world;
#endif
    vec4 world_position = model * vec4(position, 1.0);
#if !PICK_IDS && !SHADOW_PASS
    // Inverse transpose keeps normals perpendicular under non-uniform bone scale.
    v_normal = transpose(inverse(mat3(model))) * normal;
    // A tangent lies in the surface: it moves with the surface (no inverse transpose).
    v_tangent = vec4(mat3(model) * tangent, in_tangent.w);
    v_world_position = world_position.xyz;
    v_uv = in_uv;
    v_uv1 = in_uv1;
    v_color = in_color;
    v_paint = in_paint;
#if SKINNING != SKINNING_CPU
    if (u_paint == PAINT_WEIGHTS) {
        vec4 weight = in_weights0 * vec4(equal(in_joints0, ivec4(u_paint_joint)));
        float total = weight.x + weight.y + weight.z + weight.w;
#if INFLUENCES == 8
        weight = in_weights1 * vec4(equal(in_joints1, ivec4(u_paint_joint)));
        total += weight.x + weight.y + weight.z + weight.w;
#endif
        v_paint = vec4(heat_color(total), 1.0);
    } else if (u_paint == PAINT_BONE_MAP) {
        // The first of the largest weights, as numpy's argmax.
        int joint = in_joints0.x;
        float largest = in_weights0.x;
        for (int k = 1; k < 4; ++k) {
            if (in_weights0[k] > largest) { largest = in_weights0[k]; joint = in_joints0[k]; }
        }
#if INFLUENCES == 8
        for (int k = 0; k < 4; ++k) {
            if (in_weights1[k] > largest) { largest = in_weights1[k]; joint = in_joints1[k]; }
        }
#endif
        v_paint = vec4(bone_color(joint), 1.0);
    }
#endif
#endif  // !PICK_IDS && !SHADOW_PASS
#if SHADOW_PASS
    v_world_position = world_position.xyz;  // captured once per frame, drawn into each shadow map
#endif
#if LABELS
    v_part = in_part;
    v_view_depth = -(u_view * world_position).z;  // GL's camera looks down -z
#endif
    gl_Position = u_projection * u_view * world_position;
}
