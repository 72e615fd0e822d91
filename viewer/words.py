"""Counts in words, for every line a person reads: "1 joint", "2 joints", "1 mesh", "3 meshes"."""

from __future__ import annotations


def counted(count: int, singular: str, plural: str | None = None) -> str:
    """``count`` and the noun that agrees with it; ``plural`` where it is not the regular one
    (singular + "s", or + "es" after s, x, z, ch and sh: mesh, meshes)."""
    return f"{count} {singular if count == 1 else plural or _regular_plural(singular)}"


def _regular_plural(word: str) -> str:
    return word + ("es" if word.endswith(("s", "x", "z", "ch", "sh")) else "s")
