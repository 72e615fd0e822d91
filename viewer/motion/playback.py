"""A mix played at a command's times (``render --mix``, ``export --mix``): the times the bake
keys, so a rendered sequence shows the frames ``bake`` writes.

The first time is ``mixer.time = t`` (every action's time set to t, as the bake's start); each
later one is ``mixer.update(dt)`` by the step from the one before, so fades, cross-fades and
speeds move as they do live. Poses are asked for in any order (the camera frames a sequence on
a spread of its times first): going back starts again from the mix as it was loaded.
"""

from __future__ import annotations


class MixPlayback:
    def __init__(self, mixer, times):
        self.mixer = mixer
        self.times = [float(t) for t in times]
        self._index_of: dict = {}
        for index, time in enumerate(self.times):
            self._index_of.setdefault(time, index)
        self._loaded = mixer.hold()  # the mix as the file made it: where every replay starts
        self._at = None

    def pose_at(self, time) -> None:
        """Write the mix at ``time`` (one of ``times``) into the scene's nodes and morph weights."""
        index = self._index_of[float(time)]
        mixer = self.mixer
        if self._at is None or index < self._at:
            mixer.put_back(self._loaded)
            mixer.time = self.times[0]  # evaluates
            self._at = 0
        if self._at == index:
            mixer.evaluate()  # again: a pose file may have been applied over the last one
            return
        while self._at < index:
            self._at += 1
            mixer.update(self.times[self._at] - self.times[self._at - 1])


class MixClock:
    """The mix at any time ``u`` seconds after ``start``, as it plays: the first call (and any
    call going back) puts back the mix as it was held here and sets ``mixer.time = start``; each
    later one ``mixer.update``s by the time since the one before. The spring bones' driving
    motion for a mix (:func:`mix_with_springs`): they are simulated at a fixed step, so the mix is
    asked for at times no frame lands on."""

    def __init__(self, mixer, start: float):
        self.mixer = mixer
        self.start = float(start)
        self._held = mixer.hold()
        self._now = None

    def __call__(self, u: float) -> None:
        u = float(u)
        mixer = self.mixer
        if self._now is None or u < self._now:
            mixer.put_back(self._held)
            mixer.time = self.start  # evaluates
            self._now = 0.0
            if u <= 0.0:
                return
        if u > self._now:
            mixer.update(u - self._now)
            self._now = u
        else:
            mixer.evaluate()  # again: the springs or a pose file wrote over the last pose


def mix_with_springs(scene, after=None):
    """``pose_at(time)``: the scene's mix (as ``scene.mixer`` holds it now) with its spring bones
    at mix time ``time``, the one rule of every command that draws or bakes a mix with springs
    (render --mix, synth --mix, export --mix --bake, ``viewer.bake``): the springs at rest at mix
    time 0 (``mixer.time = 0``), then stepped at 1/60 s up to ``time`` with the mix played to each
    step's time (``mixer.update``), so a picture at a time does not depend on where a sequence or
    a bake starts. ``after()`` runs after each step's mix (a pose file, expressions over it).
    Times asked for in order continue the simulation; going back starts again from 0."""
    clock = MixClock(scene.mixer, 0.0)
    springs = scene.springs

    def drive(u):
        clock(u)
        if after is not None:
            after()

    springs.restart()  # this clock is new: the simulation starts again from 0

    def pose_at(time) -> None:
        springs.advance_to(time, drive)

    return pose_at
