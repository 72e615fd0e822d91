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
