"""A procedural wave: the built-in character's arms, driven by code.

    boneviewer view --script examples/wave.py --watch
    boneviewer render --script examples/wave.py --frames 0:0.95:0.05 --out-dir frames/

With --watch, change a number below and save: the running window picks it up within half a
second, keeping its camera. t is the time in seconds (the built-in character has no clip, so it
is the script's clock; in `render` the sequence time), so a render is the same on every machine.
"""

import math

WAVES_PER_SECOND = 1.0
RAISED = 115.0   # degrees about Z for the waving arm (30: hanging as bound)
SWING = 25.0     # degrees each way
SWAY = 12.0      # degrees the other arm swings with it


def setup(app):
    app.log(f"wave.py: {WAVES_PER_SECOND:g} waves per second")


def update(app, t, dt):
    phase = 2.0 * math.pi * WAVES_PER_SECOND * t
    # get_pose_target(): where a bone's pose lives (the bone itself here; a glTF joint node there).
    left = app.find_bone("leftArm").get_pose_target()
    right = app.find_bone("rightArm").get_pose_target()
    left.rotation = [0.0, 0.0, math.radians(RAISED + SWING * math.sin(phase))]    # Babylon's (x, y, z)
    right.rotation = [0.0, 0.0, math.radians(-30.0 - SWAY * math.sin(phase))]
