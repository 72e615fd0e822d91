"""Morph targets (glTF's blend shapes) and their animation (numpy only).

A mesh with morph targets holds, per target, the displacement of every vertex (POSITION,
and NORMAL / TANGENT when the file has them) and one weight per target. The morphed vertex
is ``base + sum_t weight[t] * delta[t]``, computed before skinning, as Babylon.js and glTF do;
normals are renormalized after skinning.

``MorphWeightChannel`` samples a glTF ``weights`` channel (LINEAR / STEP / CUBICSPLINE, as
glTF 2.0 defines them) and writes the weights of its meshes; ``MorphAnimationClip`` is an
AnimationClip that also plays such channels. ``PointCacheChannel`` is a vertex animation (a
mesh's positions at each of several times, USD's time-sampled points) played through the same
targets: each sample after the first a target, the weights one-hot at each sample.
"""

from __future__ import annotations

import copy

import numpy as np

from ..errors import ViewerError
from .checks import OUT_OF_RANGE, finite_number, first_bad_row, fits
from .animation import INTERPOLATIONS, AnimationClip, interpolate_keyframes, keyframes

# The most targets one mesh may have: the GPU path keeps their weights in a uniform array
# (MAX_MORPH_TARGETS / 4 vec4s) beside the bone matrices. Real face rigs use tens.
MAX_MORPH_TARGETS = 256


class MorphTargets:
    """The targets of one mesh: deltas, names and the current weights.

    ``positions``: (targets, vertices, 3) position deltas; ``normals`` and ``tangents``: the
    same shape, or None when no target moves them. ``names``: one string per target (default
    ``morphTarget<i>``, Babylon's). ``weights``: the initial weights (default 0).
    """

    def __init__(self, positions, normals=None, tangents=None, names=None, weights=None, what: str = "mesh"):
        self.what = what
        self.positions = _deltas(positions, None, f"{what} morph target positions")
        count, vertices = self.positions.shape[:2]
        if not 1 <= count <= MAX_MORPH_TARGETS:
            raise ViewerError(f"{what}: {count} morph targets (1 to {MAX_MORPH_TARGETS} are supported)")
        self.normals = None if normals is None else _deltas(normals, (count, vertices), f"{what} morph target normals")
        self.tangents = (None if tangents is None
                         else _deltas(tangents, (count, vertices), f"{what} morph target tangents"))
        names = [f"morphTarget{i}" for i in range(count)] if names is None else [str(n) for n in names]
        if len(names) != count:
            raise ViewerError(f"{what}: {len(names)} morph target names for {count} targets")
        self.names = names
        self._weights = np.zeros(count)
        self.version = 0  # bumped by every weight change (a renderer uploads on change)
        if weights is not None:
            self.weights = weights
        self.default_weights = self.weights.copy()  # as built (the file's), for a reset
        self.default_weights.flags.writeable = False

    def __len__(self) -> int:
        return len(self.positions)

    @property
    def vertex_count(self) -> int:
        return self.positions.shape[1]

    @property
    def weights(self) -> np.ndarray:
        """The weights, (targets,) float64, read-only: assign a whole array or use set_weight."""
        view = self._weights.view()
        view.flags.writeable = False
        return view

    @weights.setter
    def weights(self, values) -> None:
        self._weights = checked_weights(values, len(self), self.what, self.names)
        self.version += 1

    def index(self, key) -> int:
        """The index of a target given by name or by index (an int, or its digits as text)."""
        original = key
        if isinstance(key, str):
            if key in self.names:
                return self.names.index(key)
            if key.strip().isdigit():
                key = int(key)
        if isinstance(key, (int, np.integer)) and not isinstance(key, bool) and 0 <= key < len(self):
            return int(key)
        listed = ", ".join(self.names[:15]) + (", ..." if len(self.names) > 15 else "")
        raise ViewerError(f"{self.what}: no morph target {original!r} (its targets: {listed}; or an index "
                          f"0..{len(self) - 1})")

    def set_weight(self, key, value) -> None:
        """One target's weight, the target given by name or index."""
        index = self.index(key)
        weights = self._weights.copy()
        weights[index] = finite_number(value, f"{self.what} morph target {self.names[index]!r} weight")
        self._weights = weights
        self.version += 1

    def apply(self, positions, normals=None, weights=None, tangents=None) -> tuple:
        """(positions, normals) morphed by ``weights`` (default: the current ones), float64.
        With ``tangents`` ((V,4): xyz and the bitangent sign w), (positions, normals, tangents):
        the TANGENT deltas added to xyz, w kept (glTF's targets move only xyz). Targets at
        weight 0 cost nothing, as in Babylon's ApplyMorph."""
        weights = self._weights if weights is None else checked_weights(weights, len(self), self.what, self.names)
        active = np.flatnonzero(weights)
        morphed = np.asarray(positions, dtype=np.float64)
        normals = None if normals is None else np.asarray(normals, dtype=np.float64)
        if tangents is not None:
            tangents = np.array(tangents, dtype=np.float64)
        if active.size:
            w = weights[active]
            morphed = morphed + np.einsum("t,tvc->vc", w, self.positions[active], dtype=np.float64)
            if normals is not None and self.normals is not None:
                normals = normals + np.einsum("t,tvc->vc", w, self.normals[active], dtype=np.float64)
            if tangents is not None and self.tangents is not None:
                tangents[:, :3] += np.einsum("t,tvc->vc", w, self.tangents[active], dtype=np.float64)
        return (morphed, normals) if tangents is None else (morphed, normals, tangents)

    def copy(self) -> "MorphTargets":
        """The same deltas (shared, they are never written) with their own weights."""
        twin = copy.copy(self)
        twin.names = list(self.names)
        twin.weights = self.weights  # the setter stores its own checked copy
        return twin


