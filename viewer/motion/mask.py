"""Bone masks: which bones and nodes an action or a layer moves."""

from __future__ import annotations

import numpy as np

from ..errors import ViewerError


class BoneMask:
    """Bones or nodes by name: ``include`` (only these; default every one), ``exclude`` (never
    these), ``subtree`` (these and everything below them, added to ``include``).

    As Babylon's AnimationGroupMask a name is matched against the bone's or node's own name;
    the morph weights of a mesh count as the mesh's name (an include mask of bones leaves a
    clip's weights channels out, an exclude mask of bones keeps them).
    """

    def __init__(self, include=None, exclude=None, subtree=None):
        self.include = None if include is None else _names(include, "include")
        self.exclude = [] if exclude is None else _names(exclude, "exclude")
        self.subtrees = [] if subtree is None else _names(subtree, "subtree")

    def __repr__(self) -> str:
        parts = []
        if self.include is not None:
            parts.append(f"include={self.include!r}")
        if self.subtrees:
            parts.append(f"subtree={self.subtrees!r}")
        if self.exclude:
            parts.append(f"exclude={self.exclude!r}")
        return f"BoneMask({', '.join(parts)})"

    def to_dict(self) -> dict:
        return {"include": self.include, "exclude": list(self.exclude), "subtree": list(self.subtrees)}

    @classmethod
    def from_value(cls, value) -> "BoneMask | None":
        """None, a BoneMask, a name, a list of names (include) or a dict as ``to_dict`` writes."""
        if value is None or isinstance(value, BoneMask):
            return value
        if isinstance(value, str):
            return cls(include=[value])
        if isinstance(value, dict):
            unknown = set(value) - {"include", "exclude", "subtree"}
            if unknown:
                raise ViewerError(f"mask: unknown keys {sorted(unknown)} (include, exclude, subtree)")
            return cls(value.get("include"), value.get("exclude"), value.get("subtree"))
        if isinstance(value, (list, tuple, set)):
            return cls(include=list(value))
        raise ViewerError(f"mask: expected bone names or a BoneMask, got {value!r}")

    # --- resolving against a scene -----------------------------------------------------------
    def retained(self, scene, layout):
        """(rows (N,) bool of the layout's rows this mask keeps, the set of morph block keys it
        keeps), or a ViewerError naming an unknown bone."""
        named = _named_targets(scene)
        for name in (self.include or []) + self.exclude + self.subtrees:
            if name not in named and name not in _mesh_names(layout):
                known = sorted(named)
                listed = ", ".join(known[:15]) + (", ..." if len(known) > 15 else "")
                raise ViewerError(f"mask: unknown bone or node {name!r} (this model's bones: {listed})")
        rows = np.zeros(layout.rows, dtype=bool)
        if self.include is None and not self.subtrees:
            rows[:] = True
        for name in self.include or []:
            for target in named.get(name, ()):
                if layout.has(target):
                    rows[layout.row(target)] = True
        for name in self.subtrees:
            for top in named.get(name, ()):
                for target in _descendants(top):
                    if layout.has(target):
                        rows[layout.row(target)] = True
        for name in self.exclude:
            for target in named.get(name, ()):
                if layout.has(target):
                    rows[layout.row(target)] = False
        morph = set()
        for key, (meshes, _, _) in layout.morph.items():
            name = meshes[0].name
            keep = (self.include is None and not self.subtrees) or name in (self.include or [])
            if keep and name not in self.exclude:
                morph.add(key)
        return rows, morph


def subtree(name, exclude=None) -> BoneMask:
    return BoneMask(subtree=[name], exclude=exclude)


BoneMask.subtree = staticmethod(subtree)  # BoneMask.subtree("Spine"), as the API names it


def _names(value, what: str) -> list:
    if isinstance(value, str):
        return [value]
    try:
        names = list(value)
    except TypeError:
        raise ViewerError(f"mask {what}: expected bone names, got {value!r}") from None
    for name in names:
        if not isinstance(name, str):
            raise ViewerError(f"mask {what}: bone names must be strings, got {name!r}")
    return names


def _named_targets(scene) -> dict:
    """name -> the pose targets of that name (bones by their name, nodes by theirs)."""
    named: dict = {}
    for skeleton in scene.skeletons:
        for bone in skeleton.bones:
            named.setdefault(bone.name, []).append(bone.get_pose_target())
    for node in scene.nodes:
        named.setdefault(node.name, []).append(node)
    return named


def _mesh_names(layout) -> set:
    return {meshes[0].name for meshes, _, _ in layout.morph.values()}


def _descendants(target) -> list:
    """``target`` and everything below it: TransformNode children, or a bone's children's pose targets."""
    out, stack, seen = [], [target], set()
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        out.append(item)
        children = getattr(item, "children", ())
        for child in children:
            stack.append(child.get_pose_target() if hasattr(child, "get_pose_target") else child)
    return out
