"""The panel's Bone map: it shows the retargeted clip's map, and changing a row makes the clip
again with that row (headless, tests/panel_driver.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from panel_driver import click, headless_session

from viewer import load_bvh, retarget

BVH = Path(__file__).parent / "data" / "bvh"


@pytest.fixture
def session():
    target = load_bvh(BVH / "human_zxy_root_offset.bvh")
    clip = retarget(load_bvh(BVH / "asf_zup_xyz.bvh"), target)
    target.animations.remove(clip)
    target.animations.insert(0, clip)  # as --motion plays it
    with headless_session(scene=target) as session:
        for header in ("Display", "Animation", "Bones"):  # fold what sits above, so the map is on screen
            if header in session.panel.rects:
                click(session, header)
        click(session, "Bone map")
        yield session


def test_the_panel_shows_the_map_and_changes_a_row(session):
    editor = session.editor
    before = editor.retargeting
    assert before.bone_map["Neck"] == "Neck" and "Spine" not in before.bone_map  # ASF has no spine bone
    assert "map/Spine" in session.panel.rects and "map/Neck" in session.panel.rects
    clip_before = editor.clip
    editor.pause()
    editor.seek(0.1)
    spine = session.scene.find_bone("Spine").get_transform_node()
    assert np.allclose(spine.rotation_quaternion, [0, 0, 0, 1])  # unmapped: its rest

    click(session, "map/Spine")  # open the row's list
    session.run(2)  # a popup finds its place in its first frames
    assert "map/Spine/Chest" in session.panel.rects
    click(session, "map/Spine/Chest")
    after = editor.retargeting
    assert after is not before and after.bone_map["Spine"] == "Chest"
    assert editor.clip is after.clip and editor.clip is not clip_before and session.scene.animations[0] is after.clip
    assert editor.status.text == "bone map: Spine <- Chest"
    assert not np.allclose(spine.rotation_quaternion, [0, 0, 0, 1])  # it follows the chest now, same time

    click(session, "map/Spine")
    session.run(2)
    click(session, "map/Spine/(none)")
    assert "Spine" not in editor.retargeting.bone_map
    assert editor.status.text == "bone map: Spine unmapped"
    assert np.allclose(spine.rotation_quaternion, [0, 0, 0, 1])
