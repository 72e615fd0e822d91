"""The words a mix is made of, shared by the mixer and mix files (which check a file against them
before any mixer is touched)."""

LOOPS = ("repeat", "once", "pingpong")
MODES = ("additive", "override")
PATHS = ("translation", "rotation", "scale")