def checked_weights(values, count: int, what: str, names=None) -> np.ndarray:
    """``values`` as (count,) float64 that fit float32 (checks.fits), or a ViewerError naming
    ``what`` and the target (by its name in ``names``, else its index)."""
    try:
        array = np.array(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise ViewerError(f"{what} morph weights: expected {count} numbers, got {values!r}") from None
    if array.shape != (count,):
        raise ViewerError(f"{what} morph weights: expected {count} numbers (one per target), got shape {array.shape}")
    if not fits(array):
        bad = first_bad_row(array[:, None])
        target = repr(names[bad]) if names is not None else bad
        raise ViewerError(f"{what} morph weights: target {target} holds {OUT_OF_RANGE}: {float(array[bad])!r}")
    return array


def _deltas(values, shape, what) -> np.ndarray:
    try:
        array = np.asarray(values, dtype=np.float32)
    except (TypeError, ValueError):
        raise ViewerError(f"{what}: expected numbers") from None
    if array.ndim != 3 or array.shape[2] != 3 or (shape is not None and array.shape[:2] != shape):
        expected = "(targets, vertices, 3)" if shape is None else f"({shape[0]}, {shape[1]}, 3)"
        raise ViewerError(f"{what}: expected shape {expected}, got {array.shape}")
    if not np.isfinite(array).all():
        target = int(np.flatnonzero(~np.isfinite(array).all(axis=(1, 2)))[0])
        raise ViewerError(f"{what}: target {target} has NaN or infinity")
    array = np.ascontiguousarray(array)
    array.flags.writeable = False
    return array


# --- animation ----------------------------------------------------------------------------------
class MorphWeightChannel:
    """A glTF ``weights`` channel: keyframes of every target's weight, written into ``meshes``
    (the meshes of the animated node, which share its targets)."""

    def __init__(self, meshes, times, values, interpolation: str = "LINEAR", name: str = "", *, checked: bool = False):
        """``checked=True``: float64 arrays a loader has already checked (as AnimationChannel's)."""
        self.meshes = list(meshes)
        if not self.meshes or any(mesh.morph_targets is None for mesh in self.meshes):
            raise ViewerError(f"weights channel {name!r}: it needs a mesh with morph targets")
        count = len(self.meshes[0].morph_targets)
        what = f"weights channel of mesh {self.meshes[0].name!r}"
        if any(len(mesh.morph_targets) != count for mesh in self.meshes):
            raise ViewerError(f"{what}: its meshes have different numbers of morph targets")
        if interpolation not in INTERPOLATIONS:
            raise ViewerError(f"{what}: unknown interpolation {interpolation!r}")
        self.interpolation = interpolation
        self.times, self.values = keyframes(times, values, interpolation, count, what, checked,
                                            of=f" of {count} targets")

    @property
    def duration(self) -> float:
        return float(self.times[-1])

    def set_keys(self, times, values, interpolation: str) -> None:
        """Replace the keyframes (checked float64 arrays), as AnimationChannel.set_keys."""
        self.times, self.values, self.interpolation = times, values, interpolation

    def sample(self, t: float) -> np.ndarray:
        """The weights at ``t`` seconds (clamped to the keyframes)."""
        return interpolate_keyframes(self.times, self.values, self.interpolation, t)

    def apply(self, t: float) -> None:
        weights = self.sample(t)
        for mesh in self.meshes:
            mesh.morph_weights = weights


class PointCacheChannel(MorphWeightChannel):
    """A point cache (a vertex animation): ``mesh``'s positions at each of ``times`` seconds,
    held as its morph targets, target ``s - 1`` the offsets of sample ``s`` from the first (the
    mesh's own positions). Its keys are one-hot: at sample ``s`` only target ``s - 1`` weighs 1
    (none at the first), so LINEAR blends exactly the two neighbouring samples,
    ``(1 - u) * p[s] + u * p[s + 1]`` as USD interpolates points, STEP holds each sample (USD's
    "held"), and before the first or after the last sample the end one is held. Per-sample
    targets keep the renderer's morph path (deltas in one texture, weights in a uniform array of
    MAX_MORPH_TARGETS): at most two weights are not zero at any time."""

    def __init__(self, mesh, times, interpolation: str = "LINEAR", name: str = ""):
        targets = mesh.morph_targets
        count = 0 if targets is None else len(targets)
        if len(np.asarray(times).reshape(-1)) != count + 1:
            raise ViewerError(f"point cache of mesh {mesh.name!r}: {len(times)} sample times for {count} targets "
                              "(one a sample after the first)")
        values = np.zeros((count + 1, count))
        values[1:] = np.eye(count)
        super().__init__([mesh], times, values, interpolation, name)

    @property
    def samples(self) -> int:
        return len(self.times)


class MorphAnimationClip(AnimationClip):
    """An AnimationClip that also plays ``weights`` channels (after the node channels)."""

    def __init__(self, name: str, channels, morph_channels):
        super().__init__(name, channels)
        self.morph_channels = list(morph_channels)
        self.duration = max([self.duration] + [channel.duration for channel in self.morph_channels])

    def __repr__(self) -> str:
        return (f"AnimationClip({self.name!r}, {len(self.channels)} channels, {len(self.morph_channels)} weights "
                f"channels, {self.duration:.3f} s)")

    def apply(self, t: float) -> None:
        super().apply(t)
        t = float(t)
        for channel in self.morph_channels:
            channel.apply(t)


# --- expressions: named groups of morph weights (VRM's) ------------------------------------------
# VRM's procedural expressions by the override that holds them back (overrideBlink, ...).
PROCEDURAL = {"blink": ("blink", "blinkLeft", "blinkRight"), "lookAt": ("lookUp", "lookDown", "lookLeft", "lookRight"),
              "mouth": ("aa", "ih", "ou", "ee", "oh")}


class Expression:
    """A named group of morph weights: ``binds`` is ``[(meshes, target index, weight)]``, the
    meshes of one node sharing its weights. ``is_binary``: a value above 0.5 counts as 1, else 0;
    ``overrides``: {"blink" | "lookAt" | "mouth": "none" | "block" | "blend"} (VRM 1.0's)."""

    def __init__(self, name: str, binds, is_binary: bool = False, preset: bool = False, overrides=None):
        self.name, self.binds, self.is_binary, self.preset = name, list(binds), bool(is_binary), bool(preset)
        self.overrides = dict(overrides or {})

    def __repr__(self) -> str:
        return f"Expression({self.name!r}, {len(self.binds)} binds)"


class Expressions(dict):
    """{name: Expression}, with each one's weight (``weights``, 0..1) and the morph weights they set, as VRM 1.0's
    expression update does: the targets any expression binds are set to 0, then each expression
    adds its value times each bind's weight (binds that meet add up; the values are clamped to
    0..1, the sums are not, as the spec says and three-vrm does); the procedural ones (blink,
    lookAt, mouth) held back by the others' overrides. Targets no expression binds are left alone."""

    def __init__(self, expressions=()):
        super().__init__((e.name, e) for e in expressions)
        self.weights: dict[str, float] = {}

    def require(self, name) -> "Expression":
        if name not in self:
            listed = ", ".join(self) or "none: the model has no expressions"
            raise ViewerError(f"expression {name!r}: no such expression (the model's expressions: {listed})")
        return self[name]

    def set(self, name, weight) -> None:
        """Expression ``name``'s value (clamped to 0..1) and the morph weights it gives, now."""
        self.require(name)
        value = finite_number(weight, f"expression {name!r} weight")
        self.weights[name] = min(max(value, 0.0), 1.0)
        self.apply()

    def effective(self) -> dict[str, float]:
        """Each expression's value as it acts: binary ones rounded, procedural ones overridden."""
        values = {name: self.weights.get(name, 0.0) for name in self}
        acting = {n: (1.0 if v > 0.5 else 0.0) if self[n].is_binary else v for n, v in values.items()}
        for kind, names in PROCEDURAL.items():
            blocked, blend = False, 0.0
            for name, expression in self.items():
                if name in names or acting[name] <= 0.0:
                    continue
                override = expression.overrides.get(kind, "none")
                blocked |= override == "block"
                blend += acting[name] if override == "blend" else 0.0
            factor = 0.0 if blocked else 1.0 - min(blend, 1.0)
            for name in names:
                if name in acting and factor < 1.0:
                    # A binary expression that is overridden at all is suppressed wholly.
                    acting[name] = 0.0 if self[name].is_binary else acting[name] * factor
        return acting

    def apply(self) -> None:
        """Write the morph weights the values give (nothing before any value is set, so a file's
        own weights and their animation stand)."""
        if not self.weights:
            return
        acting = self.effective()
        totals: dict[int, tuple[list, dict]] = {}  # per node's meshes: {target: weight}
        for name, expression in self.items():
            for meshes, index, weight in expression.binds:
                entry = totals.setdefault(id(meshes[0]), (meshes, {}))[1]
                entry[index] = entry.get(index, 0.0) + acting[name] * weight
        for meshes, entry in totals.values():
            weights = np.array(meshes[0].morph_targets.weights)
            weights[list(entry)] = list(entry.values())
            for mesh in meshes:
                mesh.morph_targets.weights = weights
