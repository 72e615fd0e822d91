/* viewer.model._ckernel: the compiled skeleton kernel (plain C over the buffer protocol).
 *
 * A second implementation of viewer/model/batch.py's UpdateKernel.run() and of the validate-and-
 * scatter step of Skeleton.set_pose(); the numpy code stays the reference and the fallback
 * (viewer/model/native.py decides which one runs). No numpy headers: arrays arrive through the
 * buffer protocol, so the module builds with a C compiler and the Python headers alone.
 *
 * Conventions are the project's (DESIGN.md): row-major 4x4 matrices, translation in row 3,
 * absolute = local @ parent.absolute, final = absolute_inverse_bind @ absolute; quaternions
 * (x, y, z, w); composition is Babylon's Matrix.ComposeToRef, as transforms.compose.
 *
 * Kernel(need, position, quaternion, scaling, local, absolute, final, inverse_bind, parents,
 *        upload, dst, src).run()
 *     One parents-first pass over rows [0, total): compose flagged rows (and clear the flag),
 *     absolute, final, and the float32 upload row. parents[i] < i (rows in depth order per
 *     skeleton, a group's members one after another). Upload: dst/src None means row i is
 *     slot i; otherwise upload[dst[k]] = final[src[k]] (permuted or partial orders).
 *
 * PoseScatter(n, need_decompose, need_compose, position, quaternion, scaling, dst, src, limit)
 *     .write(positions, rotation_quaternions, scalings) -> 1 when validated and written, 0 when all
 *     three are None, -1 when declined (not C-contiguous float64 (n, w) arrays, a NaN, an
 *     infinity or a magnitude above ``limit`` (viewer/model/checks.py's MAX_MAGNITUDE), a zero
 *     quaternion, or a row whose TRS must be decomposed first): nothing has
 *     been written then, and the caller runs the numpy path, which raises the error message.
 *     Rows: target[dst[k]] = input[src[k]]; dst/src None means target[i] = input[i], i < n.
 *
 * Both release the GIL around their loops.
 *
 * parse_rows(text, out, columns) -> -1, or the 0-based index of the first bad row
 *     viewer/bvh/parse.py's MOTION rows: ``text`` (a str, rows joined by newlines) read with
 *     strtod into ``out`` (a C-contiguous float64 buffer of rows * columns), as numpy's
 *     fromstring reads them (correctly rounded, so bit-identical; plain decimals of up to 2^53
 *     by Clinger's fast path, the rest by strtod). A row is bad when it does not
 *     hold exactly ``columns`` finite decimal numbers; nothing after it is read.
 *
 * skin_points(positions, joints, weights, matrices, out) -> 0, or -1 when declined
 *     viewer/model/mesh.py's skin_positions: each vertex (float32 or float64 (V, 3)) through the weighted sum
 *     of its joints' matrices (int32 joints and float32 weights (V, K), float64 matrices
 *     (J, 4, 4)) into float64 out (V, 3), in _skin_positions' order of operations (the blend
 *     summed influence by influence from zero, then x, y, z and the translation row). Declined
 *     (nothing written) for another shape or type, or a joint index outside 0..J-1.
 *
 * skin_points_dq(positions, joints, weights, packed, out) -> 0, or -1 when declined
 *     skin_positions' dual-quaternion branch (viewer/model/dual_quaternions.py, dq_blend, the
 *     reference, equal within rounding): packed (J, 4, 4) float64 per bone is its rotation
 *     quaternion, its dual part and its symmetric scale/shear (bone_dual_quaternions); per
 *     vertex the scale blended linearly and the quaternions as libigl's igl::dqs blends them
 *     (a weight negated where the quaternion's dot with the sum so far is negative; both sums
 *     divided by the real sum's length). Declined as skin_points declines.
 *
 * dq_bones(matrices, out, general) -> how many bones are left to numpy, or -1 when declined
 *     viewer/model/dual_quaternions.py's reference_bone_dual_quaternions, within rounding:
 *     float64 out (J, 4, 4) in its packing; bones with orthogonal rows the short way (the
 *     rotation is the rows normalized, the scale their lengths), the others by the polar factor
 *     from Newton's iteration (numpy takes it from an SVD: the same factor, it is unique); both
 *     negated where the rotation mirrors. A singular bone (no polar factor) is flagged in bool
 *     general (J,) and counted, for numpy. matrices: float32 or float64 (J, 4, 4). Declined
 *     (-1, nothing written) for another shape or type.
 *
 * LinkSync(node_rows, slots, position, quaternion, scaling, need_compose, need_decompose,
 *          linked_version).sync(table_position, table_quaternion, table_scaling, table_version)
 *     BoneBatch.sync_linked() for the bones linked to the nodes of one NodeTable: for each pair k
 *     whose node's version (table_version[node_rows[k]]) differs from linked_version[slots[k]],
 *     copy the node's TRS row into bone row slots[k], flag it for composing, record the version.
 *     Returns how many rows were copied. The table's arrays are passed on every call (a table
 *     grows by replacing them).
 *
 * blend_rows(out, base, values, refs, weights, driven, additive, rows, n, width, rotation) -> 0, or -1 declined
 *     viewer/motion/mixer.py's blend of one path (Babylon.js's late animation bindings) for n rows of `width`
 *     numbers: `values` and `refs` are tuples of A float64 (n, width) buffers (an action's sample, and for an
 *     additive action its reference: the reference value for vectors, its conjugate for rotations), `weights`
 *     float64 (A,), `driven` bool (A, n) (action a drives row r), `additive` bool (A,); out (n, width) gets the
 *     blend over `base`, rows (n,) bool is set where some action drives the row. The arithmetic is
 *     Mixer._blend's numpy, operation for operation (libm's sin and acos may differ from numpy's in the last
 *     bit). Declined (nothing written) for more than 64 actions.
 *
 * layer_rows(out, values, index, rows, n, m, width, weight, additive, rotation) -> 0, or -1 declined
 *     viewer/motion/mixer.py's _apply_layer for m tracks of one path: row index[k] of out (n, width) takes
 *     values[k] (m, width): additive, out + values * weight (rotations out * values, slerped from out by the
 *     weight unless it is 1); override, values (blended from out by the weight unless it is 1; slerp for
 *     rotations); rows[index[k]] is set. Declined (nothing written) for an index outside 0..n-1.
 *
 * Plan(n, K, base, out, actions, driven, additive, layers, table, rows, morph).run(times, weights, layer_time,
 *                                                                                  layer_weights)
 *     viewer/motion/mixer.py's whole step for one structure of the mix (made again when the running actions, their
 *     clips, additive references or masks, the layers or the layout change), run with the actions' sample times
 *     and weights (A floats each) and the layers' time and weights: every action's channel batches (`actions`:
 *     per action ((Sampler, path 0..3), ...), its pose buffers (T, R, S, M) and for an additive one its reference)
 *     sampled into its buffers; the blend of blend_rows, path by path, over the rows written (the others hold
 *     `base`, copied into `out` once); each layer's tracks as layer_rows applies them (a layer's mask, a bool
 *     (n,) array, leaves rows out); the rows marked in `rows` (3 bool (n,)) below the table's capacity copied
 *     into the NodeTable's arrays (`table`: (position, quaternion, scaling, version, capacity) or None), each
 *     copied row's version bumped once; and each morph block ((view of out's M, (mesh, ...))) given to its
 *     meshes' morph_targets as pose.set_weights does (a new array each, the version bumped). At most 64 actions and 64
 *     layers. Linear rotation keys: the angle between two keys is computed once, by slerp's own operations;
 *     the blend's slerps take their two sines from one sincos (within a few ulps of blend_rows').
 *     .watch(actions, stamps, names, running, layers, layer_stamps, layer_names) records the mix the plan is
 *     for: every action (in the mixer's dict order) with the values of `names` (attribute names; a tuple of
 *     names is a path, clip.keys_version), the running actions (in blend order), the layers that apply with
 *     theirs. .step(actions dict, layers, clock) -> False, nothing done, when the actions or the layers that
 *     apply (tracks, not muted, weight > 0) are not those any more; else reads each running action's sample
 *     time (its _time in [0, duration], a repeat wrapped as Python's %, else sample_time()) and weight
 *     (_weight, or effective_weight(clock) while it fades) and each layer's weight, runs the step, True.
 *
 * Sampler(times, values, rows, width, mode, rotation)
 *     One animation channel batch (viewer/model/animation.py's _ChannelBatch): `channels` channels
 *     sharing keyframe times, interpolation (mode 0 LINEAR, 1 STEP, 2 CUBICSPLINE) and path
 *     (width 3, or 4 with rotation=1: slerp, and normalized splines). values: (keys, channels,
 *     width), CUBICSPLINE (keys, 3, channels, width) as (in-tangent, value, out-tangent).
 *     .sample(t, out) writes the (channels, width) values at t into out;
 *     .apply(t, target, version) writes them into target rows rows[c] of a NodeTable array and
 *     bumps version[rows[c]]. The arithmetic is _ChannelBatch.sample's, operation for operation
 *     (tests/test_animation_batch.py states where libm makes it differ).
 * spring_step(plan, world, position, quaternion, scaling, state, out, dt) -> 0, or -1 when declined
 *     viewer/motion/springs.py's SpringBones.update (the numpy reference, three-vrm-springbone 3.5's
 *     step) for all joints at once. The nodes it reads are K slots, parents first: float64
 *     position (K, 3), quaternion (K, 4), scaling (K, 3) as the table holds them (every slot's
 *     ancestors among the slots); world (K, 12) scratch, where the step puts their world matrices
 *     (3 x 4, row-major, column vectors) as three.js's matrixWorld holds them. ``plan`` is a
 *     tuple of int32 and float64 buffers made by SpringPlan (springs.py) when the joints change:
 *     parent (K,), joints (J, 3) bone/child/center slots, params (J, 20) stiffness, gravity
 *     power, drag, hit radius, gravity dir (3), initial rotation (4), initial child (3), axis
 *     (3), the initial local's 3x3 times axis normalized (3); initial_local (J, 12); collider
 *     CSR (J + 1,) into refs (R,); colliders: slot and kind (C, 2) int32 (0 sphere, 1 capsule,
 *     2 plane; +4 inside) and data (C, 10) offset, radius, tail, normal; descendants CSR (J + 1,)
 *     into slots (D,). state (J, 6) tail and prev in/out; out (J, 4) the new rotations.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Bumped whenever the interface or the arithmetic changes: viewer/model/native.py refuses a
 * module built from another version (a stale build in a checkout) and uses numpy instead. */
#define KERNEL_VERSION 12

/* --- buffers ----------------------------------------------------------------------------- */

static char
format_char(const Py_buffer *view)
{
    const char *f = view->format ? view->format : "B";
    if (*f == '@' || *f == '=' || *f == '<')
        f++;
    if (f[0] == '\0' || f[1] != '\0')
        return 0;
    return f[0];
}

/* Acquire a C-contiguous buffer of `count` items of kind 'd' (float64), 'f' (float32),
 * '?' (bool) or 'i' (int64). Sets a Python error and returns -1 when it does not fit. */
