"""AnimationClip.apply samples channels in batches: the same numbers as channel by channel."""

from pathlib import Path

import numpy as np
import pytest

from viewer import TransformNode
from viewer.model.animation import AnimationChannel, AnimationClip

SAMPLES = Path(__file__).parent / "data" / "gltf-samples"
MODELS = sorted(p for p in SAMPLES.glob("*/*.gl*") if p.suffix in (".glb", ".gltf"))
ATTRIBUTE = {"translation": "position", "rotation": "rotation_quaternion", "scale": "scaling"}


@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.name)
def test_clip_apply_equals_sampling_each_channel(path):
    from viewer import load_gltf

    scene = load_gltf(path)
    for clip in scene.animations:
        for t in np.linspace(-0.1, clip.duration + 0.1, 13):
            clip.apply(t)
            for channel in clip.channels:
                np.testing.assert_allclose(getattr(channel.node, ATTRIBUTE[channel.path]), channel.sample(t),
                                           rtol=0, atol=1e-12)


@pytest.mark.parametrize("interpolation", ["LINEAR", "STEP", "CUBICSPLINE"])
def test_shared_inputs_are_batched_and_match(interpolation):
    rng = np.random.default_rng(5)
    times = np.array([0.0, 0.4, 1.0, 1.7])
    per_key = 3 if interpolation == "CUBICSPLINE" else 1
    channels = []
    nodes = [TransformNode(f"n{i}") for i in range(6)]
    for i, node in enumerate(nodes):
        for path, width in (("translation", 3), ("rotation", 4), ("scale", 3)):
            values = rng.normal(size=(len(times) * per_key, width))
            if path == "rotation":
                values /= np.linalg.norm(values, axis=1, keepdims=True)
                if i == 0:
                    values[:] = values[0]  # parallel keys: slerp's lerp branch
            own = times if i % 2 else times * 1.0  # equal content, different arrays
            channels.append(AnimationChannel(node, path, own, values, interpolation))
    clip = AnimationClip("c", channels)
    clip.apply(0.1)
    assert len(clip._packed) == 3  # one batch per path: the channels share their times
    for t in (-1.0, 0.0, 0.2, 0.4, 0.99, 1.3, 1.7, 5.0):
        clip.apply(t)
        for channel in channels:
            np.testing.assert_allclose(getattr(channel.node, ATTRIBUTE[channel.path]), channel.sample(t),
                                       rtol=0, atol=1e-12)
    # Channels edited after the first apply are re-packed.
    clip.channels = clip.channels[:3]
    clip.apply(0.5)
    assert sum(len(batch.nodes) for batch in clip._packed) == 3


# --- the compiled sampler (csrc/ckernel.c's Sampler) against numpy's _ChannelBatch.sample ----------
from viewer.model import native  # noqa: E402
from viewer.model.animation import _ChannelBatch  # noqa: E402

needs_c = pytest.mark.skipif(native.ckernel is None, reason=f"compiled kernel not available: {native.describe()}")


def _trig_is_libm() -> bool:
    """numpy's float64 sin / arccos give libm's bits here (no SVML): the compiled slerp, which
    calls libm, is then bit-identical to numpy's; elsewhere the bound below applies."""
    import math

    x = np.random.default_rng(0).uniform(-1.0, 1.0, 4096)
    return (np.array_equal(np.sin(x * 3.0), [math.sin(v * 3.0) for v in x])
            and np.array_equal(np.arccos(x), [math.acos(v) for v in x]))


# With numpy's own sin / arccos (SVML on AVX-512 builds) a slerped component may differ by a few
# ulp of 1: the stated bound. Everything else (lerp, STEP, splines, clamping) is bit-identical.
SLERP_BOUND = 0.0 if _trig_is_libm() else 8 * np.finfo(np.float64).eps


def _random_batch(rng, interpolation, path, keys, channels, compiled):
    width = 4 if path == "rotation" else 3
    per_key = 3 if interpolation == "CUBICSPLINE" else 1
    times = np.cumsum(rng.uniform(0.01, 0.3, keys)) - 0.05
    members = []
    for c in range(channels):
        values = rng.normal(size=(keys * per_key, width))
        if path == "rotation":
            values /= np.linalg.norm(values, axis=1, keepdims=True)
            if c == 0:
                values[:] = values[0]  # parallel keys: slerp's lerp branch
            if c == 1:
                values[1::2] *= -1.0  # opposite signs: the shortest path flips
        members.append(AnimationChannel(TransformNode(f"n{c}"), path, times, values, interpolation))
    return _ChannelBatch(members, compiled=compiled), times


