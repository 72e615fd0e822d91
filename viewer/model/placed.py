"""Placed scenes: several models side by side, each where the row puts it (numpy only).

A renderer draws a list of (scene, offset); one model is a list of one at offset zero, so one
path draws one model or several. A model keeps its own coordinates (its bones, bounds, checks and
picks are unchanged); the offset only moves where it is drawn and framed.
"""

from __future__ import annotations

import numpy as np

from .mesh import bounds

ROW_GAP = 0.15  # the gap between neighbours, as a fraction of the tallest model's height


class Placed:
    """One scene and the world offset it is drawn at."""

    def __init__(self, scene, offset=(0.0, 0.0, 0.0)):
        self.scene = scene
        self.offset = np.asarray(offset, dtype=np.float64).reshape(3)

    def rest_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        low, high = self.scene.rest_bounds
        return low + self.offset, high + self.offset


class PlacedScenes:
    """The scenes a frame draws, each with its offset (``Placed``), in order.

    ``PlacedScenes.row(scenes)`` stands them in a row along +X on one ground: the first where it
    is, each next one right of the one before with a gap by their rest bounds, its lowest point at
    the first one's lowest point and its depth centred on the first one's (by ``extents``).
    """

    def __init__(self, placements, ground: float | None = None):
        self.placements = [p if isinstance(p, Placed) else Placed(p) for p in placements]
        self.ground = ground  # the height the row stands on (row's); None: the lowest placed rest point

    @classmethod
    def of(cls, scene) -> "PlacedScenes":
        """``scene`` as placed scenes: itself when it already is, else a list of one at zero."""
        return scene if isinstance(scene, PlacedScenes) else cls([Placed(scene)])

    @classmethod
    def row(cls, scenes, extents=None) -> "PlacedScenes":
        """``extents``: each scene's (low, high) to space and ground them by (default: their rest
        bounds; a capture whose rest pose is not where it stands gives its posed bounds)."""
        scenes = list(scenes)
        if not scenes:
            return cls([])
        extents = [s.rest_bounds for s in scenes] if extents is None else list(extents)
        heights = [float(high[1] - low[1]) for low, high in extents]
        widths = [float(high[0] - low[0]) for low, high in extents]
        gap = ROW_GAP * max(max(heights), max(widths), 1e-6)
        first_low, first_high = extents[0]
        ground, depth = float(first_low[1]), float(first_low[2] + first_high[2]) / 2
        placements, right = [Placed(scenes[0])], float(first_high[0])
        for scene, (low, high) in zip(scenes[1:], extents[1:]):
            offset = (right + gap - float(low[0]), ground - float(low[1]), depth - float(low[2] + high[2]) / 2)
            placements.append(Placed(scene, offset))
            right = float(high[0]) + offset[0]
        return cls(placements, ground)

    def __iter__(self):
        return iter(self.placements)

    def __len__(self) -> int:
        return len(self.placements)

    def __getitem__(self, index) -> Placed:
        return self.placements[index]

    @property
    def scenes(self) -> list:
        return [p.scene for p in self.placements]

    @property
    def lights(self) -> list:
        """The first scene's lights (each model is lit by its own when drawn; see the renderer)."""
        return list(getattr(self.placements[0].scene, "lights", ())) if self.placements else []

    @property
    def rest_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """The union of the placed rest bounds."""
        corners = np.array([b for p in self.placements for b in p.rest_bounds()]).reshape(-1, 3)
        return bounds(corners)

    @property
    def ground_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """The rest bounds with their low y on the row's ground: the grid and the shadows' ground
        (a capture whose rest pose is below where its clip stands would sink them otherwise)."""
        low, high = self.rest_bounds
        if self.ground is None:
            return low, high
        low = low.copy()
        low[1] = self.ground
        return low, np.maximum(high, low)

    def current_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """The union of the models' bounds as posed now, placed."""
        corners = []
        for placed in self.placements:
            low, high = placed.scene.current_bounds()
            corners += [low + placed.offset, high + placed.offset]
        return bounds(np.array(corners).reshape(-1, 3))

    def prepare(self) -> None:
        for placed in self.placements:
            placed.scene.prepare()
