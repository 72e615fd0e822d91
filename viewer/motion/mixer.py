"""The animation mixer: actions blended as Babylon.js blends weighted AnimationGroups, layers of
tweaks above them, and 1-D blend nodes (numpy only, no GL).

One mixer per scene (``scene.mixer``). ``mixer.action(clip)`` is the clip's action (the same
object each time); ``mixer.update(dt)`` advances every running action and writes the blend into
the nodes and bones (linked TransformNodes as clips write them) and the morph weights.

The blend, per pose target and path (translation, rotation, scale, a morph weight), is the
one of Babylon.js's late animation bindings (``ProcessLateAnimationBindings`` and
``...ForQuaternions`` in @babylonjs/core's animatable.core.js, read for 9.x):

- the normal (not additive) actions that drive the path are taken in the order they started
  (Babylon registers its runtime animations in the order of its active animatables);
  their weights sum to W;
- vectors and weights: W < 1: ``base * (1 - W) + sum w_i v_i``; W >= 1: ``sum (w_i / W) v_i``
  (one action at W >= 1 gives its own value, unscaled);
- rotations: one action: ``slerp(base, q, min(1, W))``; two at W >= 1: ``slerp(q0, q1, w1 / W)``;
  otherwise a running slerp ``cum = slerp(cum, q_i, w_i / (sum so far))`` starting from the
  base at weight 1 - W when W < 1 (Babylon's Quaternion.SlerpToRef, not renormalized);
- then each additive action adds its delta: ``v += w * (v_clip - v_ref)`` for vectors (scale
  too: Babylon subtracts), ``q = slerp(q, q * (conj(normalize(q_ref)) * q_clip), w)``, as
  ``Animation.MakeAnimationAdditive`` makes the keys and the late binding applies them.

"base" is the node's own value (Babylon's ``originalValue``: what the target held when its first
animation started): here the pose the targets held when the mixer was made (``rebase()`` takes
it again). Where this differs from Babylon, on purpose: one action at weight >= 1 with nothing
else on the path gives the clip's value exactly (Babylon's ``slerp(base, q, 1)`` equals it up to
rounding and the quaternion's sign), so a clip played alone gives ``clip.apply``'s numbers; a
path whose actions all have weight 0 gets the base (Babylon leaves the rotation as it was).

Times: an action's ``time`` advances by ``dt * speed``; the clip is sampled at the time wrapped
into [0, duration] (``repeat``; the end itself stays the last frame, as ``clip_time``), clamped
(``once``: the last frame is held and ``is_running`` turns False), or folded back and forth
(``pingpong``: forward in one duration, back in the next, as three.js's LoopPingPong).
Babylon's own clock computes ``frame = from + (elapsed_ms * fps * speedRatio / 1000) % range``
(``to + ...`` for negative ratios), the same instants; its yoyo loop mode is not a ping-pong
but ``|sin(pi * t / D)| * D`` (eased, one swing per duration): the reference hands Babylon the
ping-pong's frames instead. A non-looping Babylon group that ends stops contributing; here it
holds its last frame (three.js's ``clampWhenFinished``).

Fades are three.js's: ``fade_in``/``fade_out`` ramp a factor on the weight linearly in mixer
time, a finished fade-out stops the action; ``crossfade_to(other, s, warp)`` fades this out and
``other`` in; with ``warp`` the speeds are scaled as three.js's ``crossFadeFrom`` warps them
(outgoing 1 -> D_out/D_in, incoming D_in/D_out -> 1), as factors on ``speed`` that end at 1, so
the speeds end where they started (three.js #11147).
"""

from __future__ import annotations

import itertools
import operator

import numpy as np

from ..errors import ViewerError
from ..model.animation import KEY_TOLERANCE, MODES as INTERPOLATIONS, clip_time, interpolate_keyframes
from ..model import native
from ..model.checks import finite_number
from . import quat
from .mask import BoneMask
from .names import LOOPS, MODES, PATHS
from .pose import PATH_INDEX, ClipSampler, PoseLayout, check_clip_fits, signature


def _weight(value, what: str) -> float:
    number = finite_number(value, what)
    if number < 0:
        raise ViewerError(f"{what}: must be a finite number >= 0, got {value!r}")
    return number


class Action:
    """A clip as the mixer plays it (made by ``Mixer.action``; see the module's docstring)."""

    def __init__(self, mixer: "Mixer", clip):
        self._mixer = mixer
        self.clip = clip
        self._weight = 1.0
        self._speed = 1.0
        self._time = 0.0
        self._loop = "repeat"
        self._additive = False
        self._reference_time = 0.0
        self._reference_clip = None
        self._mask = None
        self._mask_cache = None  # (layout, rows, morph keys)
        self._driven_cache = None  # (sampler, mask cache, rows per path, morph columns)
        self._reference = None   # (layout, reference clip, time, (T, R, S, M))
        self.playing = False
        self.finished = False
        self.order = 0
        self._fade = None        # (start clock, seconds, from, to)
        self._warp = None        # (start clock, seconds, from, to)
        self.managed = None      # the blend node that drives it, if any
        self.enabled = True      # a blend node turns off the clips it does not use now
        self._buffers = None

    def __repr__(self) -> str:
        return (f"Action({self.clip.name!r}, weight={self._weight:g}, speed={self._speed:g}, time={self._time:.3f}, "
                f"loop={self._loop!r}{', additive' if self._additive else ''}{', running' if self.is_running else ''})")

    @property
    def name(self) -> str:
        return self.clip.name

    # --- settings ----------------------------------------------------------------------------
    @property
    def weight(self) -> float:
        return self._weight

    @weight.setter
    def weight(self, value) -> None:
        self._weight = _weight(value, f"action {self.clip.name!r} weight")

    @property
    def speed(self) -> float:
        return self._speed

    @speed.setter
    def speed(self, value) -> None:
        self._speed = finite_number(value, f"action {self.clip.name!r} speed")

    @property
    def time(self) -> float:
        return self._time

    @time.setter
    def time(self, value) -> None:
        self._time = finite_number(value, f"action {self.clip.name!r} time")
        self.finished = False

    @property
    def loop(self) -> str:
        return self._loop

    @loop.setter
    def loop(self, value) -> None:
        if value not in LOOPS:
            raise ViewerError(f"action {self.clip.name!r} loop: expected one of {', '.join(LOOPS)}, got {value!r}")
        self._loop = value
        self.finished = False

    @property
    def additive(self) -> bool:
        return self._additive

    @additive.setter
    def additive(self, value) -> None:
        if not isinstance(value, (bool, np.bool_)):
            raise ViewerError(f"action {self.clip.name!r} additive: expected True or False, got {value!r}")
        self._additive = bool(value)

    @property
    def reference_time(self) -> float:
        return self._reference_time

    @reference_time.setter
    def reference_time(self, value) -> None:
        number = finite_number(value, f"action {self.clip.name!r} reference_time")
        if number < 0:
            raise ViewerError(f"action {self.clip.name!r} reference_time: must be >= 0, got {value!r}")
        self._reference_time = number

    @property
    def reference_clip(self):
        return self._reference_clip

    @reference_clip.setter
    def reference_clip(self, value) -> None:
        self._reference_clip = None if value is None else self._mixer._clip(value, "reference_clip")

    @property
    def mask(self):
        return self._mask

    @mask.setter
    def mask(self, value) -> None:
        mask = BoneMask.from_value(value)
        if mask is not None:
            mask.retained(self._mixer.scene, self._mixer.layout)  # unknown names fail here, nothing set
        self._mask = mask
        self._mask_cache = None

    # --- playing -----------------------------------------------------------------------------
    @property
    def is_running(self) -> bool:
        """Playing and not at the end of a ``once`` clip."""
        return self.playing and not self.finished

    def play(self) -> "Action":
        """Start (or keep) playing from ``time``; actions blend in the order they started."""
        if not self.playing:
            self.playing = True
            self.order = next(self._mixer._orders)
        self.finished = False
        return self

    def stop(self) -> "Action":
        """Stop playing, back to time 0, fades and warps cancelled."""
        self.playing = False
        self.finished = False
        self._time = 0.0
        self._fade = self._warp = None
        return self

    def fade_in(self, seconds) -> "Action":
        """Play, the weight ramping from 0 to ``weight`` over ``seconds`` of mixer time."""
        seconds = self._seconds(seconds, "fade_in")
        self.play()
        self._fade = (self._mixer.clock, seconds, 0.0, 1.0)
        return self

    def fade_out(self, seconds) -> "Action":
        """Ramp the weight to 0 over ``seconds`` of mixer time, then stop (time kept)."""
        seconds = self._seconds(seconds, "fade_out")
        self._fade = (self._mixer.clock, seconds, 1.0, 0.0)
        if seconds == 0:
            self.playing = False
        return self

    def crossfade_to(self, other, seconds, warp: bool = False) -> "Action":
        """Fade this out and ``other`` (an action or a clip name; played if it is not) in over
        ``seconds``: three.js's crossFadeTo. Returns ``other``'s action."""
        seconds = self._seconds(seconds, "crossfade_to")
        other = other if isinstance(other, Action) else self._mixer.action(other)
        if other._mixer is not self._mixer:
            raise ViewerError("crossfade_to: the other action belongs to another mixer")
        if other is self:
            raise ViewerError(f"crossfade_to: action {self.clip.name!r} cannot fade to itself")
        other.fade_in(seconds)
        self.fade_out(seconds)
        if warp and seconds > 0:
            d_in, d_out = other.clip.duration, self.clip.duration
            if d_in > 0 and d_out > 0:
                clock = self._mixer.clock
                self._warp = (clock, seconds, 1.0, d_out / d_in)
                other._warp = (clock, seconds, d_in / d_out, 1.0)
        return other

    def _seconds(self, value, what: str) -> float:
        number = finite_number(value, f"action {self.clip.name!r} {what} seconds")
        if number < 0:
            raise ViewerError(f"action {self.clip.name!r} {what}: seconds must be >= 0, got {value!r}")
        return number

    # --- per step ----------------------------------------------------------------------------
    def envelope(self, clock: float) -> float:
        fade = self._fade
        if fade is None:
            return 1.0
        start, seconds, a, b = fade
        u = 1.0 if seconds <= 0 else min(max((clock - start) / seconds, 0.0), 1.0)
        return a + (b - a) * u

    def effective_weight(self, clock: float) -> float:
        return self._weight * self.envelope(clock)

    def _warp_factor(self, clock: float) -> float:
        warp = self._warp
        if warp is None:
            return 1.0
        start, seconds, a, b = warp
        if clock >= start + seconds:
            self._warp = None  # the warp ends where it started: speed is untouched
            return 1.0
        u = min(max((clock - start) / seconds, 0.0), 1.0)
        return a + (b - a) * u

    def _advance(self, dt: float, clock: float) -> None:
        """One mixer step: time (unless a blend node drives it), then the fade (three.js order:
        the mixer's clock moves first, weights and time scales are read at the new clock)."""
        if self.managed is None and not self.finished:
            rate = self._speed * self._warp_factor(clock)
            self._time += dt * rate
            if self._loop == "once":
                duration = self.clip.duration
                if rate > 0 and self._time >= duration:
                    self._time, self.finished = duration, True
                elif rate < 0 and self._time <= 0.0:
                    self._time, self.finished = 0.0, True
        fade = self._fade
        if fade is not None and clock >= fade[0] + fade[1]:
            self._fade = None
            if fade[3] == 0.0:
                self.playing = False
                self._warp = None

    def sample_time(self) -> float:
        """The clip time the action shows: its time wrapped, clamped or folded by ``loop``."""
        duration = self.clip.duration
        t = self._time
        if duration <= 0:
            return 0.0
        if self._loop == "repeat":
            return clip_time(t, duration)
        if self._loop == "once":
            return min(max(t, 0.0), duration)
        u = t % (2.0 * duration)
        return u if u <= duration else 2.0 * duration - u

    # --- settings as data --------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {"clip": self.clip.name, "weight": self._weight, "speed": self._speed, "time": self._time,
                "loop": self._loop, "additive": self._additive, "reference_time": self._reference_time,
                "reference_clip": None if self._reference_clip is None else self._reference_clip.name,
                "mask": None if self._mask is None else self._mask.to_dict(), "playing": self.playing,
                "order": self.order}