static int
acquire(PyObject *obj, Py_buffer *view, char kind, Py_ssize_t count, int writable, const char *name)
{
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, view, flags) < 0)
        return -1;
    char c = format_char(view);
    int ok;
    switch (kind) {
    case 'd': ok = c == 'd' && view->itemsize == 8; break;
    case 'f': ok = c == 'f' && view->itemsize == 4; break;
    case '?': ok = c == '?' && view->itemsize == 1; break;
    default: ok = (c == 'l' || c == 'q') && view->itemsize == 8; break;
    }
    if (!ok || view->len != count * view->itemsize) {
        PyErr_Format(PyExc_ValueError, "%s: expected %zd items of kind '%c', got format %s, %zd bytes",
                     name, count, kind, view->format ? view->format : "B", view->len);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

/* --- maths ------------------------------------------------------------------------------- */

/* Babylon's ComposeToRef, term for term as viewer/model/transforms.compose. */
static inline void
compose(double *m, const double *s, const double *q, const double *p)
{
    double x = q[0], y = q[1], z = q[2], w = q[3];
    double x2 = x + x, y2 = y + y, z2 = z + z;
    double xx = x * x2, xy = x * y2, xz = x * z2;
    double yy = y * y2, yz = y * z2, zz = z * z2;
    double wx = w * x2, wy = w * y2, wz = w * z2;
    m[0] = (1.0 - (yy + zz)) * s[0];
    m[1] = (xy + wz) * s[0];
    m[2] = (xz - wy) * s[0];
    m[3] = 0.0;
    m[4] = (xy - wz) * s[1];
    m[5] = (1.0 - (xx + zz)) * s[1];
    m[6] = (yz + wx) * s[1];
    m[7] = 0.0;
    m[8] = (xz + wy) * s[2];
    m[9] = (yz - wx) * s[2];
    m[10] = (1.0 - (xx + yy)) * s[2];
    m[11] = 0.0;
    m[12] = p[0];
    m[13] = p[1];
    m[14] = p[2];
    m[15] = 1.0;
}

/* out = a @ b (row-major 4x4): row r of out is 0 + a[r,0] b[0] + a[r,1] b[1] + a[r,2] b[2] + a[r,3] b[3],
 * summed left to right (the same order as the scalar formula), four columns at once where the
 * compiler has vectors; out must not alias a or b. The leading +0 is what a BLAS product does
 * (its sums start from +0): an all-zero sum is +0, never -0, as in numpy's matmul. */
#if defined(__GNUC__)
typedef double row4 __attribute__((vector_size(32), aligned(8)));
static inline void
multiply(double *restrict out, const double *restrict a, const double *restrict b)
{
    row4 b0, b1, b2, b3;
    memcpy(&b0, b, 32);
    memcpy(&b1, b + 4, 32);
    memcpy(&b2, b + 8, 32);
    memcpy(&b3, b + 12, 32);
    for (int r = 0; r < 4; r++) {
        const double *ar = a + 4 * r;
        const row4 zero = {0.0, 0.0, 0.0, 0.0};
        row4 o = zero + ar[0] * b0 + ar[1] * b1 + ar[2] * b2 + ar[3] * b3;
        memcpy(out + 4 * r, &o, 32);
    }
}
#else
static inline void
multiply(double *restrict out, const double *restrict a, const double *restrict b)
{
    for (int r = 0; r < 4; r++) {
        const double a0 = a[4 * r], a1 = a[4 * r + 1], a2 = a[4 * r + 2], a3 = a[4 * r + 3];
        for (int c = 0; c < 4; c++)
            out[4 * r + c] = 0.0 + a0 * b[c] + a1 * b[4 + c] + a2 * b[8 + c] + a3 * b[12 + c];
    }
}
#endif

/* x86-64 with GCC: an AVX2 copy of the pass beside the baseline one, picked at load time
 * (-ffp-contract=off keeps FMA out: both give the same bits). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define PASS_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define PASS_CLONES
#endif

/* --- Kernel ------------------------------------------------------------------------------ */

enum { K_NEED, K_POSITION, K_QUATERNION, K_SCALING, K_LOCAL, K_ABSOLUTE, K_FINAL, K_INVERSE_BIND,
       K_PARENTS, K_UPLOAD, K_DST, K_SRC, K_COUNT };

typedef struct {
    PyObject_HEAD
    Py_buffer views[K_COUNT];
    int held[K_COUNT];
    Py_ssize_t total;
    Py_ssize_t upload_rows;
    Py_ssize_t pairs;  /* -1: upload row i is slot i */
} Kernel;

static void
Kernel_dealloc(Kernel *self)
{
    for (int i = 0; i < K_COUNT; i++)
        if (self->held[i])
            PyBuffer_Release(&self->views[i]);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int
Kernel_init(Kernel *self, PyObject *args, PyObject *kwargs)
{
    static const char *names[] = {"need", "position", "quaternion", "scaling", "local", "absolute", "final",
                                  "inverse_bind", "parents", "upload", "dst", "src"};
    PyObject *objs[K_COUNT];
    if (!PyArg_ParseTuple(args, "OOOOOOOOOOOO:Kernel", &objs[0], &objs[1], &objs[2], &objs[3], &objs[4],
                          &objs[5], &objs[6], &objs[7], &objs[8], &objs[9], &objs[10], &objs[11]))
        return -1;
    for (int i = 0; i < K_COUNT; i++)
        if (self->held[i]) {
            PyBuffer_Release(&self->views[i]);
            self->held[i] = 0;
        }
    /* total from the flags array */
    Py_buffer *v = self->views;
    if (PyObject_GetBuffer(objs[K_NEED], &v[K_NEED], PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | PyBUF_WRITABLE) < 0)
        return -1;
    self->held[K_NEED] = 1;
    Py_ssize_t t = v[K_NEED].len;
    PyBuffer_Release(&v[K_NEED]);
    self->held[K_NEED] = 0;
    self->total = t;
    const struct { int index; char kind; Py_ssize_t per_row; int writable; } spec[] = {
        {K_NEED, '?', 1, 1}, {K_POSITION, 'd', 3, 0}, {K_QUATERNION, 'd', 4, 0}, {K_SCALING, 'd', 3, 0},
        {K_LOCAL, 'd', 16, 1}, {K_ABSOLUTE, 'd', 16, 1}, {K_FINAL, 'd', 16, 1}, {K_INVERSE_BIND, 'd', 16, 0},
        {K_PARENTS, 'i', 1, 0},
    };
    for (size_t k = 0; k < sizeof spec / sizeof spec[0]; k++) {
        if (acquire(objs[spec[k].index], &v[spec[k].index], spec[k].kind, t * spec[k].per_row, spec[k].writable,
                    names[spec[k].index]) < 0)
            return -1;
        self->held[spec[k].index] = 1;
    }
    if (PyObject_GetBuffer(objs[K_UPLOAD], &v[K_UPLOAD], PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | PyBUF_WRITABLE) < 0)
        return -1;
    self->held[K_UPLOAD] = 1;
    if (format_char(&v[K_UPLOAD]) != 'f' || v[K_UPLOAD].itemsize != 4 || v[K_UPLOAD].len % 64) {
        PyErr_SetString(PyExc_ValueError, "upload: expected float32 (rows, 4, 4)");
        return -1;
    }
    self->upload_rows = v[K_UPLOAD].len / 64;
    const int64_t *parents = v[K_PARENTS].buf;
    for (Py_ssize_t i = 0; i < t; i++)
        if (parents[i] < -1 || parents[i] >= i) {
            PyErr_Format(PyExc_ValueError, "parents: row %zd has parent %lld (rows must come parents first)", i,
                         (long long)parents[i]);
            return -1;
        }
    if (objs[K_DST] == Py_None && objs[K_SRC] == Py_None) {
        if (self->upload_rows < t) {
            PyErr_SetString(PyExc_ValueError, "upload: fewer rows than slots");
            return -1;
        }
        self->pairs = -1;
        return 0;
    }
    if (PyObject_GetBuffer(objs[K_DST], &v[K_DST], PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        return -1;
    self->held[K_DST] = 1;
    Py_ssize_t pairs = v[K_DST].len / 8;
    PyBuffer_Release(&v[K_DST]);
    self->held[K_DST] = 0;
    if (acquire(objs[K_DST], &v[K_DST], 'i', pairs, 0, "dst") < 0)
        return -1;
    self->held[K_DST] = 1;
    if (acquire(objs[K_SRC], &v[K_SRC], 'i', pairs, 0, "src") < 0)
        return -1;
    self->held[K_SRC] = 1;
    const int64_t *dst = v[K_DST].buf, *src = v[K_SRC].buf;
    for (Py_ssize_t k = 0; k < pairs; k++)
        if (dst[k] < 0 || dst[k] >= self->upload_rows || src[k] < 0 || src[k] >= t) {
            PyErr_Format(PyExc_ValueError, "upload pair %zd (%lld <- %lld) out of range", k, (long long)dst[k],
                         (long long)src[k]);
            return -1;
        }
    self->pairs = pairs;
    return 0;
}

PASS_CLONES static void
kernel_pass(Kernel *self)
{
    Py_buffer *v = self->views;
    const Py_ssize_t t = self->total;
    char *need = v[K_NEED].buf;
    const double *position = v[K_POSITION].buf, *quaternion = v[K_QUATERNION].buf, *scaling = v[K_SCALING].buf;
    double *local = v[K_LOCAL].buf, *absolute = v[K_ABSOLUTE].buf, *final = v[K_FINAL].buf;
    const double *inverse_bind = v[K_INVERSE_BIND].buf;
    const int64_t *parents = v[K_PARENTS].buf;
    float *upload = v[K_UPLOAD].buf;
    const int same = self->pairs < 0;
    for (Py_ssize_t i = 0; i < t; i++) {
        double *l = local + 16 * i, *a = absolute + 16 * i, *f = final + 16 * i;
        if (need[i]) {
            compose(l, scaling + 3 * i, quaternion + 4 * i, position + 3 * i);
            need[i] = 0;
        }
        const int64_t p = parents[i];
        if (p < 0)
            memcpy(a, l, 16 * sizeof(double));
        else
            multiply(a, l, absolute + 16 * p);
        multiply(f, inverse_bind + 16 * i, a);
        if (same) {
            float *u = upload + 16 * i;
            for (int k = 0; k < 16; k++)
                u[k] = (float)f[k];
        }
    }
    if (!same) {
        const int64_t *dst = v[K_DST].buf, *src = v[K_SRC].buf;
        for (Py_ssize_t k = 0; k < self->pairs; k++) {
            float *u = upload + 16 * dst[k];
            const double *f = final + 16 * src[k];
            for (int j = 0; j < 16; j++)
                u[j] = (float)f[j];
        }
    }
}

static PyObject *
Kernel_run(Kernel *self, PyObject *Py_UNUSED(ignored))
{
    if (!self->held[K_PARENTS]) {
        PyErr_SetString(PyExc_RuntimeError, "Kernel was not initialised");
        return NULL;
    }
    if (self->total < 64) {  /* below this, releasing and taking back the GIL costs more than the pass */
        kernel_pass(self);
    } else {
        Py_BEGIN_ALLOW_THREADS
        kernel_pass(self);
        Py_END_ALLOW_THREADS
    }
    Py_RETURN_NONE;
}

static PyMethodDef Kernel_methods[] = {
    {"run", (PyCFunction)Kernel_run, METH_NOARGS, "One parents-first pass: compose, absolute, final, upload."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject KernelType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "viewer.model._ckernel.Kernel",
    .tp_basicsize = sizeof(Kernel),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The skeleton update over fixed arrays (see the module's docstring).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Kernel_init,
    .tp_dealloc = (destructor)Kernel_dealloc,
    .tp_methods = Kernel_methods,
};

/* --- PoseScatter ------------------------------------------------------------------------- */

enum { P_NEED_DECOMPOSE, P_NEED_COMPOSE, P_POSITION, P_QUATERNION, P_SCALING, P_DST, P_SRC, P_COUNT };

typedef struct {
    PyObject_HEAD
    Py_buffer views[P_COUNT];
    int held[P_COUNT];
    Py_ssize_t n;
    Py_ssize_t pairs;  /* -1: target row i is input row i */
    double limit;      /* the largest magnitude a value may have (NaN fails the comparison) */
} PoseScatter;

static void
PoseScatter_dealloc(PoseScatter *self)
{
    for (int i = 0; i < P_COUNT; i++)
        if (self->held[i])
            PyBuffer_Release(&self->views[i]);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int
PoseScatter_init(PoseScatter *self, PyObject *args, PyObject *kwargs)
{
    Py_ssize_t n;
    PyObject *objs[P_COUNT];
    double limit;
    if (!PyArg_ParseTuple(args, "nOOOOOOOd:PoseScatter", &n, &objs[0], &objs[1], &objs[2], &objs[3], &objs[4],
                          &objs[5], &objs[6], &limit))
        return -1;
    self->limit = limit;
    for (int i = 0; i < P_COUNT; i++)
        if (self->held[i]) {
            PyBuffer_Release(&self->views[i]);
            self->held[i] = 0;
        }
    self->n = n;
    const struct { int index; char kind; Py_ssize_t per_row; const char *name; } spec[] = {
        {P_NEED_DECOMPOSE, '?', 1, "need_decompose"}, {P_NEED_COMPOSE, '?', 1, "need_compose"},
        {P_POSITION, 'd', 3, "position"}, {P_QUATERNION, 'd', 4, "quaternion"}, {P_SCALING, 'd', 3, "scaling"},
    };
    for (size_t k = 0; k < sizeof spec / sizeof spec[0]; k++) {
        if (acquire(objs[spec[k].index], &self->views[spec[k].index], spec[k].kind, n * spec[k].per_row, 1,
                    spec[k].name) < 0)
            return -1;
        self->held[spec[k].index] = 1;
    }
    if (objs[P_DST] == Py_None && objs[P_SRC] == Py_None) {
        self->pairs = -1;
        return 0;
    }
    Py_buffer probe;
    if (PyObject_GetBuffer(objs[P_DST], &probe, PyBUF_C_CONTIGUOUS) < 0)
        return -1;
    Py_ssize_t pairs = probe.len / 8;
    PyBuffer_Release(&probe);
    if (acquire(objs[P_DST], &self->views[P_DST], 'i', pairs, 0, "dst") < 0)
        return -1;
    self->held[P_DST] = 1;
    if (acquire(objs[P_SRC], &self->views[P_SRC], 'i', pairs, 0, "src") < 0)
        return -1;
    self->held[P_SRC] = 1;
    const int64_t *dst = self->views[P_DST].buf, *src = self->views[P_SRC].buf;
    for (Py_ssize_t k = 0; k < pairs; k++)
        if (dst[k] < 0 || dst[k] >= n || src[k] < 0 || src[k] >= n) {
            PyErr_Format(PyExc_ValueError, "pose pair %zd (%lld <- %lld) out of range", k, (long long)dst[k],
                         (long long)src[k]);
            return -1;
        }
    self->pairs = pairs;
    return 0;
}

/* 1 when every value is within +-limit (so finite) and, for quaternions, no row is all zeros. */
static int
valid_rows(const double *values, Py_ssize_t n, int width, double limit)
{
    const Py_ssize_t count = n * width;
    for (Py_ssize_t k = 0; k < count; k++)
        if (!(fabs(values[k]) <= limit))
            return 0;
    if (width == 4)
        for (Py_ssize_t i = 0; i < n; i++) {
            const double *q = values + 4 * i;
            if (q[0] == 0.0 && q[1] == 0.0 && q[2] == 0.0 && q[3] == 0.0)
                return 0;
        }
    return 1;
}

static PyObject *
PoseScatter_write(PoseScatter *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "write(positions, rotation_quaternions, scalings)");
        return NULL;
    }
    PyObject *const *inputs = args;
    if (!self->held[P_SCALING]) {
        PyErr_SetString(PyExc_RuntimeError, "PoseScatter was not initialised");
        return NULL;
    }
    static const int widths[3] = {3, 4, 3};
    Py_buffer views[3];
    int held[3] = {0, 0, 0}, given = 0, accepted = 1;
    const Py_ssize_t n = self->n;
    for (int j = 0; j < 3 && accepted; j++) {
        if (inputs[j] == Py_None)
            continue;
        given = 1;
        if (!PyObject_CheckBuffer(inputs[j])
            || PyObject_GetBuffer(inputs[j], &views[j], PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
            PyErr_Clear();
            accepted = 0;
            break;
        }
        held[j] = 1;
        if (format_char(&views[j]) != 'd' || views[j].itemsize != 8 || views[j].ndim != 2
            || views[j].shape[0] != n || views[j].shape[1] != widths[j])
            accepted = 0;
    }
    if (accepted && given) {
        const char *need_decompose = self->views[P_NEED_DECOMPOSE].buf;
        Py_BEGIN_ALLOW_THREADS
        if (memchr(need_decompose, 1, (size_t)n) != NULL)
            accepted = 0;  /* the numpy path decomposes those rows first */
        for (int j = 0; j < 3 && accepted; j++)
            if (held[j] && !valid_rows(views[j].buf, n, widths[j], self->limit))
                accepted = 0;
        if (accepted) {
            char *need = self->views[P_NEED_COMPOSE].buf;
            const int64_t *dst = self->held[P_DST] ? self->views[P_DST].buf : NULL;
            const int64_t *src = self->held[P_SRC] ? self->views[P_SRC].buf : NULL;
            for (int j = 0; j < 3; j++) {
                if (!held[j])
                    continue;
                const int w = widths[j];
                const double *in = views[j].buf;
                double *target = self->views[P_POSITION + j].buf;
                if (self->pairs < 0)
                    memcpy(target, in, (size_t)(n * w) * sizeof(double));
                else
                    for (Py_ssize_t k = 0; k < self->pairs; k++)
                        memcpy(target + w * dst[k], in + w * src[k], (size_t)w * sizeof(double));
            }
            if (self->pairs < 0)
                memset(need, 1, (size_t)n);
            else
                for (Py_ssize_t k = 0; k < self->pairs; k++)
                    need[dst[k]] = 1;
        }
        Py_END_ALLOW_THREADS
    }
    for (int j = 0; j < 3; j++)
        if (held[j])
            PyBuffer_Release(&views[j]);
    return PyLong_FromLong(!given ? 0 : accepted ? 1 : -1);
}

static PyMethodDef PoseScatter_methods[] = {
    {"write", (PyCFunction)(void (*)(void))PoseScatter_write, METH_FASTCALL,
     "write(positions, rotation_quaternions, scalings) -> 1 written, 0 nothing given, -1 declined."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject PoseScatterType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "viewer.model._ckernel.PoseScatter",
    .tp_basicsize = sizeof(PoseScatter),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "set_pose's validate and scatter over fixed arrays (see the module's docstring).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)PoseScatter_init,
    .tp_dealloc = (destructor)PoseScatter_dealloc,
    .tp_methods = PoseScatter_methods,
};

/* --- LinkSync ---------------------------------------------------------------------------- */

enum { L_NODE_ROWS, L_SLOTS, L_POSITION, L_QUATERNION, L_SCALING, L_NEED_COMPOSE, L_NEED_DECOMPOSE, L_VERSION,
       L_COUNT };

typedef struct {
    PyObject_HEAD
    Py_buffer views[L_COUNT];
    int held[L_COUNT];
    Py_ssize_t pairs;
    int64_t max_row;  /* the largest node row: a table must have more rows than this */
} LinkSync;

static void
LinkSync_dealloc(LinkSync *self)
{
    for (int i = 0; i < L_COUNT; i++)
        if (self->held[i])
            PyBuffer_Release(&self->views[i]);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static Py_ssize_t
int64_count(PyObject *obj)
{
    Py_buffer probe;
    if (PyObject_GetBuffer(obj, &probe, PyBUF_C_CONTIGUOUS) < 0)
        return -1;
    Py_ssize_t count = probe.len / 8;
    PyBuffer_Release(&probe);
    return count;
}

static int
LinkSync_init(LinkSync *self, PyObject *args, PyObject *kwargs)
{
    PyObject *objs[L_COUNT];
    if (!PyArg_ParseTuple(args, "OOOOOOOO:LinkSync", &objs[0], &objs[1], &objs[2], &objs[3], &objs[4], &objs[5],
                          &objs[6], &objs[7]))
        return -1;
    for (int i = 0; i < L_COUNT; i++)
        if (self->held[i]) {
            PyBuffer_Release(&self->views[i]);
            self->held[i] = 0;
        }
    Py_ssize_t pairs = int64_count(objs[L_NODE_ROWS]);
    Py_ssize_t n = int64_count(objs[L_VERSION]);  /* bone rows, from linked_version */
    if (pairs < 0 || n < 0)
        return -1;
    const struct { int index; char kind; Py_ssize_t count; int writable; const char *name; } spec[] = {
        {L_NODE_ROWS, 'i', pairs, 0, "node_rows"}, {L_SLOTS, 'i', pairs, 0, "slots"},
        {L_POSITION, 'd', 3 * n, 1, "position"}, {L_QUATERNION, 'd', 4 * n, 1, "quaternion"},
        {L_SCALING, 'd', 3 * n, 1, "scaling"}, {L_NEED_COMPOSE, '?', n, 1, "need_compose"},
        {L_NEED_DECOMPOSE, '?', n, 1, "need_decompose"}, {L_VERSION, 'i', n, 1, "linked_version"},
    };
    for (size_t k = 0; k < sizeof spec / sizeof spec[0]; k++) {
        if (acquire(objs[spec[k].index], &self->views[spec[k].index], spec[k].kind, spec[k].count,
                    spec[k].writable, spec[k].name) < 0)
            return -1;
        self->held[spec[k].index] = 1;
    }
    const int64_t *rows = self->views[L_NODE_ROWS].buf, *slots = self->views[L_SLOTS].buf;
    self->max_row = -1;
    for (Py_ssize_t k = 0; k < pairs; k++) {
        if (rows[k] < 0 || slots[k] < 0 || slots[k] >= n) {
            PyErr_Format(PyExc_ValueError, "link %zd (node row %lld, slot %lld) out of range", k, (long long)rows[k],
                         (long long)slots[k]);
            return -1;
        }
        if (rows[k] > self->max_row)
            self->max_row = rows[k];
    }
    self->pairs = pairs;
    return 0;
}

/* Acquire a C-contiguous float64 / int64 table array of at least `rows` rows of `width`. */
static int
acquire_table(PyObject *obj, Py_buffer *view, char kind, int width, Py_ssize_t rows, int writable, const char *name)
{
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, view, flags) < 0)
        return -1;
    char c = format_char(view);
    int ok = view->itemsize == 8 && (kind == 'd' ? c == 'd' : (c == 'l' || c == 'q'));
    if (!ok || view->len % (8 * width) || view->len / (8 * width) < rows) {
        PyErr_Format(PyExc_ValueError, "%s: expected at least %zd rows of %d items of kind '%c'", name, rows, width,
                     kind);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

static PyObject *
LinkSync_sync(LinkSync *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "sync(table_position, table_quaternion, table_scaling, table_version)");
        return NULL;
    }
    if (!self->held[L_VERSION]) {
        PyErr_SetString(PyExc_RuntimeError, "LinkSync was not initialised");
        return NULL;
    }
    static const int widths[4] = {3, 4, 3, 1};
    static const char *names[4] = {"table_position", "table_quaternion", "table_scaling", "table_version"};
    Py_buffer t[4];
    for (int j = 0; j < 4; j++)
        if (acquire_table(args[j], &t[j], j == 3 ? 'i' : 'd', widths[j], self->max_row + 1, 0, names[j]) < 0) {
            for (int i = 0; i < j; i++)
                PyBuffer_Release(&t[i]);
            return NULL;
        }
    const double *tp = t[0].buf, *tq = t[1].buf, *ts = t[2].buf;
    const int64_t *tv = t[3].buf;
    Py_buffer *v = self->views;
    const int64_t *rows = v[L_NODE_ROWS].buf, *slots = v[L_SLOTS].buf;
    double *position = v[L_POSITION].buf, *quaternion = v[L_QUATERNION].buf, *scaling = v[L_SCALING].buf;
    char *need_compose = v[L_NEED_COMPOSE].buf, *need_decompose = v[L_NEED_DECOMPOSE].buf;
    int64_t *seen = v[L_VERSION].buf;
    long copied = 0;
    for (Py_ssize_t k = 0; k < self->pairs; k++) {
        const int64_t r = rows[k], s = slots[k];
        if (tv[r] == seen[s])
            continue;
        memcpy(position + 3 * s, tp + 3 * r, 3 * sizeof(double));
        memcpy(quaternion + 4 * s, tq + 4 * r, 4 * sizeof(double));
        memcpy(scaling + 3 * s, ts + 3 * r, 3 * sizeof(double));
        need_compose[s] = 1;
        need_decompose[s] = 0;
        seen[s] = tv[r];
        copied++;
    }
    for (int j = 0; j < 4; j++)
        PyBuffer_Release(&t[j]);
    return PyLong_FromLong(copied);
}

static PyMethodDef LinkSync_methods[] = {
    {"sync", (PyCFunction)(void (*)(void))LinkSync_sync, METH_FASTCALL,
     "sync(table_position, table_quaternion, table_scaling, table_version) -> rows copied."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject LinkSyncType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "viewer.model._ckernel.LinkSync",
    .tp_basicsize = sizeof(LinkSync),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Linked bones' gather from a NodeTable (see the module's docstring).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)LinkSync_init,
    .tp_dealloc = (destructor)LinkSync_dealloc,
    .tp_methods = LinkSync_methods,
};

/* --- Sampler ----------------------------------------------------------------------------- */

enum { S_TIMES, S_VALUES, S_ROWS, S_COUNT };
enum { MODE_LINEAR, MODE_STEP, MODE_CUBIC };

typedef struct {
    PyObject_HEAD
    Py_buffer views[S_COUNT];
    int held[S_COUNT];
    Py_ssize_t keys, channels;
    int width, mode, rotation;
    int64_t max_row;
    /* linear rotations: per key interval and channel, the angle and its sine that slerp computes from the
     * two keys alone (computed once here by slerp's own operations, so sampling gives the same bits) */
    double *angles;
} Sampler;

static inline void slerp_angle(const double *a, const double *b, double *angle, double *sign);

static void
Sampler_dealloc(Sampler *self)
{
    for (int i = 0; i < S_COUNT; i++)
        if (self->held[i])
            PyBuffer_Release(&self->views[i]);
    PyMem_Free(self->angles);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int
Sampler_init(Sampler *self, PyObject *args, PyObject *kwargs)
{
    PyObject *times, *values, *rows;
    int width, mode, rotation;
    if (!PyArg_ParseTuple(args, "OOOiip:Sampler", &times, &values, &rows, &width, &mode, &rotation))
        return -1;
    for (int i = 0; i < S_COUNT; i++)
        if (self->held[i]) {
            PyBuffer_Release(&self->views[i]);
            self->held[i] = 0;
        }
    if (width < 1 || width > 4 || mode < MODE_LINEAR || mode > MODE_CUBIC || (rotation && width != 4)) {
        PyErr_SetString(PyExc_ValueError, "Sampler: width 1..4 (4 for rotations), mode 0 (LINEAR), 1 (STEP) or 2 "
                                          "(CUBICSPLINE)");
        return -1;
    }
    Py_ssize_t keys = int64_count(times), channels = int64_count(rows);
    if (keys < 0 || channels < 0)
        return -1;
    if (keys < 1) {
        PyErr_SetString(PyExc_ValueError, "Sampler: no keyframes");
        return -1;
    }
    const Py_ssize_t per_key = (mode == MODE_CUBIC ? 3 : 1) * channels * width;
    if (acquire(times, &self->views[S_TIMES], 'd', keys, 0, "times") < 0)
        return -1;
    self->held[S_TIMES] = 1;
    if (acquire(values, &self->views[S_VALUES], 'd', keys * per_key, 0, "values") < 0)
        return -1;
    self->held[S_VALUES] = 1;
    if (acquire(rows, &self->views[S_ROWS], 'i', channels, 0, "rows") < 0)
        return -1;
    self->held[S_ROWS] = 1;
    const int64_t *r = self->views[S_ROWS].buf;
    self->max_row = -1;
    for (Py_ssize_t c = 0; c < channels; c++) {
        if (r[c] < 0) {
            PyErr_Format(PyExc_ValueError, "rows: channel %zd has row %lld", c, (long long)r[c]);
            return -1;
        }
        if (r[c] > self->max_row)
            self->max_row = r[c];
    }
    self->keys = keys;
    self->channels = channels;
    self->width = width;
    self->mode = mode;
    self->rotation = rotation;
    PyMem_Free(self->angles);
    self->angles = NULL;
    if (rotation && mode == MODE_LINEAR && keys > 1) {
        self->angles = PyMem_Malloc((size_t)((keys - 1) * channels * 2 + 1) * sizeof(double));
        if (self->angles == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        const double *v = self->views[S_VALUES].buf;
        for (Py_ssize_t i = 0; i + 1 < keys; i++)
            for (Py_ssize_t c = 0; c < channels; c++) {
                const double *a = v + (i * channels + c) * 4, *b = a + channels * 4;
                double sign;
                slerp_angle(a, b, self->angles + (i * channels + c) * 2, &sign);
            }
    }
    return 0;
}

/* Babylon's Quaternion.Slerp as animation.slerp: shortest path, not renormalized. slerp_angle is its part
 * that depends on a and b alone: the angle (theta, sin theta), or theta = -1 where the two are nearly one
 * rotation (lerp); slerp_with does the rest. */
static inline double
slerp_dot(const double *a, const double *b, double *sign)
{
    double dot = a[0] * b[0];
    dot = dot + a[1] * b[1];
    dot = dot + a[2] * b[2];
    dot = dot + a[3] * b[3];
    *sign = dot < 0.0 ? -1.0 : 1.0;
    return dot * *sign;
}

static inline void
slerp_angle(const double *a, const double *b, double *angle, double *sign)
{
    const double dot = slerp_dot(a, b, sign);
    if (dot > 0.999999) {
        angle[0] = -1.0;
        angle[1] = 0.0;
    } else {
        angle[0] = acos(dot < 1.0 ? dot : 1.0);
        angle[1] = sin(angle[0]);
    }
}

static inline void
slerp_with(double *out, const double *a, const double *b, double u, double sign, const double *angle)
{
    double wa, wb;
    if (angle[0] < 0.0) {
        wa = 1.0 - u;
        wb = u;
    } else {
        const double theta = angle[0], sin_theta = angle[1];
        wa = sin((1.0 - u) * theta) / sin_theta;
        wb = sin(u * theta) / sin_theta;
    }
    const double signed_wb = sign * wb;
    for (int k = 0; k < 4; k++)
        out[k] = wa * a[k] + signed_wb * b[k];
}

static inline void
slerp(double *out, const double *a, const double *b, double u)
{
    double sign, angle[2];
    slerp_angle(a, b, angle, &sign);
    slerp_with(out, a, b, u, sign, angle);
}

/* slerp for the blend, where a and b are new every step: the same weights from one angle's sine and cosine
 * (sin((1 - u) theta) = sin theta cos(u theta) - cos theta sin(u theta), sin theta = sqrt((1 - dot)(1 + dot)),
 * both within a few ulps of slerp's), two calls to libm where slerp makes four. */
static inline void
slerp_blend(double *out, const double *a, const double *b, double u)
{
    double sign;
    const double dot = slerp_dot(a, b, &sign);
    double wa, wb;
    if (dot > 0.999999) {
        wa = 1.0 - u;
        wb = u;
    } else {
        const double c = dot < 1.0 ? dot : 1.0;
        const double theta = acos(c), sin_theta = sqrt((1.0 - c) * (1.0 + c));
        const double s = sin(u * theta) / sin_theta;
        wa = cos(u * theta) - c * s;
        wb = s;
    }
    const double signed_wb = sign * wb;
    for (int k = 0; k < 4; k++)
        out[k] = wa * a[k] + signed_wb * b[k];
}

/* The values at t into row rows[c] of target (rows NULL: row c). */
static void
sample_into(const Sampler *self, double t, double *target, const int64_t *rows)
{
    const double *times = self->views[S_TIMES].buf, *values = self->views[S_VALUES].buf;
    const Py_ssize_t K = self->keys, C = self->channels;
    const int W = self->width, cubic = self->mode == MODE_CUBIC;
    const Py_ssize_t stride = (cubic ? 3 : 1) * C * W;  /* one keyframe */
    const Py_ssize_t value = cubic ? C * W : 0;         /* the value within a keyframe */
    const double *copy = NULL;
    Py_ssize_t i = 0;
    if (t <= times[0] || K == 1)
        copy = values + value;
    else if (t >= times[K - 1])
        copy = values + (K - 1) * stride + value;
    else {
        Py_ssize_t lo = 0, hi = K - 1;  /* times[lo] <= t < times[hi] */
        while (hi - lo > 1) {
            const Py_ssize_t mid = lo + (hi - lo) / 2;
            if (times[mid] <= t)
                lo = mid;
            else
                hi = mid;
        }
        i = lo;
        if (self->mode == MODE_STEP)
            copy = values + i * stride;
    }
    if (copy != NULL) {
        for (Py_ssize_t c = 0; c < C; c++)
            memcpy(target + W * (rows ? rows[c] : c), copy + W * c, (size_t)W * sizeof(double));
        return;
    }
    const double dt = times[i + 1] - times[i];
    const double u = (t - times[i]) / dt;
    const double *v0 = values + i * stride, *v1 = v0 + stride;
    if (cubic) {
        const double u2 = u * u, u3 = u * u * u;
        const double h00 = 2 * u3 - 3 * u2 + 1, h10 = (u3 - 2 * u2 + u) * dt;
        const double h01 = -2 * u3 + 3 * u2, h11 = (u3 - u2) * dt;
        const double *p0 = v0 + C * W, *m0 = v0 + 2 * C * W, *p1 = v1 + C * W, *m1 = v1;
        for (Py_ssize_t c = 0; c < C; c++) {
            double *out = target + W * (rows ? rows[c] : c);
            double r[4];
            for (int k = 0; k < W; k++) {
                const Py_ssize_t at = W * c + k;
                r[k] = h00 * p0[at] + h10 * m0[at] + h01 * p1[at] + h11 * m1[at];
            }
            if (self->rotation) {  /* glTF normalizes spline rotations; a zero one stays */
                double sum = r[0] * r[0];
                sum = sum + r[1] * r[1];
                sum = sum + r[2] * r[2];
                sum = sum + r[3] * r[3];
                const double length = sqrt(sum);
                if (length > 0)
                    for (int k = 0; k < 4; k++)
                        r[k] = r[k] / length;
            }
            memcpy(out, r, (size_t)W * sizeof(double));
        }
        return;
    }
    for (Py_ssize_t c = 0; c < C; c++) {
        double *out = target + W * (rows ? rows[c] : c);
        if (self->rotation) {
            double r[4], sign;
            slerp_dot(v0 + 4 * c, v1 + 4 * c, &sign);
            slerp_with(r, v0 + 4 * c, v1 + 4 * c, u, sign, self->angles + (i * C + c) * 2);
            memcpy(out, r, sizeof r);
        } else {
            const double *a = v0 + W * c, *b = v1 + W * c;
            for (int k = 0; k < W; k++)
                out[k] = a[k] * (1.0 - u) + b[k] * u;
        }
    }
}

static int
sampler_ready(Sampler *self, PyObject *time, double *t)
{
    if (!self->held[S_ROWS]) {
        PyErr_SetString(PyExc_RuntimeError, "Sampler was not initialised");
        return -1;
    }
    *t = PyFloat_AsDouble(time);
    if (*t == -1.0 && PyErr_Occurred())
        return -1;
    if (!isfinite(*t)) {
        PyErr_SetString(PyExc_ValueError, "Sampler: the time must be finite");
        return -1;
    }
    return 0;
}

static PyObject *
Sampler_sample(Sampler *self, PyObject *const *args, Py_ssize_t nargs)
{
    double t;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "sample(t, out)");
        return NULL;
    }
    if (sampler_ready(self, args[0], &t) < 0)
        return NULL;
    Py_buffer out;
    if (acquire(args[1], &out, 'd', self->channels * self->width, 1, "out") < 0)
        return NULL;
    sample_into(self, t, out.buf, NULL);
    PyBuffer_Release(&out);
    Py_RETURN_NONE;
}

static PyObject *
Sampler_apply(Sampler *self, PyObject *const *args, Py_ssize_t nargs)
{
    double t;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "apply(t, target, version)");
        return NULL;
    }
    if (sampler_ready(self, args[0], &t) < 0)
        return NULL;
    Py_buffer target, version;
    if (acquire_table(args[1], &target, 'd', self->width, self->max_row + 1, 1, "target") < 0)
        return NULL;
    if (acquire_table(args[2], &version, 'i', 1, self->max_row + 1, 1, "version") < 0) {
        PyBuffer_Release(&target);
        return NULL;
    }
    const int64_t *rows = self->views[S_ROWS].buf;
    sample_into(self, t, target.buf, rows);
    int64_t *v = version.buf;
    for (Py_ssize_t c = 0; c < self->channels; c++)
        v[rows[c]] += 1;
    PyBuffer_Release(&target);
    PyBuffer_Release(&version);
    Py_RETURN_NONE;
}

static PyMethodDef Sampler_methods[] = {
    {"sample", (PyCFunction)(void (*)(void))Sampler_sample, METH_FASTCALL,
     "sample(t, out): the (channels, width) values at t into out."},
    {"apply", (PyCFunction)(void (*)(void))Sampler_apply, METH_FASTCALL,
     "apply(t, target, version): the values at t into target[rows], version[rows] += 1."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject SamplerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "viewer.model._ckernel.Sampler",
    .tp_basicsize = sizeof(Sampler),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A batch of animation channels sampled into NodeTable rows (see the module's docstring).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Sampler_init,
    .tp_dealloc = (destructor)Sampler_dealloc,
    .tp_methods = Sampler_methods,
};

/* --- parse_rows: BVH MOTION text to float64 ----------------------------------------------- */

static int
is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* Clinger's fast path: a plain decimal ([+-]digits[.digits], no exponent) whose digits make an
 * integer up to 2^53 with at most 22 of them after the point is that integer (exact as a double)
 * divided by a power of ten (exact too): one correctly rounded division, so the very double
 * strtod's correctly rounded reading gives. Returns 1 with *value and *stop set; 0 where the
 * number is anything else (more digits, an exponent, a word that is not a number), for strtod
 * and the checks after it. Most motion-capture numbers take this path, several times faster
 * than strtod. */
static const double POWERS_OF_TEN[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
                                       1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static int
plain_decimal(const char *start, const char *end, double *value, const char **stop)
{
    const char *c = start;
    int negative = 0;
    if (c < end && (*c == '-' || *c == '+')) {
        negative = *c == '-';
        c++;
    }
    uint64_t mantissa = 0;
    int digits = 0, after_point = 0;
    const uint64_t limit = (uint64_t)1 << 53;
    for (; c < end && *c >= '0' && *c <= '9'; c++, digits++) {
        mantissa = mantissa * 10 + (uint64_t)(*c - '0');
        if (mantissa > limit)
            return 0;
    }
    if (c < end && *c == '.') {
        for (c++; c < end && *c >= '0' && *c <= '9'; c++, digits++, after_point++) {
            mantissa = mantissa * 10 + (uint64_t)(*c - '0');
            if (mantissa > limit || after_point >= 22)
                return 0;
        }
    }
    if (digits == 0 || (c < end && !is_blank(*c) && *c != '\n'))
        return 0; /* no digit, or an exponent or another character follows: strtod decides */
    double result = after_point ? (double)mantissa / POWERS_OF_TEN[after_point] : (double)mantissa;
    *value = negative ? -result : result;
    *stop = c;
    return 1;
}

static PyObject *
parse_rows(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 3 || !PyUnicode_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "parse_rows(text: str, out: float64 buffer, columns: int)");
        return NULL;
    }
    Py_ssize_t length;
    const char *text = PyUnicode_AsUTF8AndSize(args[0], &length);
    if (text == NULL)
        return NULL;
    Py_ssize_t columns = PyLong_AsSsize_t(args[2]);
    if (columns < 1) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "parse_rows: columns must be at least 1");
        return NULL;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(args[1], &view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        return NULL;
    if (format_char(&view) != 'd' || view.len % (Py_ssize_t)(columns * sizeof(double)) != 0) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "parse_rows: out must be a float64 buffer of rows * columns");
        return NULL;
    }
    double *out = (double *)view.buf;
    Py_ssize_t rows = view.len / (Py_ssize_t)(columns * sizeof(double));
    Py_ssize_t bad = -1;
    const char *cursor = text, *end = text + length;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t row = 0; row < rows && bad < 0; row++) {
        Py_ssize_t count = 0;
        for (;;) {
            while (cursor < end && is_blank(*cursor))
                cursor++;
            if (cursor >= end || *cursor == '\n')
                break;
            /* strtod also reads hex floats, "inf" and "nan": only decimal digits, signs, points and
             * exponents may start a number here (the last two are refused as not finite below). */
            const char *start = cursor;
            double value;
            const char *fast_stop;
            if (plain_decimal(start, end, &value, &fast_stop)) {
                if (count >= columns) {
                    bad = row;
                    break;
                }
                out[row * columns + count++] = value;
                cursor = fast_stop;
                continue;
            }
            char *stop;
            value = strtod(start, &stop);
            int hex = 0;
            for (const char *c = start; c < stop; c++)
                hex |= (*c == 'x' || *c == 'X');
            if (stop == start || hex || !isfinite(value) || (stop < end && !is_blank(*stop) && *stop != '\n')
                || count >= columns) {
                bad = row;
                break;
            }
            out[row * columns + count++] = value;
            cursor = stop;
        }
        if (bad < 0 && count != columns)
            bad = row;
        if (bad < 0) {
            if (cursor < end && *cursor == '\n')
                cursor++;
            else if (row + 1 < rows)
                bad = row + 1; /* the text ended early: the next row is missing */
        }
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    return PyLong_FromSsize_t(bad);
}

static PyObject *
skin_points(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "skin_points(positions, joints, weights, matrices, out)");
        return NULL;
    }
    Py_buffer v[5];
    static const char formats[5] = {'f', 'i', 'f', 'd', 'd'};
    int got = 0, flags[5] = {PyBUF_C_CONTIGUOUS | PyBUF_FORMAT, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT,
                             PyBUF_C_CONTIGUOUS | PyBUF_FORMAT, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT,
                             PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS | PyBUF_FORMAT};
    long result = -1;
    for (int k = 0; k < 5; k++) {
        if (PyObject_GetBuffer(args[k], &v[k], flags[k]) < 0) {
            PyErr_Clear();
            goto done;
        }
        got = k + 1;
        if ((format_char(&v[k]) != formats[k] && !(k == 0 && format_char(&v[k]) == 'd')) || v[k].ndim < 1)
            goto done; /* positions may be float64 too (morphed ones) */
    }
    {
        Py_ssize_t count = v[0].shape[0];
        if (v[0].ndim != 2 || v[0].shape[1] != 3 || v[1].ndim != 2 || v[1].shape[0] != count || v[1].itemsize != 4
            || v[2].ndim != 2 || v[2].shape[0] != count || v[2].shape[1] != v[1].shape[1] || v[3].ndim != 3
            || v[3].shape[1] != 4 || v[3].shape[2] != 4 || v[4].ndim != 2 || v[4].shape[0] != count
            || v[4].shape[1] != 3)
            goto done;
        const int wide = format_char(&v[0]) == 'd';
        const float *positions32 = (const float *)v[0].buf, *weights = (const float *)v[2].buf;
        const double *positions64 = (const double *)v[0].buf;
        const int32_t *joints = (const int32_t *)v[1].buf;
        const double *matrices = (const double *)v[3].buf;
        double *out = (double *)v[4].buf;
        Py_ssize_t influences = v[1].shape[1], joint_count = v[3].shape[0];
        for (Py_ssize_t i = 0; i < count * influences; i++)
            if (joints[i] < 0 || joints[i] >= joint_count)
                goto done;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < count; i++) {
            double blend[16] = {0};
            for (Py_ssize_t k = 0; k < influences; k++) {
                double w = (double)weights[i * influences + k];
                const double *m = matrices + 16 * (Py_ssize_t)joints[i * influences + k];
                for (int e = 0; e < 16; e++)
                    blend[e] += w * m[e];
            }
            const Py_ssize_t p = 3 * i;
            double x = wide ? positions64[p] : positions32[p], y = wide ? positions64[p + 1] : positions32[p + 1],
                   z = wide ? positions64[p + 2] : positions32[p + 2];
            for (int j = 0; j < 3; j++)
                out[3 * i + j] = (x * blend[j] + y * blend[4 + j] + z * blend[8 + j]) + blend[12 + j];
        }
        Py_END_ALLOW_THREADS
        result = 0;
    }