@needs_c
@pytest.mark.parametrize("interpolation", ["LINEAR", "STEP", "CUBICSPLINE"])
@pytest.mark.parametrize("path", ["translation", "rotation", "scale"])
@pytest.mark.parametrize("keys", [1, 2, 37])
def test_compiled_sampler_matches_numpy(interpolation, path, keys):
    rng = np.random.default_rng(keys * 7 + len(path))
    batch, times = _random_batch(rng, interpolation, path, keys, 9, compiled=True)
    probes = np.concatenate([rng.uniform(times[0] - 0.2, times[-1] + 0.2, 300), times,
                             np.nextafter(times, -np.inf), np.nextafter(times, np.inf), [-1e9, 1e9]])
    out = np.empty((9, 4 if path == "rotation" else 3))
    bound = SLERP_BOUND if (path == "rotation" and interpolation == "LINEAR") else 0.0
    for t in probes:
        batch.compiled.sample(float(t), out)
        reference = batch.sample(float(t))
        if bound == 0.0:
            np.testing.assert_array_equal(out, reference, err_msg=f"t={t!r}")
        else:
            np.testing.assert_allclose(out, reference, rtol=0, atol=bound, err_msg=f"t={t!r}")


@needs_c
def test_compiled_and_numpy_clips_write_the_same_node_rows():
    """A clip applied with the compiled sampler and with numpy's writes the same values into the
    nodes' table rows, bumps every animated node's version once per apply, and (through the linked
    bones' gather and either skeleton kernel) gives the same upload arrays."""
    from viewer import load_gltf

    path = SAMPLES / "CesiumMan" / "CesiumMan.glb"
    scenes = {}
    for which, module in (("numpy", None), ("C", native.ckernel)):
        saved = native.ckernel
        native.ckernel = module
        try:
            scene = load_gltf(path)
            clip = scene.animations[0]
            values = []
            for t in np.linspace(-0.1, clip.duration + 0.1, 29):
                before = {id(c.node): c.node.version for c in clip.channels}
                clip.apply(t)
                assert all(c.node.version > before[id(c.node)] for c in clip.channels)
                values.append([getattr(c.node, ATTRIBUTE[c.path]) for c in clip.channels])
                for skeleton in scene.skeletons:
                    skeleton.prepare()
                values.append([s.get_transform_matrices().copy() for s in scene.skeletons])
            assert all((batch.compiled is None) == (which == "numpy") for batch in clip._packed)
            scenes[which] = values
        finally:
            native.ckernel = saved
    for a, b in zip(scenes["numpy"], scenes["C"]):
        for x, y in zip(a, b):
            if x.dtype == np.float64:  # the nodes' rows: the samplers' own bound
                np.testing.assert_allclose(x, y, rtol=0, atol=SLERP_BOUND)
            else:  # the float32 uploads: numpy's kernel multiplies through BLAS, whose kernels
                # fuse or reorder sums by CPU, so the two kernels agree within about 4 float32
                # ulps of each stack's largest entry (tests/test_kernel.py's bound), not bit for bit
                np.testing.assert_allclose(x, y, rtol=0, atol=2.0 ** -21 * (np.abs(x).max() + 1.0))


def test_a_clip_switches_to_numpy_when_the_compiled_kernel_goes():
    node = TransformNode("n")
    clip = AnimationClip("c", [AnimationChannel(node, "translation", [0.0, 1.0], [[0, 0, 0], [2, 4, 6]])])
    saved = native.ckernel
    try:
        native.ckernel = None
        clip.apply(0.25)
        assert clip._packed[0].compiled is None
        np.testing.assert_array_equal(node.position, [0.5, 1.0, 1.5])
        native.ckernel = saved
        clip.apply(0.5)
        assert (clip._packed[0].compiled is None) == (saved is None)
        np.testing.assert_array_equal(node.position, [1.0, 2.0, 3.0])
    finally:
        native.ckernel = saved


@needs_c
def test_compiled_sampler_refuses_bad_arrays():
    Sampler = native.ckernel.Sampler
    times, rows = np.array([0.0, 1.0]), np.array([0, 3], dtype=np.int64)
    values = np.zeros((2, 2, 3))
    with pytest.raises(ValueError):
        Sampler(times, values[:, :1], rows, 3, 0, False)  # too few values
    with pytest.raises(ValueError):
        Sampler(times, values, rows, 3, 5, False)  # no such mode
    with pytest.raises(ValueError):
        Sampler(times, values, rows, 3, 0, True)  # rotations are 4 wide
    with pytest.raises(ValueError):
        Sampler(times, values, np.array([0, -1], dtype=np.int64), 3, 0, False)
    sampler = Sampler(times, values, rows, 3, 0, False)
    with pytest.raises(ValueError):
        sampler.apply(0.5, np.zeros((3, 3)), np.zeros(3, dtype=np.int64))  # row 3 is past the table
    with pytest.raises(ValueError):
        sampler.apply(0.5, np.zeros((4, 3), dtype=np.float32), np.zeros(4, dtype=np.int64))
    with pytest.raises(ValueError):
        sampler.sample(float("nan"), np.zeros((2, 3)))
    target, version = np.ones((4, 3)), np.zeros(4, dtype=np.int64)
    sampler.apply(0.5, target, version)
    np.testing.assert_array_equal(version, [1, 0, 0, 1])
    np.testing.assert_array_equal(target[[0, 3]], 0.0)
    np.testing.assert_array_equal(target[[1, 2]], 1.0)