_TRACKS_VERSIONS = itertools.count(1)


class _Tracks(dict):
    """A layer's tracks: a dict whose ``version`` moves (to a number no other tracks have had) on
    every change, so a compiled step knows when its layer changed without looking at every track."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.version = next(_TRACKS_VERSIONS)

    def _changed(self):
        self.version = next(_TRACKS_VERSIONS)

    def __setitem__(self, key, value):
        super().__setitem__(key, value)
        self._changed()

    def __delitem__(self, key):
        super().__delitem__(key)
        self._changed()

    def pop(self, *args):
        self._changed()
        return super().pop(*args)

    def popitem(self):
        self._changed()
        return super().popitem()

    def clear(self):
        super().clear()
        self._changed()

    def update(self, *args, **kwargs):
        super().update(*args, **kwargs)
        self._changed()

    def setdefault(self, key, default=None):
        self._changed()
        return super().setdefault(key, default)

    def __ior__(self, other):
        self.update(other)
        return self


class Layer:
    """Tweaks above the actions: per bone (or node) and path an offset (``additive``: added as an
    additive action adds its delta) or a pose (``override``: blended over the actions by
    ``weight``), held over the whole clip or keyed at times (interpolated linearly, slerp for
    rotations, held before the first key and after the last)."""

    def __init__(self, mixer: "Mixer", name: str, mode: str = "additive", weight: float = 1.0, mask=None,
                 mute: bool = False, solo: bool = False):
        self._mixer = mixer
        self.name = _layer_name(name)
        self.mode = mode
        self.weight = weight
        self.mask = mask
        self.mute = mute
        self.solo = solo
        # id(target) -> (target, {path: (times or None, values (keys, width))})
        self.tracks = {}

    def __repr__(self) -> str:
        return (f"Layer({self.name!r}, {self._mode}, weight={self._weight:g}{', muted' if self._mute else ''}"
                f"{', solo' if self._solo else ''}, "
                f"{len(self.tracks)} bones)")

    @property
    def tracks(self) -> dict:
        return self._tracks

    @tracks.setter
    def tracks(self, value) -> None:
        self._tracks = _Tracks(value)

    @property
    def mode(self) -> str:
        return self._mode

    @mode.setter
    def mode(self, value) -> None:
        if value not in MODES:
            raise ViewerError(f"layer mode: expected one of {', '.join(MODES)}, got {value!r}")
        self._mode = value

    @property
    def weight(self) -> float:
        return self._weight

    @weight.setter
    def weight(self, value) -> None:
        self._weight = _weight(value, "layer weight")

    @property
    def mute(self) -> bool:
        return self._mute

    @mute.setter
    def mute(self, value) -> None:
        if not isinstance(value, (bool, np.bool_)):
            raise ViewerError(f"layer mute: expected True or False, got {value!r}")
        self._mute = bool(value)

    @property
    def solo(self) -> bool:
        """A soloed layer mutes every layer that is not soloed (as a DAW's or Maya's solo); its
        own ``mute`` still holds. The others' ``mute`` flags are left as they are."""
        return self._solo

    @solo.setter
    def solo(self, value) -> None:
        if not isinstance(value, (bool, np.bool_)):
            raise ViewerError(f"layer solo: expected True or False, got {value!r}")
        self._solo = bool(value)

    @property
    def heard(self) -> bool:
        """Whether the layer plays: not muted, and soloed or no layer of its mixer soloed."""
        if self._mute:
            return False
        return self._solo or not any(layer._solo for layer in self._mixer.layers)

    @property
    def mask(self):
        return self._mask

    @mask.setter
    def mask(self, value) -> None:
        mask = BoneMask.from_value(value)
        if mask is not None:
            mask.retained(self._mixer.scene, self._mixer.layout)
        self._mask = mask

    def bones(self) -> list[str]:
        """The names of the bones and nodes this layer holds tracks for."""
        return [target.name for target, _ in self.tracks.values()]

    def key_times(self) -> np.ndarray:
        """Every time some track of this layer has a key (held tracks have none), sorted."""
        times = [t for _, paths in self.tracks.values() for t, _ in paths.values() if t is not None]
        return np.unique(np.concatenate(times)) if times else np.zeros(0)

    def clear(self) -> "Edit":
        """Remove every track of the layer; returns the Edit that undoes it."""
        edit = Edit(self, dict(self.tracks))
        self.tracks = {}
        return edit

    def snapshot(self) -> dict:
        return dict(self.tracks)

    def restore(self, snapshot: dict) -> None:
        self.tracks = dict(snapshot)

    _cache = None

    def compiled(self, layout):
        """{path: (held rows, held values, [(sample, scratch, rows)])}: the tracks packed against
        ``layout`` (keyed tracks sharing key times sampled in one call, by the compiled sampler
        when it is built), kept until the tracks change (every edit replaces a track's entry)."""
        key = tuple(map(id, self.tracks.values()))
        cache = self._cache
        if cache is not None and cache[0] == key and cache[1] is layout:
            return cache[2]
        module = native.ckernel
        plan = {}
        for path in PATHS:
            width = 4 if path == "rotation" else 3
            held_rows, held_values, keyed = [], [], {}
            for target, paths in self.tracks.values():
                if path not in paths or not layout.has(target):
                    continue
                times, values = paths[path]
                row = layout.row(target)
                if times is None or len(times) == 1:
                    held_rows.append(row)
                    held_values.append(values[0])
                else:
                    entry = keyed.setdefault(times.tobytes(), (times, [], []))
                    entry[1].append(row)
                    entry[2].append(values)
            groups = []
            for times, rows, values in keyed.values():
                stacked = np.ascontiguousarray(np.stack(values, axis=1))  # (keys, channels, width)
                if module is not None:
                    sampler = module.Sampler(times, stacked, np.arange(len(rows), dtype=np.int64), width, 0,
                                             path == "rotation")
                    sample = sampler.sample
                else:
                    def sample(t, out, times=times, stacked=stacked, rotation=path == "rotation"):
                        out[:] = interpolate_keyframes(times, stacked, "LINEAR", t, rotation)
                groups.append((sample, np.empty((len(rows), width)), np.array(rows, dtype=np.int64)))
            plan[path] = (np.array(held_rows, dtype=np.int64), np.array(held_values).reshape(-1, width), groups)
        self._cache = (key, layout, plan, list(self.tracks.values()))
        return plan

    def to_dict(self) -> dict:
        tracks = []
        for target, paths in self.tracks.values():
            for path, (times, values) in paths.items():
                tracks.append({"target": target.name, "path": path,
                               "times": None if times is None else [float(t) for t in times],
                               "values": [[float(x) for x in row] for row in values]})
        return {"name": self.name, "weight": self._weight, "mode": self._mode,
                "mask": None if self._mask is None else self._mask.to_dict(), "mute": self._mute, "solo": self._solo,
                "tracks": tracks}