done:
    for (int k = 0; k < got; k++)
        PyBuffer_Release(&v[k]);
    return PyLong_FromLong(result);
}


/* --- the mixer's blend (viewer/motion/mixer.py) ------------------------------------------ */

#define MAX_BLEND_ACTIONS 64

/* quat.multiply: a * b, Babylon's multiplyToRef, term for term. */
static inline void
quat_multiply(double *out, const double *a, const double *b)
{
    const double x = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
    const double y = -a[0] * b[2] + a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
    const double z = a[0] * b[1] - a[1] * b[0] + a[2] * b[3] + a[3] * b[2];
    const double w = -a[0] * b[0] - a[1] * b[1] - a[2] * b[2] + a[3] * b[3];
    out[0] = x;
    out[1] = y;
    out[2] = z;
    out[3] = w;
}

/* One path of the blend (see blend_rows): out (n, width) from base, the A actions' values v[a] (n, width),
 * their references ref[a] (read for additive actions only), weights wt, driven d (A, n), additive add (A,);
 * row_flags (n,), when not NULL, is set where some action drives the row. */
static void
blend_path(double *o_all, const double *b_all, const double *const *v, const double *const *ref, const double *wt,
           const char *d, const char *add, char *row_flags, Py_ssize_t A, Py_ssize_t n, long width, int rotation,
           const Py_ssize_t *list, Py_ssize_t listed)
{
    const Py_ssize_t count_rows = list != NULL ? listed : n;
    for (Py_ssize_t i = 0; i < count_rows; i++) {
        const Py_ssize_t r = list != NULL ? list[i] : i;
        double W = 0.0;
        int count = 0, any = 0;
        for (Py_ssize_t a = 0; a < A; a++) {
            if (d[a * n + r]) {
                any = 1;
                if (!add[a]) {
                    W += wt[a];
                    count++;
                }
            }
        }
        if (any && row_flags != NULL)
            row_flags[r] = 1;
        const double *b = b_all + r * width;
        double *o = o_all + r * width;
        if (!rotation) {
            const int low = W < 1.0;
            const double f = low ? 1.0 - W : 0.0, norm = low ? 1.0 : W;
            for (long k = 0; k < width; k++)
                o[k] = b[k] * f;
            for (Py_ssize_t a = 0; a < A; a++) {
                if (add[a] || !d[a * n + r])
                    continue;
                const double scale = wt[a] / norm;
                const double *x = v[a] + r * width;
                for (long k = 0; k < width; k++)
                    o[k] = o[k] + x[k] * scale;
            }
            for (Py_ssize_t a = 0; a < A; a++) {
                if (!add[a] || !d[a * n + r] || wt[a] == 0.0)
                    continue;
                const double *x = v[a] + r * width, *y = ref[a] + r * width;
                for (long k = 0; k < width; k++)
                    o[k] = o[k] + (x[k] - y[k]) * wt[a];
            }
            continue;
        }
        double cum[4] = {b[0], b[1], b[2], b[3]};
        if (count >= 1) {
            const int low = W < 1.0, shortcut = !low && count == 2;
            const double norm = low ? 1.0 : W;
            int started = low && count >= 2, seen = 0;
            double amount = started ? 1.0 - W : 0.0;
            for (Py_ssize_t a = 0; a < A; a++) {
                if (add[a] || !d[a * n + r])
                    continue;
                const double wn = wt[a] / norm;
                const double *q = v[a] + r * width;
                if (!started) {
                    memcpy(cum, q, sizeof cum);
                    amount = wn;
                    started = 1;
                } else {
                    amount += wn;
                    double u = amount > 0 ? wn / amount : 0.0;
                    if (shortcut && seen == 1)
                        u = wn;
                    slerp_blend(cum, cum, q, u);
                }
                seen++;
            }
            if (count == 1 && W < 1.0)
                slerp_blend(cum, b, cum, W);
        }
        for (Py_ssize_t a = 0; a < A; a++) {
            if (!add[a] || !d[a * n + r] || wt[a] == 0.0)
                continue;
            double delta[4], turned[4];
            quat_multiply(delta, ref[a] + r * width, v[a] + r * width);
            quat_multiply(turned, cum, delta);
            slerp_blend(cum, cum, turned, wt[a]);
        }
        memcpy(o, cum, sizeof cum);
    }
}

