"""The window's node constraints: the panel's Constraints box (shown only for a model with
VRMC_node_constraint) turns them off, every constrained node back at its rest, and on again.
Driven headless through tests/panel_driver.py."""

from __future__ import annotations

import numpy as np
from panel_driver import click, headless_session

import constraints_cases as cc
from viewer.loaders import load_model


def test_the_panels_constraints_box_turns_them_off_and_on():
    scene = load_model(str(cc.DATA / cc.AVATAR))
    scene.springs.enabled = False
    with headless_session(size=(1024, 800), scene=scene) as session:
        session.editor.pause()
        session.run()
        for constraint in scene.constraints:  # every source turned, so every constraint turns its node
            constraint.source.assign_trs(rotation_quaternion=cc.turn((1.0, 0.6, 0.3), 1.2))
        session.run()
        destinations = [c.destination for c in scene.constraints]
        rests = np.array([c.rest for c in scene.constraints])
        on = np.array([d.rotation_quaternion for d in destinations])
        assert np.abs(on - rests).max() > 0.05
        click(session, "Constraints", near_left=True)
        assert not scene.constraints.enabled and "constraints off" in str(session.editor.status)
        session.run(3)
        np.testing.assert_allclose([d.rotation_quaternion for d in destinations], rests, atol=1e-9)
        click(session, "Constraints", near_left=True)
        session.run()
        assert scene.constraints.enabled
        np.testing.assert_allclose([d.rotation_quaternion for d in destinations], on, atol=1e-9)


def test_a_model_without_node_constraints_has_no_constraints_box():
    from samples import CESIUM_MAN

    with headless_session(size=(1024, 800), scene=load_model(CESIUM_MAN)) as session:
        session.run()
        assert "Constraints" not in session.panel.rects