class Edit:
    """A change to a layer's tracks: ``undo()`` puts back what was there before it."""

    def __init__(self, layer: Layer, before: dict, keys=None):
        self.layer = layer
        self._before = before
        self._keys = keys  # None: the whole layer

    def undo(self) -> None:
        layer = self.layer
        if self._keys is None:
            layer.tracks = dict(self._before)
        else:
            for key in self._keys:
                if key in self._before:
                    layer.tracks[key] = self._before[key]
                else:
                    layer.tracks.pop(key, None)
        layer._mixer.evaluate()


class Blend1D:
    """A 1-D blend (Unity's 1D blend tree): clips at positions on a line; ``parameter`` picks the
    two nearest and weights them linearly (clamped at the ends). Their phases stay in step:
    one normalized time advances by ``dt / duration``, the duration blended as the weights, and
    each clip shows that fraction of its own duration."""

    def __init__(self, mixer: "Mixer", name: str, entries):
        self._mixer = mixer
        self.name = str(name)
        try:
            pairs = [(clip, position) for clip, position in entries]
        except (TypeError, ValueError):
            raise ViewerError(f"blend_1d {name!r}: expected (clip, position) pairs, got {entries!r}") from None
        if len(pairs) < 1:
            raise ViewerError(f"blend_1d {name!r}: needs at least one (clip, position) pair")
        clips = [(mixer._clip(clip, f"blend_1d {name!r}"),
                  finite_number(position, f"blend_1d {name!r} position of {clip!r}")) for clip, position in pairs]
        positions = [p for _, p in clips]
        if any(b <= a for a, b in zip(positions, positions[1:])):
            raise ViewerError(f"blend_1d {name!r}: positions must be strictly increasing, got {positions}")
        if len({id(c) for c, _ in clips}) != len(clips):
            raise ViewerError(f"blend_1d {name!r}: a clip appears twice")
        for clip, _ in clips:  # checked before any action is made: a refused blend changes nothing
            existing = mixer._actions.get(id(clip))
            if existing is not None and existing.managed is not None:
                raise ViewerError(f"blend_1d {name!r}: clip {clip.name!r} already belongs to blend "
                                  f"{existing.managed.name!r}")
        actions = [(mixer.action(clip), position) for clip, position in clips]
        self.entries = actions
        self._parameter = positions[0]
        self._weight = 1.0
        self.phase = 0.0
        self.speed = 1.0
        for action, _ in actions:
            action.managed = self
            action.loop = "repeat"
            action.play()
        self._apply()

    @property
    def parameter(self) -> float:
        return self._parameter

    @parameter.setter
    def parameter(self, value) -> None:
        self._parameter = finite_number(value, f"blend_1d {self.name!r} parameter")
        self._apply()

    @property
    def weight(self) -> float:
        return self._weight

    @weight.setter
    def weight(self, value) -> None:
        self._weight = _weight(value, f"blend_1d {self.name!r} weight")
        self._apply()

    def weights(self) -> list[tuple[str, float]]:
        """(clip name, weight within the blend) for each entry, at the current parameter."""
        return [(action.name, w) for (action, _), w in zip(self.entries, self._pick())]

    def _pick(self) -> list[float]:
        positions = [p for _, p in self.entries]
        p = self._parameter
        weights = [0.0] * len(positions)
        if p <= positions[0]:
            weights[0] = 1.0
        elif p >= positions[-1]:
            weights[-1] = 1.0
        else:
            i = int(np.searchsorted(positions, p, side="right")) - 1
            u = (p - positions[i]) / (positions[i + 1] - positions[i])
            weights[i], weights[i + 1] = 1.0 - u, u
        return weights

    def duration(self) -> float:
        return sum(w * action.clip.duration for (action, _), w in zip(self.entries, self._pick()))

    def _apply(self) -> None:
        for (action, _), w in zip(self.entries, self._pick()):
            action.enabled = w > 0
            action._weight = self._weight * w
            action._time = self.phase * action.clip.duration

    def _advance(self, dt: float) -> None:
        duration = self.duration()
        if duration > 0:
            self.phase = (self.phase + dt * self.speed / duration) % 1.0
        self._apply()

    def to_dict(self) -> dict:
        return {"name": self.name, "entries": [[a.name, p] for a, p in self.entries],
                "parameter": self._parameter, "weight": self._weight, "phase": self.phase}