static PyObject *
blend_rows(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 11) {
        PyErr_SetString(PyExc_TypeError,
                        "blend_rows(out, base, values, refs, weights, driven, additive, rows, n, width, rotation)");
        return NULL;
    }
    if (!PyTuple_Check(args[2]) || !PyTuple_Check(args[3]) || PyTuple_GET_SIZE(args[2]) != PyTuple_GET_SIZE(args[3])) {
        PyErr_SetString(PyExc_TypeError, "blend_rows: values and refs must be tuples of one length");
        return NULL;
    }
    const Py_ssize_t A = PyTuple_GET_SIZE(args[2]);
    const Py_ssize_t n = PyLong_AsSsize_t(args[8]);
    const long width = PyLong_AsLong(args[9]);
    const int rotation = PyObject_IsTrue(args[10]);
    if (PyErr_Occurred())
        return NULL;
    if (A > MAX_BLEND_ACTIONS)
        return PyLong_FromLong(-1);
    if (width < 1 || (rotation && width != 4) || n < 0) {
        PyErr_SetString(PyExc_ValueError, "blend_rows: width 1 or more (4 for rotations), n >= 0");
        return NULL;
    }
    Py_buffer out, base, weights, driven, additive, rows, values[MAX_BLEND_ACTIONS], refs[MAX_BLEND_ACTIONS];
    int got_values = 0, got_refs = 0, stage = 0;
    PyObject *result = NULL;
    if (acquire(args[0], &out, 'd', n * width, 1, "out") < 0)
        goto done;
    stage = 1;
    if (acquire(args[1], &base, 'd', n * width, 0, "base") < 0)
        goto done;
    stage = 2;
    if (acquire(args[4], &weights, 'd', A, 0, "weights") < 0)
        goto done;
    stage = 3;
    if (acquire(args[5], &driven, '?', A * n, 0, "driven") < 0)
        goto done;
    stage = 4;
    if (acquire(args[6], &additive, '?', A, 0, "additive") < 0)
        goto done;
    stage = 5;
    if (acquire(args[7], &rows, '?', n, 1, "rows") < 0)
        goto done;
    stage = 6;
    for (; got_values < A; got_values++)
        if (acquire(PyTuple_GET_ITEM(args[2], got_values), &values[got_values], 'd', n * width, 0, "values") < 0)
            goto done;
    for (; got_refs < A; got_refs++)
        if (acquire(PyTuple_GET_ITEM(args[3], got_refs), &refs[got_refs], 'd', n * width, 0, "refs") < 0)
            goto done;
    {
        double *o_all = out.buf;
        const double *b_all = base.buf, *wt = weights.buf;
        const char *d = driven.buf, *add = additive.buf;
        char *row_flags = rows.buf;
        const double *v[MAX_BLEND_ACTIONS], *ref[MAX_BLEND_ACTIONS];
        for (Py_ssize_t a = 0; a < A; a++) {
            v[a] = values[a].buf;
            ref[a] = refs[a].buf;
        }
        Py_BEGIN_ALLOW_THREADS
        blend_path(o_all, b_all, v, ref, wt, d, add, row_flags, A, n, width, rotation, NULL, 0);
        Py_END_ALLOW_THREADS
        result = PyLong_FromLong(0);
    }
done:
    for (int k = 0; k < got_refs; k++)
        PyBuffer_Release(&refs[k]);
    for (int k = 0; k < got_values; k++)
        PyBuffer_Release(&values[k]);
    Py_buffer *held[6] = {&out, &base, &weights, &driven, &additive, &rows};
    for (int k = 0; k < stage; k++)
        PyBuffer_Release(held[k]);
    return result;
}


/* One layer's m tracks of one path (see layer_rows): row at[k] of out takes values[k]; flags (n,), when not
 * NULL, is set at the rows written; mask (n,), when not NULL, leaves out the rows it does not hold. */
static void
layer_apply(double *o_all, const double *v_all, const int64_t *at, Py_ssize_t m, long width, double weight,
            int additive, int rotation, char *flags, const char *mask)
{
    for (Py_ssize_t k = 0; k < m; k++) {
        if (mask != NULL && !mask[at[k]])
            continue;
        double *o = o_all + at[k] * width;
        const double *v = v_all + k * width;
        if (flags != NULL)
            flags[at[k]] = 1;
        if (rotation) {
            double target[4];
            if (additive)
                quat_multiply(target, o, v);
            else
                memcpy(target, v, sizeof target);
            if (weight == 1.0)
                memcpy(o, target, sizeof target);
            else
                slerp(o, o, target, weight);
        } else if (additive) {
            for (long c = 0; c < width; c++)
                o[c] = o[c] + v[c] * weight;
        } else {
            for (long c = 0; c < width; c++)
                o[c] = weight == 1.0 ? v[c] : o[c] * (1.0 - weight) + v[c] * weight;
        }
    }
}

static PyObject *
layer_rows(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 10) {
        PyErr_SetString(PyExc_TypeError, "layer_rows(out, values, index, rows, n, m, width, weight, additive, rotation)");
        return NULL;
    }
    const Py_ssize_t n = PyLong_AsSsize_t(args[4]), m = PyLong_AsSsize_t(args[5]);
    const long width = PyLong_AsLong(args[6]);
    const double weight = PyFloat_AsDouble(args[7]);
    const int additive = PyObject_IsTrue(args[8]), rotation = PyObject_IsTrue(args[9]);
    if (PyErr_Occurred())
        return NULL;
    if (width < 1 || width > 4 || (rotation && width != 4) || n < 0 || m < 0) {
        PyErr_SetString(PyExc_ValueError, "layer_rows: width 1..4 (4 for rotations), n and m >= 0");
        return NULL;
    }
    Py_buffer out, values, index, rows;
    if (acquire(args[0], &out, 'd', n * width, 1, "out") < 0)
        return NULL;
    if (acquire(args[1], &values, 'd', m * width, 0, "values") < 0) {
        PyBuffer_Release(&out);
        return NULL;
    }
    if (acquire(args[2], &index, 'i', m, 0, "index") < 0) {
        PyBuffer_Release(&out);
        PyBuffer_Release(&values);
        return NULL;
    }
    if (acquire(args[3], &rows, '?', n, 1, "rows") < 0) {
        PyBuffer_Release(&out);
        PyBuffer_Release(&values);
        PyBuffer_Release(&index);
        return NULL;
    }
    long result = 0;
    const int64_t *at = index.buf;
    for (Py_ssize_t k = 0; k < m; k++)
        if (at[k] < 0 || at[k] >= n)
            result = -1;
    if (result == 0)
        layer_apply(out.buf, values.buf, at, m, width, weight, additive, rotation, rows.buf, NULL);
    PyBuffer_Release(&out);
    PyBuffer_Release(&values);
    PyBuffer_Release(&index);
    PyBuffer_Release(&rows);
    return PyLong_FromLong(result);
}

