"""The mix baked into one clip: what the mixer shows, frame by frame, as LINEAR keys."""

from __future__ import annotations

import math

import numpy as np

from ..errors import ViewerError
from ..model.animation import AnimationChannel, AnimationClip
from ..model.checks import finite_number
from ..model.morph import MorphAnimationClip, MorphWeightChannel


def mix_length(mixer) -> float:
    """How long the mix plays by default (bake's end, render's --frames all): the longest
    playing clip's duration over its speed; 0 when nothing plays."""
    lengths = [a.clip.duration / abs(a.speed) for a in mixer.running() if a.speed != 0]
    return max(lengths) if lengths else 0.0


def bakes_springs(scene, springs=None) -> bool:
    """Whether ``bake(scene, springs=springs)`` bakes the spring bones: ``springs=None`` (the
    default) where the scene has chains and they are on (``scene.springs.enabled``: the
    window's and the notebook's toggle, ``--no-springs``), True or False to say."""
    return _baked(scene.__dict__.get("_springs"), springs, "springs")


def bakes_constraints(scene, constraints=None) -> bool:
    """Whether ``bake(scene, constraints=constraints)`` bakes the node constraints
    (VRMC_node_constraint, ``scene.constraints``): ``constraints=None`` (the default) where the
    scene has some and they are on (``scene.constraints.enabled``), True or False to say."""
    return _baked(scene.__dict__.get("_constraints"), constraints, "constraints")


def _baked(made, choice, what: str) -> bool:
    """Whether the scene's springs or constraints (``made``; None when none were made yet: the
    scene has none) are baked: ``choice`` True or False, or None for whether they are on."""
    if choice is not None and not isinstance(choice, (bool, np.bool_)):
        raise ViewerError(f"bake: {what} must be True, False or None (the scene's choice), got {choice!r}")
    if made is None or not len(made):
        return False
    return bool(made.enabled if choice is None else choice)


def bake(scene, fps: float = 30, start=None, end=None, name: str = "mix", springs=None,
         constraints=None) -> AnimationClip:
    """One clip of the mixed motion (actions, blends and layers) from ``start`` to ``end``
    seconds at ``fps`` frames a second: frame k is the mix after ``mixer.time = start`` and k
    ``mixer.update(1 / fps)`` steps (fades and blends move as they do live), keyed at
    ``k / fps`` (the clip starts at 0). ``start`` defaults to 0, ``end`` to the longest playing
    clip's duration over its speed. Every bone, node and morph weight the mix drives gets a
    channel. The mixer and the pose are as they were afterwards.

    Spring bones (``scene.springs``; ``springs``: see :func:`bakes_springs`, by default on
    where the scene has them and they are on) are baked too, as ``render --mix`` draws them
    (:func:`viewer.motion.playback.mix_with_springs`): from rest at mix time 0, stepped at the
    fixed 1/60 s whatever ``fps`` with the mix played to each step's time, so a ``start`` after 0
    is a pre-roll and frame k is the picture at mix time ``start + k / fps``; every spring joint
    gets a rotation channel. With ``springs=False`` the spring joints are as the mix has them. The
    springs too are as they were afterwards.

    Node constraints (``scene.constraints``; ``constraints``: see :func:`bakes_constraints`, by
    default on where the scene has them and they are on) are baked as a frame draws them: after
    the mix, before the springs (the springs' steps apply them), and on each frame's pose as
    ``Scene.prepare()`` does; every constrained node gets a rotation channel, whether the mix
    drives it or not. With ``constraints=False`` those nodes are as the mix has them."""
    fps = finite_number(fps, "bake fps")
    if fps <= 0:
        raise ViewerError(f"bake: fps must be a number > 0, got {fps!r}")
    mixer = scene.mixer
    start = 0.0 if start is None else finite_number(start, "bake start")
    if end is None:
        end = start + mix_length(mixer)
    end = finite_number(end, "bake end")
    if end < start:
        raise ViewerError(f"bake: end ({end:g}) is before start ({start:g})")
    frames = int(math.floor((end - start) * fps + 1e-9)) + 1
    if frames > 100000:
        raise ViewerError(f"bake: {frames} frames is too many (at most 100000)")
    swing = bakes_springs(scene, springs)
    constrain = bakes_constraints(scene, constraints)
    made = scene.__dict__.get("_constraints")
    held_constraints = None if made is None else made.enabled
    state = mixer.hold()
    chains = scene.springs if swing else None
    held_springs = chains.hold() if swing else None
    layout = mixer.layout
    before = layout.read()
    try:
        if made is not None:
            made.enabled = constrain  # the springs' steps apply them, or not
        if swing:
            from .playback import mix_with_springs

            chains.enabled = True
            swung_at = mix_with_springs(scene)  # from rest at mix time 0: a pre-roll up to start
        else:
            mixer.time = start
        poses, driven, morph = [], [np.zeros(layout.rows, dtype=bool) for _ in range(3)], set()
        for k in range(frames):
            if swing:
                swung_at(start + k / fps)
            elif k:
                mixer.update(1.0 / fps)
            if constrain:  # as Scene.prepare() draws the frame: on the pose the springs left
                made.apply_if_changed()
            layout = mixer.layout
            poses.append(layout.read())
            written = mixer._written
            if written is not None:
                for d, w in zip(driven, written[0]):
                    if len(d) == len(w):
                        d |= w
                morph |= written[1]
        times = np.arange(frames) / fps
        # Every spring joint and constrained node keyed, whether the mix drives it or not: their
        # motion is their own.
        keyed = ([joint.bone for joint in chains.joints] if swing else []) + \
            ([constraint.destination for constraint in made] if constrain else [])
        for node in keyed:
            if layout.has(node) and layout.row(node) < len(driven[1]):
                driven[1][layout.row(node)] = True
        channels = []
        for target, row in layout.targets.values():
            for k, path in enumerate(("translation", "rotation", "scale")):
                if row < len(driven[k]) and driven[k][row]:
                    values = np.array([pose[k][row] for pose in poses])
                    channels.append(AnimationChannel(target, path, times, values))
        morph_channels = []
        for key in morph:
            meshes, offset, count = layout.morph[key]
            values = np.array([pose[3][offset:offset + count] for pose in poses])
            morph_channels.append(MorphWeightChannel(meshes, times, values, "LINEAR", f"{name} weights"))
    finally:
        mixer.put_back(state)
        if swing:
            chains.put_back(held_springs)
        if made is not None:
            made.enabled = held_constraints
            made.unsettle()  # the pose put back: the next frame applies them again
        layout = mixer.layout
        every = tuple(np.ones(layout.rows, dtype=bool) for _ in range(3))
        if len(before[0]) == layout.rows:
            layout.write(*before, every, set(layout.morph))
    if morph_channels:
        return MorphAnimationClip(name, channels, morph_channels)
    return AnimationClip(name, channels)