class Mixer:
    """The scene's mixer (see the module's docstring). ``layers`` is ordered bottom to top;
    ``active_layer`` is where edits go (a new mixer's only layer, additive "Tweaks")."""

    def __init__(self, scene):
        self.scene = scene
        self._actions: dict = {}
        self._orders = itertools.count(1)
        self.clock = 0.0
        self._layout = None
        self._base = None
        self._samplers: dict = {}
        self._written = None  # (3 path row masks, morph keys) the last evaluation wrote
        self.layers: list[Layer] = [Layer(self, "Tweaks", "additive", 1.0)]
        self.active_layer = self.layers[0]
        self.blends: dict = {}
        self.compiled = None  # None: the compiled step (and blend) when it is built; False: numpy's (the reference)
        self._stacked = None
        self._plan = None  # _StepPlan: the step compiled for the mix's current structure

    def __repr__(self) -> str:
        return f"Mixer({len(self._actions)} actions, {len(self.layers)} layers)"

    # --- layout and clips --------------------------------------------------------------------
    @property
    def layout(self) -> PoseLayout:
        layout = self._layout
        if layout is None or layout.stale():
            self._relayout()
        return self._layout

    def _relayout(self, extra_targets=(), extra_morph=()) -> None:
        old, old_base = self._layout, self._base
        extra_t = list(extra_targets) + ([] if old is None else list(old.extras))
        extra_m = list(extra_morph) + ([] if old is None else [m for m, _, _ in old.morph.values()])
        layout = PoseLayout(self.scene, extra_t, extra_m)
        base = list(layout.read())
        if old is not None:
            for target, row in old.targets.values():
                if layout.has(target):
                    new = layout.row(target)
                    for k in range(3):
                        base[k][new] = old_base[k][row]
            for key, (meshes, offset, count) in old.morph.items():
                if key in layout.morph:
                    _, new, _ = layout.morph[key]
                    base[3][new:new + count] = old_base[3][offset:offset + count]
        self._layout, self._base = layout, tuple(base)
        self._samplers = {}
        self._written = None
        for action in self._actions.values():
            action._buffers = None
            action._mask_cache = None
            action._reference = None

    def rebase(self) -> None:
        """Take the pose the targets hold now as the base (Babylon's original value)."""
        self._base = self.layout.read()

    def _clip(self, clip, what: str = "action"):
        if isinstance(clip, str):
            found = self.scene.find_animation(clip)
            if found is None:
                names = ", ".join(c.name for c in self.scene.animations) or "none"
                raise ViewerError(f"{what}: unknown clip {clip!r} (this model's clips: {names})")
            return found
        if hasattr(clip, "channels") and hasattr(clip, "duration"):
            return clip
        raise ViewerError(f"{what}: expected a clip name or an AnimationClip, got {clip!r}")

    def _sampler(self, clip) -> ClipSampler:
        layout = self._layout
        if layout is None or layout.stale():
            layout = self.layout
        sampler = self._samplers.get(id(clip))
        if sampler is None or sampler.signature != signature(clip) or sampler.layout is not layout:
            if not check_clip_fits(clip, layout):
                self._relayout([c.node for c in clip.channels], [c.meshes for c in getattr(clip, "morph_channels", ())])
                layout = self._layout
            sampler = ClipSampler(clip, layout)
            self._samplers[id(clip)] = sampler
        return sampler

    # --- actions -----------------------------------------------------------------------------
    def action(self, clip) -> Action:
        """The action of ``clip`` (a name or an AnimationClip of this scene): the same each time."""
        clip = self._clip(clip)
        action = self._actions.get(id(clip))
        if action is None or action.clip is not clip:
            action = Action(self, clip)
            self._actions[id(clip)] = action
        return action

    @property
    def actions(self) -> list[Action]:
        return list(self._actions.values())

    def running(self) -> list[Action]:
        """The actions that contribute now, in the order they started."""
        return sorted((a for a in self._actions.values() if a.playing and a.enabled), key=lambda a: a.order)

    @property
    def time(self) -> float:
        """The clip time of the first running action (where layer keys go), else the clock."""
        lead = self.running()
        return lead[0].sample_time() if lead else self.clock

    @time.setter
    def time(self, value) -> None:
        t = finite_number(value, "mixer time")
        for action in self._actions.values():
            action._time = t
            action.finished = False
        for blend in self.blends.values():
            lead = blend.entries[0][0].clip.duration
            blend.phase = (t / lead) % 1.0 if lead > 0 else 0.0
            blend._apply()
        self.evaluate()

    def stop_all(self) -> None:
        for action in self._actions.values():
            action.stop()

    def blend_1d(self, name: str, entries) -> Blend1D:
        """A 1-D blend of clips by a parameter (see Blend1D); replaces a blend of that name."""
        if not isinstance(name, str) or not name.strip():
            raise ViewerError(f"blend_1d: a name must be a non-empty string, got {name!r}")
        old = self.blends.get(name)
        if old is not None:
            for action, _ in old.entries:
                action.managed = None
        try:
            blend = Blend1D(self, name, entries)
        except ViewerError:
            if old is not None:
                for action, _ in old.entries:
                    action.managed = old
            raise
        self.blends[name] = blend
        return blend

    # --- layers ------------------------------------------------------------------------------
    def new_layer(self, name: str, mode: str = "additive", weight: float = 1.0, mask=None, mute: bool = False,
                  solo: bool = False) -> Layer:
        """A Layer of this mixer, not yet in ``layers`` (a mix file builds its list whole)."""
        return Layer(self, name, mode, weight, mask, mute, solo)

    def add_layer(self, name: str, mode: str = "additive", weight: float = 1.0, mask=None) -> Layer:
        if any(layer.name == name for layer in self.layers):
            raise ViewerError(f"a layer named {name!r} exists already")
        layer = Layer(self, name, mode, weight, mask)
        self.layers.append(layer)
        return layer

    def layer(self, name_or_layer=None) -> Layer:
        """A layer by name (or the Layer itself); None: the active layer."""
        if name_or_layer is None:
            if self.active_layer is None:
                raise ViewerError("the mixer has no layer: add one with add_layer(name)")
            return self.active_layer
        if isinstance(name_or_layer, Layer):
            if name_or_layer not in self.layers:
                raise ViewerError(f"layer {name_or_layer.name!r} is not one of this mixer's")
            return name_or_layer
        for layer in self.layers:
            if layer.name == name_or_layer:
                return layer
        raise ViewerError(f"unknown layer {name_or_layer!r} (layers: {', '.join(l.name for l in self.layers)})")

    def remove_layer(self, layer) -> None:
        layer = self.layer(layer)
        self.layers.remove(layer)
        if self.active_layer is layer:
            self.active_layer = self.layers[0] if self.layers else None

    def target(self, bone):
        """The pose target of ``bone``: a Bone, a TransformNode, or a bone's or node's name."""
        if isinstance(bone, str):
            found = self.scene.find_bone(bone)
            if found is not None:
                return found.get_pose_target()
            for node in self.scene.nodes:
                if node.name == bone:
                    return node
            self.scene.require_bone(bone, "mixer")  # raises, listing the bones
        if hasattr(bone, "get_pose_target"):
            return bone.get_pose_target()
        if hasattr(bone, "table_row") or hasattr(bone, "rotation_quaternion"):
            return bone
        raise ViewerError(f"mixer: expected a bone, a node or a name, got {bone!r}")

    def set_pose(self, bone, position=None, rotation_quaternion=None, scaling=None, *, key: bool = False,
                 time=None, layer=None) -> Edit:
        """Make ``bone`` show the given local pose (any of position, rotation_quaternion,
        scaling) now, by an offset in ``layer`` (default the active one) from what the actions and
        the layers below give at this instant: held over the whole clip, or (``key=True``) keyed
        at ``time`` (default ``mixer.time``; a time given is the offset from what the actions give
        there, every action at that time as ``mixer.time = time`` puts them) and interpolated
        between keys. The clip keeps
        playing with the change on it. Returns the Edit that undoes it."""
        layer = self.layer(layer)
        target = self.target(bone)
        given = {}
        for path, value, width in (("translation", position, 3), ("rotation", rotation_quaternion, 4),
                                   ("scale", scaling, 3)):
            if value is None:
                continue
            array = np.asarray(value, dtype=np.float64) if not isinstance(value, str) else None
            if array is None or array.shape != (width,) or not np.isfinite(array).all():
                raise ViewerError(f"mixer set_pose {target.name!r}: {path} must be {width} finite numbers, "
                                  f"got {value!r}")
            if path == "rotation" and not np.any(array):
                raise ViewerError(f"mixer set_pose {target.name!r}: the zero quaternion is not a rotation")
            given[path] = array
        if not given:
            raise ViewerError(f"mixer set_pose {target.name!r}: give a position, rotation_quaternion or scaling")
        w = layer.weight
        if w <= 0:
            raise ViewerError(f"mixer set_pose: layer {layer.name!r} has weight 0, an offset there would not show")
        at = self.time if time is None else finite_number(time, "mixer set_pose time")
        if key and at < 0:
            raise ViewerError(f"mixer set_pose: a key time must be >= 0, got {at}")
        layout = self.layout
        if not layout.has(target):
            self._relayout([target])
            layout = self._layout
        row = layout.row(target)
        if time is None:
            T, R, S, _ = self._blend(upto=self.layers.index(layer))[:4]
        else:  # what the actions give at that time: every action there for the moment (as mixer.time = t)
            saved = [(action, action._time, action.finished) for action in self._actions.values()]
            try:
                for action, _, _ in saved:
                    action._time, action.finished = at, False
                T, R, S, _ = self._blend(upto=self.layers.index(layer))[:4]
            finally:
                for action, when, finished in saved:
                    action._time, action.finished = when, finished
        below = {"translation": T[row], "rotation": R[row], "scale": S[row]}
        offsets = {}
        for path, value in given.items():
            now = below[path]
            if path == "rotation":
                delta = quat.multiply(quat.conjugate(quat.normalize(now)), quat.normalize(value))
                if w != 1.0:
                    delta = quat.power(delta, 1.0 / w)
                offsets[path] = delta if layer.mode == "additive" else (
                    quat.normalize(value) if w == 1.0 else quat.multiply(now, delta))
            else:
                delta = (value - now) / w
                offsets[path] = delta if layer.mode == "additive" else now + delta
        key_id = id(target)
        before = {key_id: layer.tracks[key_id]} if key_id in layer.tracks else {}
        paths = dict(layer.tracks[key_id][1]) if key_id in layer.tracks else {}
        for path, value in offsets.items():
            old = paths.get(path)
            if not key or old is None or old[0] is None:
                paths[path] = (None, value[None].copy()) if not key else (np.array([at]), value[None].copy())
            else:
                times, values = old
                same = np.flatnonzero(np.abs(times - at) <= KEY_TOLERANCE)
                if same.size:
                    values = values.copy()
                    values[same[0]] = value
                else:
                    i = int(np.searchsorted(times, at))
                    times, values = np.insert(times, i, at), np.insert(values, i, value, axis=0)
                paths[path] = (times, values)
        layer.tracks[key_id] = (target, paths)
        self.evaluate()
        return Edit(layer, before, [key_id])

    def key(self, bone, position=None, rotation_quaternion=None, scaling=None, *, time=None, layer=None) -> Edit:
        """``set_pose(..., key=True)``: the offset keyed at ``time`` (default ``mixer.time``)."""
        return self.set_pose(bone, position, rotation_quaternion, scaling, key=True, time=time, layer=layer)

    def set_poses(self, poses, *, key: bool = False, time=None, layer=None) -> Edit:
        """``set_pose`` for many bones at once (what an editor's gesture or a streamed pose sets):
        ``poses`` maps a bone (a Bone, a node or a name) to {"position": ..., "rotation_quaternion":
        ..., "scaling": ...} (any of them). Every value is checked before anything changes; the
        actions and the layers below are blended once and the mix written once, so a pose of a
        whole skeleton costs about what one bone does. A rotation shows as the unit quaternion
        given, to rounding, however far from unit the clip's own is. Returns the one Edit that
        undoes them all."""
        layer = self.layer(layer)
        entries = {path: ([], []) for path in PATHS}
        for bone, parts in poses.items():
            target = self.target(bone)
            unknown = set(parts) - set(_POSE_PATHS)
            if unknown:
                raise ViewerError(f"mixer set_poses {target.name!r}: unknown part {sorted(unknown)[0]!r} "
                                  f"(position, rotation_quaternion, scaling)")
            for name, value in parts.items():
                if value is None:
                    continue
                path, width = _POSE_PATHS[name]
                array = np.asarray(value, dtype=np.float64) if not isinstance(value, str) else None
                if array is None or array.shape != (width,) or not np.isfinite(array).all():
                    raise ViewerError(f"mixer set_pose {target.name!r}: {path} must be {width} finite numbers, "
                                      f"got {value!r}")
                if path == "rotation" and not np.any(array):
                    raise ViewerError(f"mixer set_pose {target.name!r}: the zero quaternion is not a rotation")
                entries[path][0].append(target)
                entries[path][1].append(array)
        return self._set_offsets(layer, {path: (targets, np.array(values)) for path, (targets, values)
                                         in entries.items() if targets}, key, time)

    def set_pose_rows(self, bones, positions=None, rotation_quaternions=None, scalings=None, *, key: bool = False,
                      time=None, layer=None) -> Edit:
        """``set_poses`` with the values as rows: (N, 3), (N, 4), (N, 3) arrays (or None) for the N
        ``bones`` (Bones, nodes or names; one named twice: the later row wins), checked whole. What
        a streamed pose costs: no Python work per value, only per bone."""
        layer = self.layer(layer)
        targets = [self.target(bone) for bone in bones]
        entries = {}
        for path, values, width in (("translation", positions, 3), ("rotation", rotation_quaternions, 4),
                                    ("scale", scalings, 3)):
            if values is None:
                continue
            array = np.asarray(values, dtype=np.float64)
            if array.shape != (len(targets), width) or not np.isfinite(array).all():
                raise ViewerError(f"mixer set_pose_rows: {path} must be {len(targets)} rows of {width} finite numbers")
            if path == "rotation" and not array.any(axis=1).all():
                bad = targets[int(np.argmin(array.any(axis=1)))].name
                raise ViewerError(f"mixer set_pose {bad!r}: the zero quaternion is not a rotation")
            entries[path] = (targets, array)
        return self._set_offsets(layer, entries, key, time)

    def _set_offsets(self, layer, entries, key, time) -> Edit:
        """The offsets that make each target show its value now, into ``layer`` (see set_pose);
        ``entries``: {path: (targets, (n, width) values)}, checked."""
        w = layer.weight
        if w <= 0:
            raise ViewerError(f"mixer set_pose: layer {layer.name!r} has weight 0, an offset there would not show")
        at = self.time if time is None else finite_number(time, "mixer set_pose time")
        if key and at < 0:
            raise ViewerError(f"mixer set_pose: a key time must be >= 0, got {at}")
        if not entries:
            return Edit(layer, {}, [])
        layout = self.layout
        missing = [target for targets, _ in entries.values() for target in targets if not layout.has(target)]
        if missing:
            self._relayout(missing)
            layout = self._layout
        if time is None:
            T, R, S, _ = self._blend(upto=self.layers.index(layer))[:4]
        else:  # as set_pose: every action at that time for the moment
            saved = [(action, action._time, action.finished) for action in self._actions.values()]
            try:
                for action, _, _ in saved:
                    action._time, action.finished = at, False
                T, R, S, _ = self._blend(upto=self.layers.index(layer))[:4]
            finally:
                for action, when, finished in saved:
                    action._time, action.finished = when, finished
        below = {"translation": T, "rotation": R, "scale": S}
        tracks = layer.tracks
        before, order = {}, []
        for path, (targets, values) in entries.items():
            rows = np.fromiter((layout.row(target) for target in targets), dtype=np.int64, count=len(targets))
            now = below[path][rows]
            if path == "rotation":  # set_pose's arithmetic, row by row
                unit = quat.normalize(values)
                # now's inverse (set_pose takes its conjugate, normalized): a clip's float32 rotations
                # are not quite unit, and the bone must show the unit rotation asked for, not |now| times it
                delta = quat.multiply(_inverse(now), unit)
                if w != 1.0:
                    delta = quat.power(delta, 1.0 / w)
                out = delta if layer.mode == "additive" else (unit if w == 1.0 else quat.multiply(now, delta))
            else:
                delta = (values - now) / w
                out = delta if layer.mode == "additive" else now + delta
            for target, value in zip(targets, out):
                key_id = id(target)
                old = tracks.get(key_id)
                if key_id not in before:
                    before[key_id] = old
                    order.append(key_id)
                paths = dict(old[1]) if old is not None else {}
                paths[path] = _track_with(paths.get(path), value, key, at)
                tracks[key_id] = (target, paths)
        self.evaluate()
        return Edit(layer, {key_id: old for key_id, old in before.items() if old is not None}, order)

    def clear_bone(self, bone, layer=None) -> Edit:
        """Remove ``bone``'s tracks from ``layer`` (default the active one): it follows its clip again."""
        layer = self.layer(layer)
        target = self.target(bone)
        key_id = id(target)
        before = {key_id: layer.tracks[key_id]} if key_id in layer.tracks else {}
        layer.tracks.pop(key_id, None)
        self.evaluate()
        return Edit(layer, before, [key_id])

    def clear_layer(self, layer=None) -> Edit:
        edit = self.layer(layer).clear()
        self.evaluate()
        return edit

    # --- stepping ----------------------------------------------------------------------------
    def update(self, dt) -> None:
        """Advance the clock and every playing action by ``dt`` seconds, then write the blend."""
        if type(dt) is not float or not -1e18 <= dt <= 1e18:
            dt = finite_number(dt, "mixer update dt")
        self.clock = clock = self.clock + dt
        for action in self._actions.values():
            if action.playing:
                if (action._fade is None and action._warp is None and action.managed is None
                        and action._loop != "once" and not action.finished):
                    action._time += dt * action._speed  # _advance's arithmetic, its common case inlined
                else:
                    action._advance(dt, clock)
        if self.blends:
            for blend in self.blends.values():
                blend._advance(dt)
        self.evaluate()

    def evaluate(self) -> None:
        """Write the blend of the actions as they are now (no time passes)."""
        plan = self._plan
        if plan is not None:
            # the compiled step of the mix as it was: run it while nothing but times and weights moved
            table = plan.table
            if (self._layout is plan.layout and self._base is plan.base and self.compiled is not False
                    and native.ckernel is plan.module
                    and (table is None or table.generation == plan.generation and table.capacity == plan.capacity)
                    and (not plan.references or all(clip.keys_version == version for clip, version in plan.references))
                    and (plan.blended or self._direct_sampler(plan.running[0]) is None)
                    and self._run_plan(plan)):  # the actions' and layers' stamps checked there
                return
            self._plan = None
        running = [a for a in self._actions.values() if a.playing and a.enabled]
        if len(running) > 1:
            running.sort(key=_order)
        layers = [layer for layer in self.layers if layer._tracks and layer.heard and layer._weight > 0]
        if not running and not layers and self._written is None:
            return  # nothing drives anything, nothing to give back
        if len(running) == 1 and not layers:
            # one action at full weight: the clip sampled straight into the nodes (clip.apply's numbers)
            action = running[0]
            sampler = self._sampler(action.clip)
            written = self._written
            if (not action._additive and action._mask is None and sampler.direct
                    and (action._fade is None and action._weight >= 1.0 or action.effective_weight(self.clock) >= 1.0)
                    and (written is None or written[0] is sampler.driven or (
                        all(not (w & ~d).any() for w, d in zip(written[0], sampler.driven))
                        and written[1] <= set(sampler.morph_keys)))):
                sampler.sample_direct(action.sample_time())
                if written is None or written[0] is not sampler.driven:
                    self._written = (sampler.driven, set(sampler.morph_keys))
                return
        if self.compiled is not False and (running or layers):
            plan = self._make_plan(running, layers)
            if plan is not None and self._run_plan(plan):
                self._plan = plan
                return
        T, R, S, M, driven, morph = self._blend(running=running, layers=layers)
        rows, morph_all = driven, morph
        written = self._written
        if written is not None:  # rows no longer driven go back to their base
            rows = [r | w for r, w in zip(driven, written[0])]
            morph_all = morph | written[1]
        self.layout.write(T, R, S, M, rows, morph_all)
        self._written = (driven, morph) if running or layers else None

    def _direct_sampler(self, action):
        """The sampler that writes ``action``'s clip straight into the table when it plays alone
        (not additive, no mask, at full weight, nothing else written last time), else None: the
        test ``evaluate`` makes inline (kept in step with it)."""
        sampler = self._sampler(action.clip)
        written = self._written
        if (not action._additive and action._mask is None and sampler.direct
                and (action._fade is None and action._weight >= 1.0 or action.effective_weight(self.clock) >= 1.0)
                and (written is None or written[0] is sampler.driven or (
                    all(not (w & ~d).any() for w, d in zip(written[0], sampler.driven))
                    and written[1] <= set(sampler.morph_keys)))):
            return sampler
        return None

    # --- the step compiled ----------------------------------------------------------------------
    def _run_plan(self, plan) -> bool:
        """One step by csrc/ckernel.c's Plan, if the mix is still the one it was made for (its
        ``step`` checks the actions' and layers' stamps and reads their times and weights): every
        action sampled into its buffer, the blend, the layers, the table's rows written (versions
        bumped) and the morph weights set, in one call. False (nothing done) when the mix changed."""
        if not plan.step(self._actions, self.layers, self.clock):
            return False
        if plan.extras:
            T, R, S = plan.out[:3]
            for target, row, translation, rotation, scale in plan.extras:
                if translation:
                    target.position = T[row]
                if rotation:
                    target.rotation_quaternion = R[row]
                if scale:
                    target.scaling = S[row]
        written = self._written
        if written is not plan.written:
            if written is not None:  # rows no longer driven go back to their base (the plan's out there)
                rows = [w & ~r for w, r in zip(written[0], plan.written[0])]
                self._layout.write(*plan.out, rows, written[1] - plan.written[1])
            self._written = plan.written
        return True

    def _make_plan(self, running, layers):
        module = native.ckernel
        if module is None or not hasattr(module, "Plan") or len(running) > 64 or len(layers) > 64:
            return None
        for action in running:  # samplers first: a clip with new targets may make the layout again
            self._sampler(action.clip)
            if action._additive:
                self._sampler(action._reference_clip or action.clip)
        layout = self.layout
        N, K = layout.rows, layout.morph_width
        rows = [np.zeros(N, dtype=bool) for _ in range(3)]
        morph_cols = np.zeros(K, dtype=bool)
        entries, stacked, flags = [], [[], [], [], []], []
        for action in running:
            sampler = self._sampler(action.clip)
            if any(group.compiled is None for group in sampler.groups):
                return None
            samples = [(group.compiled, PATH_INDEX[group.path]) for group in sampler.groups]
            for channel, offset, count, _ in sampler.morph:  # each weight a channel of width 1, into M's columns
                values = np.ascontiguousarray(channel.values[..., None])
                samples.append((module.Sampler(channel.times, values, np.arange(offset, offset + count, dtype=np.int64),
                                               1, INTERPOLATIONS[channel.interpolation], False), 3))
            driven, morph_driven = self._driven_of(action, sampler, layout)
            refs = self._reference_of(action, layout) if action._additive else None
            entries.append((tuple(samples), tuple(self._action_buffers(action, layout)),
                            None if refs is None else tuple(refs)))
            for k in range(3):
                stacked[k].append(driven[k])
                rows[k] |= driven[k]
            stacked[3].append(morph_driven)
            morph_cols |= morph_driven
            flags.append(action._additive)
        driven_all = tuple(np.stack(parts) if parts else np.zeros((0, width), dtype=bool)
                           for parts, width in zip(stacked, (N, N, N, K)))
        layer_entries = []
        for layer in layers:
            mask = None if layer.mask is None else np.ascontiguousarray(self._layer_mask(layer, layout), dtype=bool)
            ops = []
            for path, (held_rows, held_values, groups) in layer.compiled(layout).items():
                k = PATH_INDEX[path]
                index = [held_rows]
                if len(held_rows):
                    ops.append((k, None, np.ascontiguousarray(held_values, dtype=np.float64), held_rows))
                for sample, out, group_rows in groups:
                    sampler = getattr(sample, "__self__", None)
                    if not isinstance(sampler, module.Sampler):
                        return None
                    ops.append((k, sampler, out, group_rows))
                    index.append(group_rows)
                index = np.concatenate(index)
                rows[k][index if mask is None else index[mask[index]]] = True
            layer_entries.append((layer.mode == "additive", mask, tuple(ops)))
        out = (np.empty((N, 3)), np.empty((N, 4)), np.empty((N, 3)), np.empty(K))
        table, cap = layout.table, layout.capacity
        table_arg = None if table is None or not cap else (table.position, table.quaternion, table.scaling,
                                                              table.version, cap)
        morph_keys = {key for key, (_, offset, count) in layout.morph.items() if morph_cols[offset:offset + count].any()}
        morph = tuple((out[3][offset:offset + count], tuple(meshes))
                      for key, (meshes, offset, count) in layout.morph.items() if key in morph_keys)
        compiled = module.Plan(N, K, (*self._base,), out, tuple(entries), driven_all, np.array(flags, dtype=bool),
                               tuple(layer_entries), table_arg, tuple(rows), morph)
        plan = _StepPlan()
        plan.run, plan.out, plan.written, plan.running, plan.layers = compiled.run, out, (rows, morph_keys), running, layers
        plan.extras = [(layout.extras[row - cap], row, rows[0][row], rows[1][row], rows[2][row])
                       for row in range(cap, N) if rows[0][row] or rows[1][row] or rows[2][row]]
        plan.layout, plan.base, plan.module, plan.table = layout, self._base, module, table
        plan.generation, plan.capacity = (None, None) if table is None else (table.generation, table.capacity)
        actions = tuple(self._actions.values())
        compiled.watch(actions, tuple(map(_ACTION_STAMP, actions)), _ACTION_FIELDS, tuple(running), tuple(layers),
                       tuple(map(_LAYER_STAMP, layers)), _LAYER_FIELDS)
        plan.step = compiled.step
        plan.references = [(action._reference_clip, action._reference_clip.keys_version) for action in running
                           if action._additive and action._reference_clip is not None]
        plan.blended = len(running) > 1 or bool(layers)
        return plan

    # --- the blend ---------------------------------------------------------------------------
    def _action_buffers(self, action, layout):
        if action._buffers is None or action._buffers[0].shape[0] != layout.rows or \
                action._buffers[3].shape[0] != layout.morph_width:
            action._buffers = (np.zeros((layout.rows, 3)), np.tile([0.0, 0, 0, 1], (layout.rows, 1)),
                               np.ones((layout.rows, 3)), np.zeros(layout.morph_width))
        return action._buffers

    def _driven_of(self, action, sampler, layout):
        """(rows per path, morph columns) the action drives: its clip's, less what its mask leaves
        out (kept until the sampler or the mask changes)."""
        if action._mask is None:
            return sampler.driven, sampler.morph_driven
        cache = action._driven_cache
        if cache is not None and cache[0] is sampler and cache[1] is action._mask_cache:
            return cache[2], cache[3]
        mask_rows, mask_morph = self._mask_of(action, layout)
        driven = [d & mask_rows for d in sampler.driven]
        morph_driven = sampler.morph_driven.copy()
        for key in sampler.morph_keys:
            if key not in mask_morph:
                _, offset, count = layout.morph[key]
                morph_driven[offset:offset + count] = False
        action._driven_cache = (sampler, action._mask_cache, driven, morph_driven)
        return driven, morph_driven

    def _mask_of(self, action, layout):
        if action._mask is None:
            return None, None
        cache = action._mask_cache
        if cache is None or cache[0] is not layout:
            rows, morph = action._mask.retained(self.scene, layout)
            cache = action._mask_cache = (layout, rows, morph)
        return cache[1], cache[2]

    def _reference_of(self, action, layout):
        ref_clip = action._reference_clip or action.clip
        cache = action._reference
        if cache is not None and cache[0] is layout and cache[1] is ref_clip and cache[2] == action._reference_time \
                and cache[3] == signature(ref_clip):
            return cache[4]
        sampler = self._sampler(ref_clip)
        layout = self._layout
        T, R, S, M = (b.copy() for b in self._base)
        sampler.sample(action._reference_time, T, R, S, M)
        R = quat.conjugate(quat.normalize(R))
        action._reference = (layout, ref_clip, action._reference_time, signature(ref_clip), (T, R, S, M))
        return T, R, S, M

    def _blend(self, running=None, layers=None, upto=None):
        """(T, R, S, M, rows driven per path, morph keys driven): the actions' blend and the
        layers (all, or those below index ``upto``) over the base pose."""
        if running is None:
            running = self.running()
        for action in running:  # samplers first: a clip with new targets may make the layout again
            self._sampler(action.clip)
            if action._additive:
                self._sampler(action._reference_clip or action.clip)
        layout = self.layout
        clock = self.clock
        normal, additive = [], []
        for action in running:
            w = action.effective_weight(clock)
            sampler = self._sampler(action.clip)
            T, R, S, M = self._action_buffers(action, layout)
            sampler.sample(action.sample_time(), T, R, S, M)
            driven, morph_driven = self._driven_of(action, sampler, layout)
            entry = (action, w, (T, R, S, M), driven, morph_driven)
            (additive if action._additive else normal).append(entry)

        module = native.ckernel if self.compiled is not False else None
        blended = None
        if module is not None and hasattr(module, "blend_rows") and (normal or additive):
            blended = self._blend_compiled(module, normal + additive, layout)
        if blended is None:
            blended = self._blend_numpy(normal, additive, layout)
        T_out, R_out, S_out, M_out, rows, morph_cols = blended
        # layers
        chosen = self.layers if upto is None else self.layers[:upto]
        if layers is None:
            layers = [layer for layer in chosen if layer.tracks and layer.heard and layer.weight > 0]
        else:
            layers = [layer for layer in layers if layer in chosen]
        if layers:
            t = running[0].sample_time() if running else self.clock  # mixer.time, the running list at hand
            for layer in layers:
                self._apply_layer(layer, t, layout, T_out, R_out, S_out, rows)
        morph = {key for key, (_, offset, count) in layout.morph.items() if morph_cols[offset:offset + count].any()}
        return T_out, R_out, S_out, M_out, rows, morph

    def _blend_numpy(self, normal, additive, layout):
        """The reference blend (numpy): see the module's docstring; ``_blend_compiled`` is its twin."""
        base_T, base_R, base_S, base_M = self._base
        N, K = layout.rows, layout.morph_width
        rows = [np.zeros(N, dtype=bool) for _ in range(3)]
        morph_cols = np.zeros(K, dtype=bool)
        # vectors: translation, scale, morph weights
        out = []
        for k, base in ((0, base_T), (2, base_S), (3, base_M)):
            W = np.zeros(len(base))
            for _, w, values, driven, morph_driven in normal:
                d = morph_driven if k == 3 else driven[k]
                W += w * d
            low = W < 1.0
            result = base * np.where(low, 1.0 - W, 0.0)[:, None] if k != 3 else base * np.where(low, 1.0 - W, 0.0)
            norm = np.where(low, 1.0, W)
            for _, w, values, driven, morph_driven in normal:
                d = morph_driven if k == 3 else driven[k]
                scale = np.where(d, w / norm, 0.0)
                result = result + (values[k] * (scale[:, None] if k != 3 else scale))
                if k == 3:
                    morph_cols |= d
                else:
                    rows[k] |= d
            out.append(result)
        T_out, S_out, M_out = out
        # rotations
        W = np.zeros(N)
        count = np.zeros(N, dtype=np.int64)
        for _, w, values, driven, _ in normal:
            W += w * driven[1]
            count += driven[1]
        R_out = base_R.copy()
        if normal:
            low = W < 1.0
            norm = np.where(low, 1.0, W)
            cum = base_R.copy()
            started = low & (count >= 2)
            amount = np.where(started, 1.0 - W, 0.0)
            seen = np.zeros(N, dtype=np.int64)
            shortcut = (~low) & (count == 2)
            for _, w, values, driven, _ in normal:
                d = driven[1]
                q = values[1]
                wn = w / norm
                new = d & ~started
                cont = d & started
                if new.any():
                    cum[new] = q[new]
                    amount[new] = wn[new]
                if cont.any():
                    amount[cont] += wn[cont]
                    with np.errstate(divide="ignore", invalid="ignore"):
                        u = np.where(amount > 0, wn / amount, 0.0)
                    u = np.where(shortcut & (seen == 1), wn, u)
                    cum[cont] = quat.slerp(cum[cont], q[cont], u[cont])
                started |= d
                seen += d
            R_out = np.where((count >= 1)[:, None], cum, base_R)
            single = count == 1
            partial = single & (W < 1.0)
            if partial.any():
                R_out[partial] = quat.slerp(base_R[partial], cum[partial], W[partial])
            rows[1] |= count >= 1
        # additive actions
        for action, w, values, driven, morph_driven in additive:
            ref_T, ref_R, ref_S, ref_M = self._reference_of(action, layout)
            T, R, S, M = values
            for k in (0, 2):
                d = driven[k]
                rows[k] |= d
                if w:
                    delta = (T - ref_T) if k == 0 else (S - ref_S)
                    target = T_out if k == 0 else S_out
                    target[d] += delta[d] * w
            d = driven[1]
            rows[1] |= d
            if w and d.any():
                delta = quat.multiply(ref_R[d], R[d])
                now = R_out[d]
                R_out[d] = quat.slerp(now, quat.multiply(now, delta), np.full(int(d.sum()), w))
            morph_cols |= morph_driven
            if w:
                M_out[morph_driven] += (M - ref_M)[morph_driven] * w
        return T_out, R_out, S_out, M_out, rows, morph_cols

    def _blend_compiled(self, module, entries, layout):
        """csrc/ckernel.c's blend_rows, once per path: the numpy blend's arithmetic in one call."""
        base_T, base_R, base_S, base_M = self._base
        N, K = layout.rows, layout.morph_width
        weights = np.array([w for _, w, _, _, _ in entries])
        key = tuple((id(entry[3]), id(entry[4]), entry[0]._additive) for entry in entries)
        cache = self._stacked
        if cache is None or cache[0] != key or cache[1] is not layout:
            # the driven rows of the actions stacked, per path (they change when a clip, a mask or the set
            # of running actions does, not every step); the entries' arrays are held so their ids stay theirs
            stacked = [np.stack([entry[3][k] for entry in entries]) for k in range(3)]
            stacked.append(np.stack([entry[4] for entry in entries]))
            flags = np.array([entry[0]._additive for entry in entries], dtype=bool)
            cache = self._stacked = (key, layout, stacked, flags, [(e[3], e[4]) for e in entries])
        stacked, flags = cache[2], cache[3]
        refs_of = [self._reference_of(entry[0], layout) if entry[0]._additive else None for entry in entries]
        out = []
        rows = []
        for k, base, width in ((0, base_T, 3), (1, base_R, 4), (2, base_S, 3)):
            values = tuple(entry[2][k] for entry in entries)
            refs = tuple(entry[2][k] if ref is None else ref[k] for entry, ref in zip(entries, refs_of))
            result, flag = np.empty((N, width)), np.zeros(N, dtype=bool)
            if module.blend_rows(result, base, values, refs, weights, stacked[k], flags, flag, N, width, k == 1) < 0:
                return None
            out.append(result)
            rows.append(flag)
        M_out, morph_cols = np.empty(K), np.zeros(K, dtype=bool)
        if K:
            values = tuple(entry[2][3] for entry in entries)
            refs = tuple(entry[2][3] if ref is None else ref[3] for entry, ref in zip(entries, refs_of))
            if module.blend_rows(M_out, base_M, values, refs, weights, stacked[3], flags, morph_cols, K, 1, False) < 0:
                return None
        return out[0], out[1], out[2], M_out, rows, morph_cols

    def _apply_layer(self, layer, t, layout, T, R, S, rows) -> None:
        mask_rows = None if layer.mask is None else self._layer_mask(layer, layout)
        w = layer.weight
        module = native.ckernel if self.compiled is not False else None
        if mask_rows is None and module is not None and hasattr(module, "layer_rows"):
            # csrc/ckernel.c's layer_rows: the numpy below, track group by track group
            additive, n = layer.mode == "additive", layout.rows
            for path, (held_rows, held_values, groups) in layer.compiled(layout).items():
                k = PATH_INDEX[path]
                array, width = (T, 3) if k == 0 else (R, 4) if k == 1 else (S, 3)
                if len(held_rows):
                    module.layer_rows(array, held_values, held_rows, rows[k], n, len(held_rows), width, w, additive,
                                      k == 1)
                for sample, out, group_rows in groups:
                    sample(t, out)
                    module.layer_rows(array, out, group_rows, rows[k], n, len(group_rows), width, w, additive, k == 1)
            return
        for path, (held_rows, held_values, groups) in layer.compiled(layout).items():
            index, values = held_rows, held_values
            if groups:
                parts_rows, parts_values = [held_rows], [held_values]
                for sample, out, group_rows in groups:
                    sample(t, out)
                    parts_rows.append(group_rows)
                    parts_values.append(out)
                index, values = np.concatenate(parts_rows), np.concatenate(parts_values)
            if mask_rows is not None:
                keep = mask_rows[index]
                index, values = index[keep], values[keep]
            if not len(index):
                continue
            k = PATH_INDEX[path]
            rows[k][index] = True
            if path == "rotation":
                now = R[index]
                if layer.mode == "additive":
                    turned = quat.multiply(now, values)
                    R[index] = turned if w == 1.0 else quat.slerp(now, turned, np.full(len(index), w))
                else:
                    R[index] = values if w == 1.0 else quat.slerp(now, values, np.full(len(index), w))
            else:
                array = T if path == "translation" else S
                if layer.mode == "additive":
                    array[index] += values * w
                else:
                    array[index] = values if w == 1.0 else array[index] * (1.0 - w) + values * w

    def _layer_mask(self, layer, layout):
        cache = getattr(layer, "_mask_rows", None)
        if cache is None or cache[0] is not layer.mask or cache[1] is not layout:
            cache = layer._mask_rows = (layer.mask, layout, layer.mask.retained(self.scene, layout)[0])
        return cache[2]

    # --- state -------------------------------------------------------------------------------
    _ACTION_STATE = ("_weight", "_speed", "_time", "_loop", "_additive", "_reference_time", "_reference_clip", "_mask",
                     "_mask_cache", "playing", "finished", "order", "_fade", "_warp", "managed", "enabled")

    def hold(self):
        """Everything the mixer is now, kept as it is (the same Action, Layer and Blend1D objects);
        ``put_back(held)`` puts it back: what bake uses to leave the mix as it found it."""
        return {
            "clock": self.clock, "orders": self._orders, "written": self._written,
            # keyed as _actions is (by the clip's id), so put_back gives action(clip) the same Action
            "actions": {key: (a, {k: getattr(a, k) for k in self._ACTION_STATE}) for key, a in self._actions.items()},
            "layers": [(layer, dict(layer.tracks), layer._weight, layer._mode, layer._mask, layer._mute, layer._solo)
                       for layer in self.layers],
            "active": self.active_layer,
            "blends": {name: (blend, blend._parameter, blend._weight, blend.phase) for name, blend in self.blends.items()},
        }

    def put_back(self, held) -> None:
        self.clock, self._orders, self._written = held["clock"], held["orders"], held["written"]
        for key in list(self._actions):
            if key not in held["actions"]:
                del self._actions[key]
        for key, (action, state) in held["actions"].items():
            self._actions[key] = action
            for name, value in state.items():
                setattr(action, name, value)
        self.layers = []
        for layer, tracks, weight, mode, mask, mute, solo in held["layers"]:
            layer.tracks, layer._weight, layer._mode, layer._mask, layer._mute = tracks, weight, mode, mask, mute
            layer._solo = solo
            self.layers.append(layer)
        self.active_layer = held["active"]
        self.blends = {}
        for name, (blend, parameter, weight, phase) in held["blends"].items():
            blend._parameter, blend._weight, blend.phase = parameter, weight, phase
            self.blends[name] = blend
            blend._apply()

    def snapshot(self) -> dict:
        """The whole mix as data (what ``save`` writes); ``restore`` takes it back (making the
        actions' settings, and new Layer objects, as it says: as ``load`` does)."""
        from .files import mix_to_dict
        return mix_to_dict(self)

    def restore(self, state: dict) -> None:
        from .files import apply_mix
        apply_mix(self, state, "mix state")

    def save(self, path) -> None:
        from .files import save_mix
        save_mix(self, path)

    def load(self, path) -> None:
        from .files import load_mix
        load_mix(self, path)