/* The vertex through the blend of its influences' dual quaternions and scale/shear
 * (skin_points_dq; the maths is dual_quaternions.dq_blend's). */
static inline void
dq_point(const double *pos, const int32_t *joints, const float *weights, Py_ssize_t influences,
         const double *packed, double *out)
{
    double b0[4] = {0}, be[4] = {0}, s[6] = {0};
    for (Py_ssize_t k = 0; k < influences; k++) {
        const double *m = packed + 16 * (Py_ssize_t)joints[k];
        double w = (double)weights[k];
        double signed_w = (b0[0] * m[0] + b0[1] * m[1] + b0[2] * m[2] + b0[3] * m[3]) < 0 ? -w : w;
        for (int e = 0; e < 4; e++) {
            b0[e] += signed_w * m[e];
            be[e] += signed_w * m[4 + e];
        }
        for (int e = 0; e < 6; e++)
            s[e] += w * m[8 + e];
    }
    double length = sqrt(b0[0] * b0[0] + b0[1] * b0[1] + b0[2] * b0[2] + b0[3] * b0[3]);
    double x = b0[0] / length, y = b0[1] / length, z = b0[2] / length, a0 = b0[3] / length;
    double ex = be[0] / length, ey = be[1] / length, ez = be[2] / length, ae = be[3] / length;
    /* scale/shear first: p @ P (P symmetric: s = P00 P01 P02 P11 P12 P22) */
    double px = pos[0] * s[0] + pos[1] * s[1] + pos[2] * s[2];
    double py = pos[0] * s[1] + pos[1] * s[3] + pos[2] * s[4];
    double pz = pos[0] * s[2] + pos[1] * s[4] + pos[2] * s[5];
    /* then libigl's: v + 2 d0 x (d0 x v + a0 v) + 2 (a0 de - ae d0 + d0 x de) */
    double cx = y * pz - z * py + a0 * px, cy = z * px - x * pz + a0 * py, cz = x * py - y * px + a0 * pz;
    out[0] = px + 2.0 * (y * cz - z * cy) + 2.0 * (a0 * ex - ae * x + (y * ez - z * ey));
    out[1] = py + 2.0 * (z * cx - x * cz) + 2.0 * (a0 * ey - ae * y + (z * ex - x * ez));
    out[2] = pz + 2.0 * (x * cy - y * cx) + 2.0 * (a0 * ez - ae * z + (x * ey - y * ex));
}

static PyObject *
skin_points_dq(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "skin_points_dq(positions, joints, weights, packed, out)");
        return NULL;
    }
    Py_buffer v[5];
    static const char formats[5] = {'f', 'i', 'f', 'd', 'd'};
    int got = 0, flags[5] = {PyBUF_C_CONTIGUOUS | PyBUF_FORMAT, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT,
                             PyBUF_C_CONTIGUOUS | PyBUF_FORMAT, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT,
                             PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS | PyBUF_FORMAT};
    long result = -1;
    for (int k = 0; k < 5; k++) {
        if (PyObject_GetBuffer(args[k], &v[k], flags[k]) < 0) {
            PyErr_Clear();
            goto done;
        }
        got = k + 1;
        if ((format_char(&v[k]) != formats[k] && !(k == 0 && format_char(&v[k]) == 'd')) || v[k].ndim < 1)
            goto done;
    }
    {
        Py_ssize_t count = v[0].shape[0];
        if (v[0].ndim != 2 || v[0].shape[1] != 3 || v[1].ndim != 2 || v[1].shape[0] != count || v[1].itemsize != 4
            || v[2].ndim != 2 || v[2].shape[0] != count || v[2].shape[1] != v[1].shape[1] || v[3].ndim != 3
            || v[3].shape[1] != 4 || v[3].shape[2] != 4 || v[4].ndim != 2 || v[4].shape[0] != count
            || v[4].shape[1] != 3)
            goto done;
        const int wide = format_char(&v[0]) == 'd';
        const float *positions32 = (const float *)v[0].buf, *weights = (const float *)v[2].buf;
        const double *positions64 = (const double *)v[0].buf;
        const int32_t *joints = (const int32_t *)v[1].buf;
        const double *packed = (const double *)v[3].buf;
        double *out = (double *)v[4].buf;
        Py_ssize_t influences = v[1].shape[1], joint_count = v[3].shape[0];
        for (Py_ssize_t i = 0; i < count * influences; i++)
            if (joints[i] < 0 || joints[i] >= joint_count)
                goto done;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < count; i++) {
            const Py_ssize_t p = 3 * i;
            double pos[3] = {wide ? positions64[p] : positions32[p], wide ? positions64[p + 1] : positions32[p + 1],
                             wide ? positions64[p + 2] : positions32[p + 2]};
            dq_point(pos, joints + i * influences, weights + i * influences, influences, packed, out + p);
        }
        Py_END_ALLOW_THREADS
        result = 0;
    }
done:
    for (int k = 0; k < got; k++)
        PyBuffer_Release(&v[k]);
    return PyLong_FromLong(result);
}

/* The orthogonal polar factor of the 3x3 a (row-major) into r by Newton's iteration with
 * Higham's scaling, X <- (g X + X^-T / g) / 2: the U of numpy's SVD (u @ vt), within rounding.
 * 0 for a singular matrix or one that does not converge (left to numpy). */
static int
polar_factor(const double *a, double *r)
{
    double x[9];
    memcpy(x, a, sizeof x);
    int settled = 0;
    for (int iteration = 0; iteration < 60; iteration++) {
        double c[9] = {x[4] * x[8] - x[5] * x[7], x[5] * x[6] - x[3] * x[8], x[3] * x[7] - x[4] * x[6],
                       x[2] * x[7] - x[1] * x[8], x[0] * x[8] - x[2] * x[6], x[1] * x[6] - x[0] * x[7],
                       x[1] * x[5] - x[2] * x[4], x[2] * x[3] - x[0] * x[5], x[0] * x[4] - x[1] * x[3]};
        double det = x[0] * c[0] + x[1] * c[1] + x[2] * c[2];
        if (!(fabs(det) > 0) || !isfinite(det))
            return 0;
        double nx = 0.0, nc = 0.0;
        for (int e = 0; e < 9; e++) {
            nx += x[e] * x[e];
            nc += c[e] * c[e];
        }
        /* g = sqrt(|X^-1|_F / |X|_F); 1 once close (quadratic convergence needs no scaling) */
        double g = settled ? 1.0 : sqrt(sqrt(nc) / fabs(det) / sqrt(nx)), change = 0.0;
        for (int e = 0; e < 9; e++) {
            double next = 0.5 * (g * x[e] + c[e] / (det * g));
            change = fmax(change, fabs(next - x[e]));
            x[e] = next;
        }
        if (settled && change < 1e-15)
            break;
        if (change < 1e-8)
            settled++;
        if (settled > 3) {
            memcpy(r, x, sizeof x);
            return 1;
        }
    }
    if (!settled)
        return 0;
    memcpy(r, x, sizeof x);
    return 1;
}

/* bone_dual_quaternions for one bone (dual_quaternions.py's steps: the short way where its
 * rows are orthogonal, else the polar factor); 0 when left to numpy. */
static int
dq_bone(const double *m, double *out)
{
    double a[9], length[3], r[9], p[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            a[3 * i + j] = m[4 * i + j];
    int orthogonal = 1;
    for (int i = 0; i < 3; i++) {
        length[i] = sqrt(a[3 * i] * a[3 * i] + a[3 * i + 1] * a[3 * i + 1] + a[3 * i + 2] * a[3 * i + 2]);
        if (!(length[i] > 0))
            orthogonal = 0;
        for (int j = 0; j < 3; j++)
            r[3 * i + j] = length[i] > 0 ? a[3 * i + j] / length[i] : 0.0;
    }
    for (int i = 0; i < 3 && orthogonal; i++)
        for (int j = 0; j < 3; j++) {
            double g = r[3 * i] * r[3 * j] + r[3 * i + 1] * r[3 * j + 1] + r[3 * i + 2] * r[3 * j + 2];
            if (!(fabs(g - (i == j ? 1.0 : 0.0)) < 1e-6)) /* dual_quaternions.ORTHOGONAL */
                orthogonal = 0;
        }
    if (orthogonal) {
        memset(p, 0, sizeof p);
        p[0] = length[0], p[4] = length[1], p[8] = length[2];
    } else {
        if (!polar_factor(a, r))
            return 0;
        for (int i = 0; i < 3; i++) /* P = A R^T */
            for (int j = 0; j < 3; j++)
                p[3 * i + j] = a[3 * i] * r[3 * j] + a[3 * i + 1] * r[3 * j + 1] + a[3 * i + 2] * r[3 * j + 2];
    }
    double det = r[0] * (r[4] * r[8] - r[5] * r[7]) - r[1] * (r[3] * r[8] - r[5] * r[6])
                 + r[2] * (r[3] * r[7] - r[4] * r[6]);
    if (det < 0)
        for (int e = 0; e < 9; e++) {
            r[e] = -r[e];
            p[e] = -p[e];
        }
    /* Shepperd's method from the largest of K's diagonal, K[a][b] = 4 q_a q_b (M = R^T) */
    double m00 = r[0], m11 = r[4], m22 = r[8];
    double m01 = r[3], m10 = r[1], m02 = r[6], m20 = r[2], m12 = r[7], m21 = r[5];
    double k[4][4];
    k[0][0] = 1.0 + m00 - m11 - m22;
    k[1][1] = 1.0 - m00 + m11 - m22;
    k[2][2] = 1.0 - m00 - m11 + m22;
    k[3][3] = 1.0 + m00 + m11 + m22;
    k[0][1] = k[1][0] = m01 + m10;
    k[0][2] = k[2][0] = m02 + m20;
    k[1][2] = k[2][1] = m12 + m21;
    k[0][3] = k[3][0] = m21 - m12;
    k[1][3] = k[3][1] = m02 - m20;
    k[2][3] = k[3][2] = m10 - m01;
    int largest = 0;
    for (int i = 1; i < 4; i++)
        if (k[i][i] > k[largest][largest])
            largest = i;
    double q[4], root = 2.0 * sqrt(k[largest][largest]), norm = 0.0;
    for (int i = 0; i < 4; i++) {
        q[i] = k[largest][i] / root;
        norm += q[i] * q[i];
    }
    norm = sqrt(norm);
    for (int i = 0; i < 4; i++)
        q[i] /= norm;
    double x = q[0], y = q[1], z = q[2], w = q[3], tx = m[12], ty = m[13], tz = m[14];
    out[0] = x, out[1] = y, out[2] = z, out[3] = w;
    out[4] = 0.5 * (tx * w + ty * z - tz * y);
    out[5] = 0.5 * (-tx * z + ty * w + tz * x);
    out[6] = 0.5 * (tx * y - ty * x + tz * w);
    out[7] = -0.5 * (tx * x + ty * y + tz * z);
    out[8] = p[0], out[9] = (p[1] + p[3]) / 2.0, out[10] = (p[2] + p[6]) / 2.0, out[11] = p[4];
    out[12] = (p[5] + p[7]) / 2.0, out[13] = p[8], out[14] = 0.0, out[15] = 0.0;
    return 1;
}

static PyObject *
dq_bones(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "dq_bones(matrices, out, general)");
        return NULL;
    }
    Py_buffer v[3];
    int got = 0, flags[3] = {PyBUF_C_CONTIGUOUS | PyBUF_FORMAT, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS | PyBUF_FORMAT,
                             PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS | PyBUF_FORMAT};
    long result = -1;
    for (int k = 0; k < 3; k++) {
        if (PyObject_GetBuffer(args[k], &v[k], flags[k]) < 0) {
            PyErr_Clear();
            goto done;
        }
        got = k + 1;
    }
    {
        char kind = format_char(&v[0]);
        Py_ssize_t count = v[0].ndim == 3 ? v[0].shape[0] : -1;
        if ((kind != 'f' && kind != 'd') || count < 0 || v[0].shape[1] != 4 || v[0].shape[2] != 4
            || format_char(&v[1]) != 'd' || v[1].ndim != 3 || v[1].shape[0] != count || v[1].shape[1] != 4
            || v[1].shape[2] != 4 || format_char(&v[2]) != '?' || v[2].ndim != 1 || v[2].shape[0] != count)
            goto done;
        double *out = (double *)v[1].buf;
        char *general = (char *)v[2].buf;
        long left = 0;
        for (Py_ssize_t j = 0; j < count; j++) {
            double m[16];
            for (int e = 0; e < 16; e++)
                m[e] = kind == 'f' ? (double)((const float *)v[0].buf)[16 * j + e] : ((const double *)v[0].buf)[16 * j + e];
            general[j] = !dq_bone(m, out + 16 * j);
            left += general[j];
        }
        result = left;
    }
done:
    for (int k = 0; k < got; k++)
        PyBuffer_Release(&v[k]);
    return PyLong_FromLong(result);
}

/* --- the mixer's step as one call (viewer/motion/mixer.py's MixPlan) ------------------------ */

/* One sampler call of a plan: an action's channel batch into its pose buffer (rows: the sampler's), or a
 * layer's keyed tracks into their scratch (rows NULL). */
typedef struct {
    Sampler *sampler;
    double *target;
    int use_rows;
} PlanSample;

/* One layer track group of a plan: m tracks of one path into out[path]. */
typedef struct {
    Py_ssize_t layer;
    int path, additive;
    Py_ssize_t sample;  /* index into samples, or -1 for held values */
    const double *values;
    const int64_t *index;
    Py_ssize_t m;
    const char *mask;
} PlanLayerOp;

typedef struct {
    PyObject_HEAD
    Py_buffer *views;
    Py_ssize_t n_views, max_views;
    PyObject *owned;  /* a list: the samplers, morph views and targets the plan uses */
    Py_ssize_t n, K, A, L, cap;
    double *base[4], *out[4];
    const double *values[4][MAX_BLEND_ACTIONS], *refs[4][MAX_BLEND_ACTIONS];
    const char *driven[4];
    char additive[MAX_BLEND_ACTIONS];
    Py_ssize_t *active[4], n_active[4];  /* per path the rows blended (the others hold the base) */
    Py_ssize_t *first_sample;  /* (A + 1): action a's samples are [first_sample[a], first_sample[a + 1]) */
    PlanSample *samples;
    Py_ssize_t n_samples;
    PlanLayerOp *ops;
    Py_ssize_t n_ops;
    double *table[3];
    int64_t *version;
    const char *rows[3];
    Py_ssize_t n_morph;
    PyObject *morph;  /* tuple of (view of out's M, meshes tuple) */
    PyObject *watch;  /* watch()'s arguments */
    int ready;
} Plan;

#define MAX_PLAN_LAYERS 64

static PyObject *str_copy, *str_weights_attr, *str_version_attr, *long_one, *str_tracks_attr, *str_heard_attr,
    *str_weight_attr, *str_time_attr, *str_clip_attr, *str_duration_attr, *str_loop_attr, *str_fade_attr,
    *str_sample_time, *str_effective_weight, *str_morph_targets_attr;

static void
Plan_clear(Plan *self)
{
    for (Py_ssize_t k = 0; k < self->n_views; k++)
        PyBuffer_Release(&self->views[k]);
    PyMem_Free(self->views);
    PyMem_Free(self->first_sample);
    PyMem_Free(self->samples);
    PyMem_Free(self->ops);
    for (int k = 0; k < 4; k++) {
        PyMem_Free(self->active[k]);
        self->active[k] = NULL;
        self->n_active[k] = 0;
    }
    self->views = NULL;
    self->first_sample = NULL;
    self->samples = NULL;
    self->ops = NULL;
    self->n_views = self->max_views = self->n_samples = self->n_ops = 0;
    Py_CLEAR(self->owned);
    Py_CLEAR(self->morph);
    Py_CLEAR(self->watch);
    self->ready = 0;
}

static void
Plan_dealloc(Plan *self)
{
    Plan_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int
plan_room(Plan *self)
{
    if (self->n_views == self->max_views) {
        Py_ssize_t grown = self->max_views ? 2 * self->max_views : 32;
        Py_buffer *views = PyMem_Realloc(self->views, (size_t)grown * sizeof(Py_buffer));
        if (views == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        self->views = views;
        self->max_views = grown;
    }
    return 0;
}

/* A buffer held for the plan's life (released at dealloc); its data, or NULL with a Python error. */
static void *
plan_buffer(Plan *self, PyObject *obj, char kind, Py_ssize_t count, int writable, const char *name)
{
    if (plan_room(self) < 0)
        return NULL;
    if (acquire(obj, &self->views[self->n_views], kind, count, writable, name) < 0)
        return NULL;
    return self->views[self->n_views++].buf;
}

/* A NodeTable array of at least `rows` rows held for the plan's life (writable). */
static void *
plan_table(Plan *self, PyObject *obj, char kind, int width, Py_ssize_t rows)
{
    if (plan_room(self) < 0)
        return NULL;
    if (acquire_table(obj, &self->views[self->n_views], kind, width, rows, 1, "table") < 0)
        return NULL;
    return self->views[self->n_views++].buf;
}

static Sampler *
plan_sampler(Plan *self, PyObject *obj, int width, Py_ssize_t limit, const char *what)
{
    if (!PyObject_TypeCheck(obj, &SamplerType) || !((Sampler *)obj)->held[S_ROWS]) {
        PyErr_Format(PyExc_TypeError, "Plan: %s: expected an initialised Sampler", what);
        return NULL;
    }
    Sampler *sampler = (Sampler *)obj;
    if (sampler->width != width || sampler->max_row >= limit) {
        PyErr_Format(PyExc_ValueError, "Plan: %s: a sampler of width %d and rows below %zd expected", what, width,
                     limit);
        return NULL;
    }
    if (PyList_Append(self->owned, obj) < 0)
        return NULL;
    return sampler;
}

static const int PATH_WIDTH[4] = {3, 4, 3, 1};

static int
Plan_init(Plan *self, PyObject *args, PyObject *kwargs)
{
    Py_ssize_t n, K;
    PyObject *base, *out, *actions, *driven, *additive, *layers, *table, *rows, *morph;
    if (!PyArg_ParseTuple(args, "nnO!O!O!O!OO!OO!O!:Plan", &n, &K, &PyTuple_Type, &base, &PyTuple_Type, &out,
                          &PyTuple_Type, &actions, &PyTuple_Type, &driven, &additive, &PyTuple_Type, &layers, &table,
                          &PyTuple_Type, &rows, &PyTuple_Type, &morph))
        return -1;
    Plan_clear(self);
    self->owned = PyList_New(0);
    if (self->owned == NULL)
        return -1;
    const Py_ssize_t A = PyTuple_GET_SIZE(actions), L = PyTuple_GET_SIZE(layers);
    if (n < 0 || K < 0 || A > MAX_BLEND_ACTIONS || L > MAX_PLAN_LAYERS || PyTuple_GET_SIZE(base) != 4 || PyTuple_GET_SIZE(out) != 4
        || PyTuple_GET_SIZE(driven) != 4 || PyTuple_GET_SIZE(rows) != 3) {
        PyErr_SetString(PyExc_ValueError, "Plan: n, K >= 0, at most 64 actions and 64 layers, base and out (T, R, S, M), driven "
                                          "per path (4), rows (3)");
        return -1;
    }
    self->n = n;
    self->K = K;
    self->A = A;
    self->L = L;
    const Py_ssize_t length[4] = {n, n, n, K};
    for (int k = 0; k < 4; k++) {
        if ((self->base[k] = plan_buffer(self, PyTuple_GET_ITEM(base, k), 'd', length[k] * PATH_WIDTH[k], 0,
                                         "base")) == NULL)
            return -1;
        if ((self->out[k] = plan_buffer(self, PyTuple_GET_ITEM(out, k), 'd', length[k] * PATH_WIDTH[k], 1,
                                        "out")) == NULL)
            return -1;
        if ((self->driven[k] = plan_buffer(self, PyTuple_GET_ITEM(driven, k), '?', A * length[k], 0, "driven"))
            == NULL)
            return -1;
    }
    const char *add = plan_buffer(self, additive, '?', A, 0, "additive");
    if (add == NULL)
        return -1;
    memcpy(self->additive, add, (size_t)A);
    /* actions: (samples ((Sampler, path), ...), buffers (T, R, S, M), refs (T, R, S, M) or None) */
    Py_ssize_t total = 0;
    for (Py_ssize_t a = 0; a < A; a++) {
        PyObject *entry = PyTuple_GET_ITEM(actions, a);
        if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != 3 || !PyTuple_Check(PyTuple_GET_ITEM(entry, 0))) {
            PyErr_SetString(PyExc_TypeError, "Plan: an action is (samples, buffers, refs)");
            return -1;
        }
        total += PyTuple_GET_SIZE(PyTuple_GET_ITEM(entry, 0));
    }
    for (Py_ssize_t l = 0; l < L; l++) {
        PyObject *entry = PyTuple_GET_ITEM(layers, l);
        if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != 3 || !PyTuple_Check(PyTuple_GET_ITEM(entry, 2))) {
            PyErr_SetString(PyExc_TypeError, "Plan: a layer is (additive, mask, ops)");
            return -1;
        }
        self->n_ops += PyTuple_GET_SIZE(PyTuple_GET_ITEM(entry, 2));
    }
    total += self->n_ops;
    self->first_sample = PyMem_Calloc((size_t)A + 1, sizeof(Py_ssize_t));
    self->samples = PyMem_Calloc((size_t)total + 1, sizeof(PlanSample));
    self->ops = PyMem_Calloc((size_t)self->n_ops + 1, sizeof(PlanLayerOp));
    if (self->first_sample == NULL || self->samples == NULL || self->ops == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t a = 0; a < A; a++) {
        PyObject *entry = PyTuple_GET_ITEM(actions, a);
        PyObject *samples = PyTuple_GET_ITEM(entry, 0), *buffers = PyTuple_GET_ITEM(entry, 1);
        PyObject *refs = PyTuple_GET_ITEM(entry, 2);
        if (!PyTuple_Check(buffers) || PyTuple_GET_SIZE(buffers) != 4
            || (refs != Py_None && (!PyTuple_Check(refs) || PyTuple_GET_SIZE(refs) != 4))
            || (refs == Py_None && self->additive[a])) {
            PyErr_SetString(PyExc_TypeError, "Plan: an action's buffers are (T, R, S, M), refs the same or None "
                                             "(an additive action has them)");
            return -1;
        }
        for (int k = 0; k < 4; k++) {
            double *buffer = plan_buffer(self, PyTuple_GET_ITEM(buffers, k), 'd', length[k] * PATH_WIDTH[k], 1,
                                         "buffer");
            if (buffer == NULL)
                return -1;
            self->values[k][a] = buffer;
            self->refs[k][a] = NULL;
            if (refs != Py_None && (self->refs[k][a] = plan_buffer(self, PyTuple_GET_ITEM(refs, k), 'd',
                                                                   length[k] * PATH_WIDTH[k], 0, "ref")) == NULL)
                return -1;
        }
        self->first_sample[a] = self->n_samples;
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(samples); i++) {
            PyObject *pair = PyTuple_GET_ITEM(samples, i);
            int path;
            PyObject *obj;
            if (!PyArg_ParseTuple(pair, "Oi:Plan sample", &obj, &path))
                return -1;
            if (path < 0 || path > 3) {
                PyErr_SetString(PyExc_ValueError, "Plan: a sample's path is 0..3");
                return -1;
            }
            Sampler *sampler = plan_sampler(self, obj, PATH_WIDTH[path], length[path], "an action's sampler");
            if (sampler == NULL)
                return -1;
            PlanSample *s = &self->samples[self->n_samples++];
            s->sampler = sampler;
            s->target = (double *)self->values[path][a];
            s->use_rows = 1;
        }
    }
    self->first_sample[A] = self->n_samples;
    /* layers: (additive, mask (n,) bool or None, ops ((path, Sampler or None, values, index), ...)) */
    Py_ssize_t op = 0;
    for (Py_ssize_t l = 0; l < L; l++) {
        PyObject *entry = PyTuple_GET_ITEM(layers, l);
        int layer_additive = PyObject_IsTrue(PyTuple_GET_ITEM(entry, 0));
        if (layer_additive < 0)
            return -1;
        const char *mask = NULL;
        if (PyTuple_GET_ITEM(entry, 1) != Py_None
            && (mask = plan_buffer(self, PyTuple_GET_ITEM(entry, 1), '?', n, 0, "layer mask")) == NULL)
            return -1;
        PyObject *ops = PyTuple_GET_ITEM(entry, 2);
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(ops); i++) {
            PyObject *obj, *values, *index;
            int path;
            if (!PyArg_ParseTuple(PyTuple_GET_ITEM(ops, i), "iOOO:Plan layer op", &path, &obj, &values, &index))
                return -1;
            if (path < 0 || path > 2) {
                PyErr_SetString(PyExc_ValueError, "Plan: a layer op's path is 0..2");
                return -1;
            }
            PlanLayerOp *o = &self->ops[op++];
            Py_ssize_t m = int64_count(index);
            if (m < 0)
                return -1;
            o->layer = l;
            o->path = path;
            o->additive = layer_additive;
            o->m = m;
            o->mask = mask;
            o->sample = -1;
            if ((o->index = plan_buffer(self, index, 'i', m, 0, "layer index")) == NULL)
                return -1;
            for (Py_ssize_t k = 0; k < m; k++)
                if (o->index[k] < 0 || o->index[k] >= n) {
                    PyErr_SetString(PyExc_ValueError, "Plan: a layer's row is outside 0..n-1");
                    return -1;
                }
            double *v = plan_buffer(self, values, 'd', m * PATH_WIDTH[path], obj != Py_None, "layer values");
            if (v == NULL)
                return -1;
            o->values = v;
            if (obj != Py_None) {
                Sampler *sampler = plan_sampler(self, obj, PATH_WIDTH[path], n, "a layer's sampler");
                if (sampler == NULL)
                    return -1;
                if (sampler->channels != m) {
                    PyErr_SetString(PyExc_ValueError, "Plan: a layer's sampler has another number of tracks");
                    return -1;
                }
                PlanSample *s = &self->samples[self->n_samples];
                s->sampler = sampler;
                s->target = v;
                s->use_rows = 0;
                o->sample = self->n_samples++;
            }
        }
    }
    /* the table (position, quaternion, scaling, version, capacity) or None; rows to write (3 of (n,) bool) */
    self->cap = 0;
    if (table != Py_None) {
        if (!PyTuple_Check(table) || PyTuple_GET_SIZE(table) != 5) {
            PyErr_SetString(PyExc_TypeError, "Plan: table is (position, quaternion, scaling, version, capacity)");
            return -1;
        }
        Py_ssize_t cap = PyLong_AsSsize_t(PyTuple_GET_ITEM(table, 4));
        if (cap == -1 && PyErr_Occurred())
            return -1;
        if (cap < 0 || cap > n) {
            PyErr_SetString(PyExc_ValueError, "Plan: the table's capacity is outside 0..n");
            return -1;
        }
        for (int k = 0; k < 3; k++)
            if ((self->table[k] = plan_table(self, PyTuple_GET_ITEM(table, k), 'd', PATH_WIDTH[k], cap)) == NULL)
                return -1;
        if ((self->version = plan_table(self, PyTuple_GET_ITEM(table, 3), 'i', 1, cap)) == NULL)
            return -1;
        self->cap = cap;
    }
    for (int k = 0; k < 3; k++)
        if ((self->rows[k] = plan_buffer(self, PyTuple_GET_ITEM(rows, k), '?', n, 0, "rows")) == NULL)
            return -1;
    /* the rows blended: per path those written (driven by an action or a layer), and the morph columns some
     * action drives; the others hold the base, copied into out once here */
    for (int k = 0; k < 4; k++) {
        const Py_ssize_t size = length[k];
        memcpy(self->out[k], self->base[k], (size_t)(size * PATH_WIDTH[k]) * sizeof(double));
        if ((self->active[k] = PyMem_Calloc((size_t)size + 1, sizeof(Py_ssize_t))) == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        for (Py_ssize_t r = 0; r < size; r++) {
            int on = 0;
            if (k < 3)
                on = self->rows[k][r];
            else
                for (Py_ssize_t a = 0; a < A && !on; a++)
                    on = self->driven[3][a * size + r];
            if (on)
                self->active[k][self->n_active[k]++] = r;
        }
    }
    /* morph blocks: ((view of out M, (MorphTargets, ...)), ...) */
    self->n_morph = PyTuple_GET_SIZE(morph);
    for (Py_ssize_t b = 0; b < self->n_morph; b++) {
        PyObject *entry = PyTuple_GET_ITEM(morph, b);
        if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != 2 || !PyTuple_Check(PyTuple_GET_ITEM(entry, 1))) {
            PyErr_SetString(PyExc_TypeError, "Plan: a morph block is (view, meshes)");
            return -1;
        }
    }
    Py_INCREF(morph);
    self->morph = morph;
    self->ready = 1;
    return 0;
}

static int
plan_floats(PyObject *obj, double *out, Py_ssize_t count, const char *name)
{
    if (!(PyTuple_Check(obj) || PyList_Check(obj)) || PySequence_Fast_GET_SIZE(obj) != count) {
        PyErr_Format(PyExc_TypeError, "Plan.run: %s must be a list or tuple of %zd floats", name, count);
        return -1;
    }
    PyObject **items = PySequence_Fast_ITEMS(obj);
    for (Py_ssize_t k = 0; k < count; k++) {
        PyObject *item = items[k];
        out[k] = PyFloat_CheckExact(item) ? PyFloat_AS_DOUBLE(item) : PyFloat_AsDouble(item);
        if (out[k] == -1.0 && PyErr_Occurred())
            return -1;
        if (!isfinite(out[k])) {
            PyErr_Format(PyExc_ValueError, "Plan.run: %s must be finite", name);
            return -1;
        }
    }
    return 0;
}

static int plan_execute(Plan *self, const double *times, const double *weights, double layer_time,
                        const double *layer_weights);

static PyObject *
Plan_run(Plan *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (!self->ready) {
        PyErr_SetString(PyExc_RuntimeError, "Plan was not initialised");
        return NULL;
    }
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "run(times, weights, layer_time, layer_weights)");
        return NULL;
    }
    double times[MAX_BLEND_ACTIONS], weights[MAX_BLEND_ACTIONS], layer_weights[MAX_PLAN_LAYERS], layer_time;
    if (plan_floats(args[0], times, self->A, "times") < 0 || plan_floats(args[1], weights, self->A, "weights") < 0
        || plan_floats(args[3], layer_weights, self->L, "layer_weights") < 0)
        return NULL;
    layer_time = PyFloat_AsDouble(args[2]);
    if ((layer_time == -1.0 && PyErr_Occurred()) || !isfinite(layer_time)) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "Plan.run: layer_time must be finite");
        return NULL;
    }
    if (plan_execute(self, times, weights, layer_time, layer_weights) < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* One step: sampling, the blend, the layers, the table's rows, the morph weights. -1 with a Python error. */
static int
plan_execute(Plan *self, const double *times, const double *weights, double layer_time, const double *layer_weights)
{
    const Py_ssize_t n = self->n, K = self->K, A = self->A;
    /* every action's channels into its pose buffer */
    for (Py_ssize_t a = 0; a < A; a++)
        for (Py_ssize_t i = self->first_sample[a]; i < self->first_sample[a + 1]; i++) {
            const PlanSample *s = &self->samples[i];
            sample_into(s->sampler, times[a], s->target, s->sampler->views[S_ROWS].buf);
        }
    /* the blend, path by path */
    for (int k = 0; k < 4; k++) {
        const Py_ssize_t rows = k == 3 ? K : n;
        if (rows)
            blend_path(self->out[k], self->base[k], self->values[k], self->refs[k], weights, self->driven[k],
                       self->additive, NULL, A, rows, PATH_WIDTH[k], k == 1, self->active[k], self->n_active[k]);
    }
    /* the layers, in order */
    for (Py_ssize_t i = 0; i < self->n_ops; i++) {
        const PlanLayerOp *o = &self->ops[i];
        if (o->sample >= 0) {
            const PlanSample *s = &self->samples[o->sample];
            sample_into(s->sampler, layer_time, s->target, NULL);
        }
        layer_apply(self->out[o->path], o->values, o->index, o->m, PATH_WIDTH[o->path], layer_weights[o->layer],
                    o->additive, o->path == 1, NULL, o->mask);
    }
    /* the table's rows, each written row's version bumped once */
    if (self->cap) {
        const char *r0 = self->rows[0], *r1 = self->rows[1], *r2 = self->rows[2];
        for (Py_ssize_t r = 0; r < self->cap; r++) {
            if (!(r0[r] | r1[r] | r2[r]))
                continue;
            if (r0[r])
                memcpy(self->table[0] + 3 * r, self->out[0] + 3 * r, 3 * sizeof(double));
            if (r1[r])
                memcpy(self->table[1] + 4 * r, self->out[1] + 4 * r, 4 * sizeof(double));
            if (r2[r])
                memcpy(self->table[2] + 3 * r, self->out[2] + 3 * r, 3 * sizeof(double));
            self->version[r] += 1;
        }
    }
    /* morph blocks: each mesh's weights a new array (as pose.set_weights), the version bumped */
    for (Py_ssize_t b = 0; b < self->n_morph; b++) {
        PyObject *entry = PyTuple_GET_ITEM(self->morph, b);
        PyObject *view = PyTuple_GET_ITEM(entry, 0), *targets = PyTuple_GET_ITEM(entry, 1);
        for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(targets); j++) {
            /* the mesh's MorphTargets as it has them now */
            PyObject *target = PyObject_GetAttr(PyTuple_GET_ITEM(targets, j), str_morph_targets_attr);
            if (target == NULL)
                return -1;
            PyObject *copy = PyObject_CallMethodNoArgs(view, str_copy);
            int failed = copy == NULL || PyObject_SetAttr(target, str_weights_attr, copy) < 0;
            Py_XDECREF(copy);
            PyObject *version = failed ? NULL : PyObject_GetAttr(target, str_version_attr);
            PyObject *bumped = version == NULL ? NULL : PyNumber_Add(version, long_one);
            Py_XDECREF(version);
            failed = bumped == NULL || PyObject_SetAttr(target, str_version_attr, bumped) < 0;
            Py_XDECREF(bumped);
            Py_DECREF(target);
            if (failed)
                return -1;
        }
    }
    return 0;
}