class _StepPlan:
    """A compiled step (csrc/ckernel.c's Plan's ``run``), its output buffers and what it was made for
    (``Mixer.evaluate`` runs it while these stay as they were)."""

    __slots__ = ("run", "step", "out", "written", "running", "layers", "extras", "layout", "base", "module", "table",
                 "generation", "capacity", "references", "blended")


# what a compiled step depends on besides times and weights: recorded when the plan is made, compared by
# the plan's step (csrc/ckernel.c) every step; a name in a tuple is a path (clip.keys_version)
_ACTION_FIELDS = ("playing", "enabled", "order", "_additive", "_mask", "_reference_clip", "_reference_time",
                  ("clip", "keys_version"))
_LAYER_FIELDS = ("_mode", "_mask", ("_tracks", "version"))
_ACTION_STAMP = operator.attrgetter(*(".".join(f) if isinstance(f, tuple) else f for f in _ACTION_FIELDS))
_LAYER_STAMP = operator.attrgetter(*(".".join(f) if isinstance(f, tuple) else f for f in _LAYER_FIELDS))


def _order(action) -> int:
    return action.order


def _layer_name(name) -> str:
    if not isinstance(name, str) or not name.strip():
        raise ViewerError(f"a layer name must be a non-empty string, got {name!r}")
    return name


def _inverse(q):
    """Quaternion inverses, row-wise: conj(q) / |q|^2 (q * inverse(q) is the identity, unit or not)."""
    q = np.asarray(q, dtype=np.float64)
    return quat.conjugate(q) / (q * q).sum(axis=-1, keepdims=True)


def _track_with(old, value, key: bool, at: float):
    """A layer track (times or None, values) with ``value`` held (``key`` False: the track
    replaced) or keyed at ``at`` (a key there replaced, else one inserted in time order)."""
    if not key or old is None or old[0] is None:
        return (None, value[None].copy()) if not key else (np.array([at]), value[None].copy())
    times, values = old
    same = np.flatnonzero(np.abs(times - at) <= KEY_TOLERANCE)
    if same.size:
        values = values.copy()
        values[same[0]] = value
        return times, values
    i = int(np.searchsorted(times, at))
    return np.insert(times, i, at), np.insert(values, i, value, axis=0)


_POSE_PATHS = {"position": ("translation", 3), "rotation_quaternion": ("rotation", 4), "scaling": ("scale", 3)}