/* The value at `name` of obj: a str, or a tuple of str followed one after another (a.b). New reference. */
static PyObject *
plan_attr(PyObject *obj, PyObject *name)
{
    if (!PyTuple_Check(name))
        return PyObject_GetAttr(obj, name);
    Py_INCREF(obj);
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(name) && obj != NULL; k++) {
        PyObject *next = PyObject_GetAttr(obj, PyTuple_GET_ITEM(name, k));
        Py_DECREF(obj);
        obj = next;
    }
    return obj;
}

/* 1 when every attribute `names` of obj equals the one recorded in `stamp`, 0 when one differs, -1 on error. */
static int
plan_same(PyObject *obj, PyObject *names, PyObject *stamp)
{
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(names); k++) {
        PyObject *now = plan_attr(obj, PyTuple_GET_ITEM(names, k));
        if (now == NULL)
            return -1;
        int same = PyObject_RichCompareBool(now, PyTuple_GET_ITEM(stamp, k), Py_EQ);
        Py_DECREF(now);
        if (same != 1)
            return same;
    }
    return 1;
}

static double
plan_float_attr(PyObject *obj, PyObject *name)
{
    PyObject *value = PyObject_GetAttr(obj, name);
    if (value == NULL)
        return -1.0;
    double x = PyFloat_AsDouble(value);
    Py_DECREF(value);
    return x;
}

static PyObject *
Plan_watch(Plan *self, PyObject *args)
{
    PyObject *actions, *stamps, *names, *running, *layers, *layer_stamps, *layer_names;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!O!O!:watch", &PyTuple_Type, &actions, &PyTuple_Type, &stamps,
                          &PyTuple_Type, &names, &PyTuple_Type, &running, &PyTuple_Type, &layers, &PyTuple_Type,
                          &layer_stamps, &PyTuple_Type, &layer_names))
        return NULL;
    if (!self->ready || PyTuple_GET_SIZE(actions) != PyTuple_GET_SIZE(stamps) || PyTuple_GET_SIZE(running) != self->A
        || PyTuple_GET_SIZE(layers) != self->L || PyTuple_GET_SIZE(layer_stamps) != self->L) {
        PyErr_SetString(PyExc_ValueError, "Plan.watch: a stamp per action and layer, the plan's running actions "
                                          "and layers");
        return NULL;
    }
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(stamps); k++)
        if (!PyTuple_Check(PyTuple_GET_ITEM(stamps, k)) || PyTuple_GET_SIZE(PyTuple_GET_ITEM(stamps, k))
                                                                != PyTuple_GET_SIZE(names)) {
            PyErr_SetString(PyExc_ValueError, "Plan.watch: a stamp has one value per name");
            return NULL;
        }
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(layer_stamps); k++)
        if (!PyTuple_Check(PyTuple_GET_ITEM(layer_stamps, k)) || PyTuple_GET_SIZE(PyTuple_GET_ITEM(layer_stamps, k))
                                                                      != PyTuple_GET_SIZE(layer_names)) {
            PyErr_SetString(PyExc_ValueError, "Plan.watch: a layer stamp has one value per name");
            return NULL;
        }
    PyObject *watch = PyTuple_Pack(7, actions, stamps, names, running, layers, layer_stamps, layer_names);
    if (watch == NULL)
        return NULL;
    Py_XSETREF(self->watch, watch);
    Py_RETURN_NONE;
}

/* The layers of `all` (a fast sequence) that apply (tracks, heard, weight > 0) against the watched ones:
 * 1 when they are those, with the same stamps (their weights into weights), 0 when not, -1 on error. */
static int
plan_layers(Plan *self, PyObject *all, PyObject *layers, PyObject *layer_stamps, PyObject *layer_names,
            double *weights, Py_ssize_t *found)
{
    Py_ssize_t j = 0;
    PyObject **items = PySequence_Fast_ITEMS(all);
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(all); i++) {
        PyObject *layer = items[i];
        PyObject *tracks = PyObject_GetAttr(layer, str_tracks_attr);
        if (tracks == NULL)
            return -1;
        const Py_ssize_t count = PyObject_Length(tracks);
        Py_DECREF(tracks);
        if (count < 0)
            return -1;
        if (count == 0)
            continue;
        PyObject *heard = PyObject_GetAttr(layer, str_heard_attr);  /* not muted, and soloed when any layer is */
        if (heard == NULL)
            return -1;
        const int plays = PyObject_IsTrue(heard);
        Py_DECREF(heard);
        if (plays < 0)
            return -1;
        if (!plays)
            continue;
        const double weight = plan_float_attr(layer, str_weight_attr);
        if (weight == -1.0 && PyErr_Occurred())
            return -1;
        if (!(weight > 0))
            continue;
        if (j >= self->L || layer != PyTuple_GET_ITEM(layers, j))
            return 0;
        const int same = plan_same(layer, layer_names, PyTuple_GET_ITEM(layer_stamps, j));
        if (same <= 0)
            return same;
        weights[j++] = weight;
    }
    *found = j;
    return j == self->L;
}

/* step(actions, layers, clock) -> True when it ran the step, False (nothing done) when the mix is not the one
 * watched: `actions` (the mixer's dict of actions) not the watched ones with the same stamps, or the layers of
 * `layers` (a list) that apply (tracks, not muted, weight > 0) not the watched ones with the same stamps. The
 * running actions' sample times and weights are read as Action.sample_time and effective_weight give them. */
static PyObject *
Plan_step(Plan *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3 || !PyDict_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "step(actions dict, layers, clock)");
        return NULL;
    }
    if (self->watch == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "Plan.step: nothing watched (call watch first)");
        return NULL;
    }
    const double clock = PyFloat_AsDouble(args[2]);
    if (clock == -1.0 && PyErr_Occurred())
        return NULL;
    PyObject *actions = PyTuple_GET_ITEM(self->watch, 0), *stamps = PyTuple_GET_ITEM(self->watch, 1);
    PyObject *names = PyTuple_GET_ITEM(self->watch, 2), *running = PyTuple_GET_ITEM(self->watch, 3);
    PyObject *layers = PyTuple_GET_ITEM(self->watch, 4), *layer_stamps = PyTuple_GET_ITEM(self->watch, 5);
    PyObject *layer_names = PyTuple_GET_ITEM(self->watch, 6);
    /* the actions, in the dict's order, each with its stamp */
    if (PyDict_GET_SIZE(args[0]) != PyTuple_GET_SIZE(actions))
        Py_RETURN_FALSE;
    Py_ssize_t pos = 0, k = 0;
    PyObject *key, *value;
    while (PyDict_Next(args[0], &pos, &key, &value)) {
        if (value != PyTuple_GET_ITEM(actions, k))
            Py_RETURN_FALSE;
        int same = plan_same(value, names, PyTuple_GET_ITEM(stamps, k));
        if (same < 0)
            return NULL;
        if (!same)
            Py_RETURN_FALSE;
        k++;
    }
    /* the layers that apply, each with its stamp, and their weights */
    double layer_weights[MAX_PLAN_LAYERS];
    Py_ssize_t j = 0;
    PyObject *all_layers = PySequence_Fast(args[1], "Plan.step: layers must be a sequence");
    if (all_layers == NULL)
        return NULL;
    const int fits = plan_layers(self, all_layers, layers, layer_stamps, layer_names, layer_weights, &j);
    Py_DECREF(all_layers);
    if (fits < 0)
        return NULL;
    if (fits == 0)
        Py_RETURN_FALSE;
    /* the running actions' sample times and weights */
    double times[MAX_BLEND_ACTIONS], weights[MAX_BLEND_ACTIONS];
    for (Py_ssize_t a = 0; a < self->A; a++) {
        PyObject *action = PyTuple_GET_ITEM(running, a);
        double t = plan_float_attr(action, str_time_attr);
        if (t == -1.0 && PyErr_Occurred())
            return NULL;
        PyObject *clip = PyObject_GetAttr(action, str_clip_attr);
        if (clip == NULL)
            return NULL;
        const double duration = plan_float_attr(clip, str_duration_attr);
        Py_DECREF(clip);
        if (duration == -1.0 && PyErr_Occurred())
            return NULL;
        if (!(0.0 <= t && t <= duration)) {
            PyObject *loop = PyObject_GetAttr(action, str_loop_attr);
            if (loop == NULL)
                return NULL;
            const int repeat = PyUnicode_Check(loop) && PyUnicode_CompareWithASCIIString(loop, "repeat") == 0;
            Py_DECREF(loop);
            if (repeat && duration > 0 && isfinite(t)) {
                /* Python's float %: fmod, moved to the divisor's sign */
                double mod = fmod(t, duration);
                if (mod)
                    mod = mod < 0 ? mod + duration : mod;
                else
                    mod = copysign(0.0, duration);
                t = mod;
            } else {
                PyObject *result = PyObject_CallMethodNoArgs(action, str_sample_time);
                if (result == NULL)
                    return NULL;
                t = PyFloat_AsDouble(result);
                Py_DECREF(result);
                if (t == -1.0 && PyErr_Occurred())
                    return NULL;
            }
        }
        PyObject *fade = PyObject_GetAttr(action, str_fade_attr);
        if (fade == NULL)
            return NULL;
        const int plain = fade == Py_None;
        Py_DECREF(fade);
        double w;
        if (plain)
            w = plan_float_attr(action, str_weight_attr);
        else {
            PyObject *result = PyObject_CallMethodOneArg(action, str_effective_weight, args[2]);
            if (result == NULL)
                return NULL;
            w = PyFloat_AsDouble(result);
            Py_DECREF(result);
        }
        if (w == -1.0 && PyErr_Occurred())
            return NULL;
        if (!isfinite(t) || !isfinite(w)) {
            PyErr_SetString(PyExc_ValueError, "Plan.step: an action's time or weight is not finite");
            return NULL;
        }
        times[a] = t;
        weights[a] = w;
    }
    if (plan_execute(self, times, weights, self->A ? times[0] : clock, layer_weights) < 0)
        return NULL;
    Py_RETURN_TRUE;
}

static PyMethodDef Plan_methods[] = {
    {"run", (PyCFunction)(void (*)(void))Plan_run, METH_FASTCALL,
     "run(times, weights, layer_time, layer_weights): one mixer step (see the module's docstring)."},
    {"watch", (PyCFunction)Plan_watch, METH_VARARGS,
     "watch(actions, stamps, names, running, layers, layer_stamps, layer_names): the mix step() runs for."},
    {"step", (PyCFunction)(void (*)(void))Plan_step, METH_FASTCALL,
     "step(actions, layers, clock) -> True when it ran, False when the mix changed (see the module's docstring)."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject PlanType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "viewer.model._ckernel.Plan",
    .tp_basicsize = sizeof(Plan),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A mixer step compiled: sampling, the blend, layers and the writes in one call (see the module's "
              "docstring).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Plan_init,
    .tp_dealloc = (destructor)Plan_dealloc,
    .tp_methods = Plan_methods,
};

/* --- spring bones ------------------------------------------------------------------------ */

/* 3x4 affine matrices, row-major, column vectors (three.js's layout, transposed storage). */
static void
sp_compose(const double *p, const double *q, const double *s, double *m)
{
    double x = q[0], y = q[1], z = q[2], w = q[3];
    double x2 = x + x, y2 = y + y, z2 = z + z;
    double xx = x * x2, xy = x * y2, xz = x * z2, yy = y * y2, yz = y * z2, zz = z * z2;
    double wx = w * x2, wy = w * y2, wz = w * z2;
    m[0] = (1 - (yy + zz)) * s[0], m[1] = (xy - wz) * s[1], m[2] = (xz + wy) * s[2], m[3] = p[0];
    m[4] = (xy + wz) * s[0], m[5] = (1 - (xx + zz)) * s[1], m[6] = (yz - wx) * s[2], m[7] = p[1];
    m[8] = (xz - wy) * s[0], m[9] = (yz + wx) * s[1], m[10] = (1 - (xx + yy)) * s[2], m[11] = p[2];
}

static void
sp_mul(const double *a, const double *b, double *out)
{
    double r[12];
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++)
            r[4 * i + j] = a[4 * i] * b[j] + a[4 * i + 1] * b[4 + j] + a[4 * i + 2] * b[8 + j];
        r[4 * i + 3] = a[4 * i] * b[3] + a[4 * i + 1] * b[7] + a[4 * i + 2] * b[11] + a[4 * i + 3];
    }
    memcpy(out, r, sizeof r);
}

static void
sp_point(const double *m, const double *v, double *out)
{
    double r[3];
    for (int i = 0; i < 3; i++)
        r[i] = m[4 * i] * v[0] + m[4 * i + 1] * v[1] + m[4 * i + 2] * v[2] + m[4 * i + 3];
    memcpy(out, r, sizeof r);
}

static void
sp_dir(const double *m, const double *v, double *out)
{
    double r[3];
    for (int i = 0; i < 3; i++)
        r[i] = m[4 * i] * v[0] + m[4 * i + 1] * v[1] + m[4 * i + 2] * v[2];
    memcpy(out, r, sizeof r);
}

static void
sp_normalise(double *v)
{
    double n = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    if (n > 0)
        v[0] /= n, v[1] /= n, v[2] /= n;
}

/* The inverse of an affine 3x4 (its 3x3 by cofactors); 0 when singular. */
static int
sp_invert(const double *m, double *out)
{
    double a = m[0], b = m[1], c = m[2], d = m[4], e = m[5], f = m[6], g = m[8], h = m[9], i = m[10];
    double A = e * i - f * h, B = f * g - d * i, C = d * h - e * g;
    double det = a * A + b * B + c * C;
    if (det == 0.0)
        return 0;
    double r[12];
    r[0] = A / det, r[1] = (c * h - b * i) / det, r[2] = (b * f - c * e) / det;
    r[4] = B / det, r[5] = (a * i - c * g) / det, r[6] = (c * d - a * f) / det;
    r[8] = C / det, r[9] = (b * g - a * h) / det, r[10] = (a * e - b * d) / det;
    for (int k = 0; k < 3; k++)
        r[4 * k + 3] = -(r[4 * k] * m[3] + r[4 * k + 1] * m[7] + r[4 * k + 2] * m[11]);
    memcpy(out, r, sizeof r);
    return 1;
}

static double
sp_collide(int kind, const double *data, const double *m, const double *point, double radius, double *target)
{
    const double *offset = data, *tail = data + 4, *normal = data + 7;
    double r = data[3];
    double centre[3] = {m[3], m[7], m[11]};
    if ((kind & 3) == 2) {
        double inv[12], n[3];
        if (!sp_invert(m, inv))
            return 1.0;
        /* the normal matrix: the inverse's transpose */
        n[0] = inv[0] * normal[0] + inv[4] * normal[1] + inv[8] * normal[2];
        n[1] = inv[1] * normal[0] + inv[5] * normal[1] + inv[9] * normal[2];
        n[2] = inv[2] * normal[0] + inv[6] * normal[1] + inv[10] * normal[2];
        double len = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        n[0] /= len, n[1] /= len, n[2] /= len;
        double dist = (point[0] - centre[0]) * n[0] + (point[1] - centre[1]) * n[1] + (point[2] - centre[2]) * n[2];
        memcpy(target, n, sizeof n);
        return dist - radius;
    }
    for (int k = 0; k < 3; k++)
        target[k] = point[k] - centre[k];
    if ((kind & 3) == 1) {
        double span[3] = {tail[0] - offset[0], tail[1] - offset[1], tail[2] - offset[2]}, axis[3];
        sp_dir(m, span, axis);
        double length_sq = axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2];
        double dot = axis[0] * target[0] + axis[1] * target[1] + axis[2] * target[2];
        if (dot <= 0) {
        } else if (length_sq <= dot) {
            for (int k = 0; k < 3; k++)
                target[k] -= axis[k];
        } else {
            double t = dot / length_sq;
            for (int k = 0; k < 3; k++)
                target[k] -= axis[k] * t;
        }
    }
    double length = sqrt(target[0] * target[0] + target[1] * target[1] + target[2] * target[2]);
    int inside = (kind & 4) != 0;
    double distance = inside ? r - radius - length : length - radius - r;
    if (distance < 0) {
        double s = 1.0 / length;
        for (int k = 0; k < 3; k++)
            target[k] = inside ? -(target[k] * s) : target[k] * s;
    }
    return distance;
}

static void
sp_from_unit_vectors(const double *a, const double *b, double *q)
{
    double r = a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + 1.0;
    if (r < 1e-8) {
        if (fabs(a[0]) > fabs(a[2]))
            q[0] = -a[1], q[1] = a[0], q[2] = 0.0, q[3] = 0.0;
        else
            q[0] = 0.0, q[1] = -a[2], q[2] = a[1], q[3] = 0.0;
    } else {
        q[0] = a[1] * b[2] - a[2] * b[1], q[1] = a[2] * b[0] - a[0] * b[2], q[2] = a[0] * b[1] - a[1] * b[0], q[3] = r;
    }
    double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    for (int k = 0; k < 4; k++)
        q[k] /= n;
}

#define SP_BUFFERS 15

static PyObject *
spring_step(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 8 || !PyTuple_Check(args[0]) || PyTuple_GET_SIZE(args[0]) != 9) {
        PyErr_SetString(PyExc_TypeError, "spring_step(plan, world, position, quaternion, scaling, state, out, dt)");
        return NULL;
    }
    double dt = PyFloat_AsDouble(args[7]);
    if (dt == -1.0 && PyErr_Occurred())
        return NULL;
    PyObject *objects[SP_BUFFERS];
    /* plan: parent, joints, params, initial_local, collider_start, refs, collider_kind, collider_data, descendants
     * (a tuple of two: start, slots) */
    for (int k = 0; k < 8; k++)
        objects[k] = PyTuple_GET_ITEM(args[0], k);
    PyObject *desc = PyTuple_GET_ITEM(args[0], 8);
    if (!PyTuple_Check(desc) || PyTuple_GET_SIZE(desc) != 2) {
        PyErr_SetString(PyExc_TypeError, "spring_step: plan[8] must be (start, slots)");
        return NULL;
    }
    objects[8] = PyTuple_GET_ITEM(desc, 0), objects[9] = PyTuple_GET_ITEM(desc, 1);
    for (int k = 1; k < 6; k++)
        objects[9 + k] = args[k];  /* world, position, quaternion, scaling, state */
    /* out is args[6] */
    static const char kinds[SP_BUFFERS] = {'i', 'i', 'd', 'd', 'i', 'i', 'i', 'd', 'i', 'i', 'd', 'd', 'd', 'd', 'd'};
    Py_buffer v[SP_BUFFERS + 1];
    int got = 0;
    long result = -1;
    for (int k = 0; k <= SP_BUFFERS; k++) {
        PyObject *o = k < SP_BUFFERS ? objects[k] : args[6];
        int writable = k == 10 || k == 14 || k == SP_BUFFERS;
        if (PyObject_GetBuffer(o, &v[k], PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0)) < 0) {
            PyErr_Clear();
            goto done;
        }
        got = k + 1;
        char want = k < SP_BUFFERS ? kinds[k] : 'd';
        char have = format_char(&v[k]);
        if (want == 'i' ? (have != 'i' || v[k].itemsize != 4) : have != 'd')
            goto done;
    }
    {
        Py_ssize_t K = v[0].len / 4, J = v[1].len / 12, C = v[6].len / 8, R = v[5].len / 4, D = v[9].len / 4;
        if (v[2].len != J * 20 * 8 || v[3].len != J * 12 * 8 || v[4].len != (J + 1) * 4 || v[7].len != C * 80
            || v[8].len != (J + 1) * 4 || v[10].len != K * 96 || v[11].len != K * 24 || v[12].len != K * 32
            || v[13].len != K * 24 || v[14].len != J * 48 || v[SP_BUFFERS].len != J * 32)
            goto done;
        const int32_t *parent = v[0].buf, *joints = v[1].buf, *cstart = v[4].buf, *refs = v[5].buf,
                      *ckind = v[6].buf, *dstart = v[8].buf, *dslots = v[9].buf;
        const double *params = v[2].buf, *initial = v[3].buf, *cdata = v[7].buf, *pos = v[11].buf, *quat = v[12].buf, *scl = v[13].buf;
        double *state = v[14].buf, *out = v[SP_BUFFERS].buf;
        /* indices checked once: a plan that does not fit is declined, nothing written */
        for (Py_ssize_t k = 0; k < K; k++)
            if (parent[k] < -1 || parent[k] >= k)
                goto done;
        for (Py_ssize_t j = 0; j < J; j++) {
            if (joints[3 * j] < 0 || joints[3 * j] >= K || joints[3 * j + 1] < -1 || joints[3 * j + 1] >= K
                || joints[3 * j + 2] < -1 || joints[3 * j + 2] >= K || cstart[j] > cstart[j + 1] || dstart[j] > dstart[j + 1])
                goto done;
        }
        if (cstart[0] != 0 || cstart[J] != R || dstart[0] != 0 || dstart[J] != D)
            goto done;
        for (Py_ssize_t r = 0; r < R; r++)
            if (refs[r] < 0 || refs[r] >= C)
                goto done;
        for (Py_ssize_t c = 0; c < C; c++)
            if (ckind[2 * c] < 0 || ckind[2 * c] >= K)
                goto done;
        for (Py_ssize_t d = 0; d < D; d++)
            if (dslots[d] <= 0 || dslots[d] >= K || parent[dslots[d]] < 0)
                goto done;
        double *world = v[10].buf;
        static const double identity[12] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0};
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t k = 0; k < K; k++) {  /* the scene's matrices brought up to date, parents first */
            double local[12];
            sp_compose(pos + 3 * k, quat + 4 * k, scl + 3 * k, local);
            if (parent[k] >= 0)
                sp_mul(world + 12 * parent[k], local, world + 12 * k);
            else
                memcpy(world + 12 * k, local, sizeof local);
        }
        for (Py_ssize_t j = 0; j < J; j++) {
            int bone = joints[3 * j], child = joints[3 * j + 1], center = joints[3 * j + 2];
            const double *pr = params + 20 * j, *il = initial + 12 * j;
            double stiffness = pr[0], gravity = pr[1], drag = pr[2], hit = pr[3];
            const double *gdir = pr + 4, *irot = pr + 7, *ichild = pr + 11, *axis = pr + 14, *laxis = pr + 17;
            double *tail = state + 6 * j, *prev = tail + 3;
            const double *pw = parent[bone] >= 0 ? world + 12 * parent[bone] : identity;
            double local[12], bw[12];
            sp_compose(pos + 3 * bone, quat + 4 * bone, scl + 3 * bone, local);
            sp_mul(pw, local, bw);
            memcpy(world + 12 * bone, bw, sizeof bw);
            double position[3] = {bw[3], bw[7], bw[11]}, cp[3];
            if (child >= 0)
                cp[0] = world[12 * child + 3], cp[1] = world[12 * child + 7], cp[2] = world[12 * child + 11];
            else
                sp_point(bw, ichild, cp);
            double dx = position[0] - cp[0], dy = position[1] - cp[1], dz = position[2] - cp[2];
            double length = sqrt(dx * dx + dy * dy + dz * dz);
            double waxis[3];
            sp_dir(pw, laxis, waxis);
            sp_normalise(waxis);
            const double *to_world = center >= 0 ? world + 12 * center : identity;
            double nxt[3], inertia[3];
            for (int k = 0; k < 3; k++)
                inertia[k] = tail[k] + (tail[k] - prev[k]) * (1.0 - drag);
            sp_point(to_world, inertia, nxt);
            for (int k = 0; k < 3; k++)
                nxt[k] = nxt[k] + waxis[k] * (stiffness * dt) + gdir[k] * (gravity * dt);
            double off[3] = {nxt[0] - position[0], nxt[1] - position[1], nxt[2] - position[2]};
            sp_normalise(off);
            for (int k = 0; k < 3; k++)
                nxt[k] = off[k] * length + position[k];
            for (int r = cstart[j]; r < cstart[j + 1]; r++) {
                int c = refs[r], kind = ckind[2 * c + 1];
                const double *data = cdata + 10 * c, *nw = world + 12 * ckind[2 * c];
                double m[12], push[3];
                memcpy(m, nw, sizeof m);
                m[3] = nw[0] * data[0] + nw[1] * data[1] + nw[2] * data[2] + nw[3];
                m[7] = nw[4] * data[0] + nw[5] * data[1] + nw[6] * data[2] + nw[7];
                m[11] = nw[8] * data[0] + nw[9] * data[1] + nw[10] * data[2] + nw[11];
                double distance = sp_collide(kind, data, m, nxt, hit, push);
                if (distance < 0) {
                    for (int k = 0; k < 3; k++)
                        nxt[k] = nxt[k] + push[k] * (-distance);
                    double o[3] = {nxt[0] - position[0], nxt[1] - position[1], nxt[2] - position[2]};
                    double s = length / sqrt(o[0] * o[0] + o[1] * o[1] + o[2] * o[2]);
                    for (int k = 0; k < 3; k++)
                        nxt[k] = o[k] * s + position[k];
                }
            }
            memcpy(prev, tail, 3 * sizeof(double));
            if (center >= 0) {
                double inv[12];
                if (!sp_invert(to_world, inv))
                    memcpy(inv, identity, sizeof inv);
                sp_point(inv, nxt, tail);
            } else {
                memcpy(tail, nxt, 3 * sizeof(double));
            }
            double base[12], inv[12], direction[3], turn[4];
            sp_mul(pw, il, base);
            if (!sp_invert(base, inv))
                memcpy(inv, identity, sizeof inv);
            sp_point(inv, nxt, direction);
            sp_normalise(direction);
            sp_from_unit_vectors(axis, direction, turn);
            double *q = out + 4 * j;
            double ax = irot[0], ay = irot[1], az = irot[2], aw = irot[3], bx = turn[0], by = turn[1], bz = turn[2],
                   bwq = turn[3];
            q[0] = ax * bwq + aw * bx + ay * bz - az * by;
            q[1] = ay * bwq + aw * by + az * bx - ax * bz;
            q[2] = az * bwq + aw * bz + ax * by - ay * bx;
            q[3] = aw * bwq - ax * bx - ay * by - az * bz;
            sp_compose(pos + 3 * bone, q, scl + 3 * bone, local);
            sp_mul(pw, local, world + 12 * bone);
            for (int d = dstart[j]; d < dstart[j + 1]; d++) {
                int n = dslots[d];
                sp_compose(pos + 3 * n, quat + 4 * n, scl + 3 * n, local);
                sp_mul(world + 12 * parent[n], local, world + 12 * n);
            }
        }
        Py_END_ALLOW_THREADS
        result = 0;
    }
done:
    for (int k = 0; k < got; k++)
        PyBuffer_Release(&v[k]);
    return PyLong_FromLong(result);
}

static PyMethodDef module_methods[] = {
    {"parse_rows", (PyCFunction)(void (*)(void))parse_rows, METH_FASTCALL,
     "parse_rows(text, out, columns) -> -1, or the index of the first bad row (see the module's docstring)."},
    {"blend_rows", (PyCFunction)(void (*)(void))blend_rows, METH_FASTCALL,
     "blend_rows(out, base, values, refs, weights, driven, additive, rows, n, width, rotation) -> 0, or -1 when "
     "declined (see the module's docstring)."},
    {"layer_rows", (PyCFunction)(void (*)(void))layer_rows, METH_FASTCALL,
     "layer_rows(out, values, index, rows, n, m, width, weight, additive, rotation) -> 0, or -1 when declined "
     "(see the module's docstring)."},
    {"skin_points", (PyCFunction)(void (*)(void))skin_points, METH_FASTCALL,
     "skin_points(positions, joints, weights, matrices, out) -> 0, or -1 when declined (see the module's docstring)."},
    {"dq_bones", (PyCFunction)(void (*)(void))dq_bones, METH_FASTCALL,
     "dq_bones(matrices, out, general) -> bones left to numpy, or -1 when declined (see the module's docstring)."},
    {"skin_points_dq", (PyCFunction)(void (*)(void))skin_points_dq, METH_FASTCALL,
     "skin_points_dq(positions, joints, weights, packed, out) -> 0, or -1 when declined (see the module's docstring)."},
    {"spring_step", (PyCFunction)(void (*)(void))spring_step, METH_FASTCALL,
     "spring_step(plan, world, position, quaternion, scaling, state, out, dt) -> 0, or -1 when declined (see the "
     "module's docstring)."},
    {NULL, NULL, 0, NULL},
};

/* --- module ------------------------------------------------------------------------------ */

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "viewer.model._ckernel",
    .m_doc = "The compiled skeleton kernel (see csrc/ckernel.c); numpy's is the reference.",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC
PyInit__ckernel(void)
{
    if (PyType_Ready(&KernelType) < 0 || PyType_Ready(&PoseScatterType) < 0 || PyType_Ready(&LinkSyncType) < 0
        || PyType_Ready(&SamplerType) < 0 || PyType_Ready(&PlanType) < 0)
        return NULL;
    str_copy = PyUnicode_InternFromString("copy");
    str_weights_attr = PyUnicode_InternFromString("_weights");
    str_version_attr = PyUnicode_InternFromString("version");
    long_one = PyLong_FromLong(1);
    str_tracks_attr = PyUnicode_InternFromString("_tracks");
    str_heard_attr = PyUnicode_InternFromString("heard");
    str_weight_attr = PyUnicode_InternFromString("_weight");
    str_time_attr = PyUnicode_InternFromString("_time");
    str_clip_attr = PyUnicode_InternFromString("clip");
    str_duration_attr = PyUnicode_InternFromString("duration");
    str_loop_attr = PyUnicode_InternFromString("_loop");
    str_fade_attr = PyUnicode_InternFromString("_fade");
    str_sample_time = PyUnicode_InternFromString("sample_time");
    str_effective_weight = PyUnicode_InternFromString("effective_weight");
    str_morph_targets_attr = PyUnicode_InternFromString("morph_targets");
    if (str_copy == NULL || str_weights_attr == NULL || str_version_attr == NULL || long_one == NULL
        || str_tracks_attr == NULL || str_heard_attr == NULL || str_weight_attr == NULL || str_time_attr == NULL
        || str_clip_attr == NULL || str_duration_attr == NULL || str_loop_attr == NULL || str_fade_attr == NULL
        || str_sample_time == NULL || str_effective_weight == NULL || str_morph_targets_attr == NULL)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    if (PyModule_AddIntConstant(m, "KERNEL_VERSION", KERNEL_VERSION) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(&KernelType);
    if (PyModule_AddObject(m, "Kernel", (PyObject *)&KernelType) < 0) {
        Py_DECREF(&KernelType);
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(&PoseScatterType);
    if (PyModule_AddObject(m, "PoseScatter", (PyObject *)&PoseScatterType) < 0) {
        Py_DECREF(&PoseScatterType);
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(&LinkSyncType);
    if (PyModule_AddObject(m, "LinkSync", (PyObject *)&LinkSyncType) < 0) {
        Py_DECREF(&LinkSyncType);
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(&SamplerType);
    if (PyModule_AddObject(m, "Sampler", (PyObject *)&SamplerType) < 0) {
        Py_DECREF(&SamplerType);
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(&PlanType);
    if (PyModule_AddObject(m, "Plan", (PyObject *)&PlanType) < 0) {
        Py_DECREF(&PlanType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
