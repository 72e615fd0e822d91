"""Shadows of several models side by side (issue 44, item 4; issue 45): one shadow pass fitted to
the whole row, on its one ground: each model's cast shadow falls where the numpy projection of
its posed mesh (moved by its offset) along the light says, the contact shadow darkens the ground
under each model, and each model shadows itself as it does alone at its place."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw

from test_shadows import character, grow, options
from viewer.camera import framed_camera
from viewer.look import key_light_direction
from viewer.model.placed import Placed, PlacedScenes
from viewer.render.headless import HeadlessRenderer
from viewer.render.shadows import CONTACT_FADE


SIZE = (400, 300)


def to_pixels(points, camera):
    """World points -> (x, y) pixels of a SIZE image (y down)."""
    view, projection = camera.view_matrix(), camera.projection_matrix(SIZE[0] / SIZE[1])
    clip = np.concatenate([points, np.ones((len(points), 1))], 1) @ view @ projection
    ndc = clip[:, :2] / clip[:, 3:4]
    return np.stack([(ndc[:, 0] + 1) / 2 * SIZE[0], (1 - ndc[:, 1]) / 2 * SIZE[1]], 1)


@pytest.fixture(scope="module")
def headless():
    with HeadlessRenderer(SIZE) as renderer:
        yield renderer


def row_and_camera():
    scenes = [character(True), character(False)]  # the second's arms hang: it casts another shape
    for scene in scenes:
        scene.prepare()
    row = PlacedScenes.row(scenes, [scene.current_bounds() for scene in scenes])
    camera = framed_camera(row, pitch=50.0, aspect=SIZE[0] / SIZE[1])
    camera.distance *= 1.3
    return row, camera


def projected(placed, towards, camera, ground: float, below: float | None = None) -> np.ndarray:
    """(H, W) bool: ``placed``'s posed mesh (skinned in numpy, moved by its offset) projected
    along ``towards`` onto the ground at ``ground``; ``below``: only triangles with a corner
    within that height of the ground."""
    towards = np.asarray(towards, float)
    image = Image.new("1", SIZE, 0)
    draw = ImageDraw.Draw(image)
    for mesh in placed.scene.meshes:
        points = np.asarray(mesh.skinned_positions(), float) + placed.offset
        on_ground = points - ((points[:, 1] - ground) / towards[1])[:, None] * towards
        pixels = to_pixels(on_ground, camera)
        for triangle in np.asarray(mesh.indices).reshape(-1, 3):
            if below is None or points[triangle, 1].min() - ground < below:
                draw.polygon([tuple(p) for p in pixels[triangle]], fill=1)
    return np.array(image, bool)


def darkened(headless, row, camera, **settings):
    lit = headless.render(row, camera, options(**settings)).astype(int)
    plain = headless.render(row, camera, options(**{**settings, "shadows": False})).astype(int)
    body = headless.render(row, camera, options(**{**settings, "shadows": False,
                                                   "transparent_background": True}))[..., 3] > 0
    return (plain[..., :3] - lit[..., :3]).max(axis=2) > 12, body


@pytest.mark.parametrize("elevation", [60.0, 40.0])
def test_each_model_s_cast_shadow_falls_where_the_projection_says(headless, elevation):
    row, camera = row_and_camera()
    towards = key_light_direction(30.0, elevation)
    dark, body = darkened(headless, row, camera, key_light=towards)
    shadows = [projected(placed, towards, camera, row.ground) for placed in row]
    expected = shadows[0] | shadows[1]
    judged = ~body & ~(grow(expected, 2) & grow(~expected, 2))  # off the bodies and the edges' 2 pixels
    for k, own in enumerate(shadows):
        seen = (own & judged).sum()
        assert seen > 100, f"model {k}'s shadow must be seen on the ground"
        assert (dark & own & judged).sum() >= 0.9 * seen, f"model {k}: {(dark & own & judged).sum()} of {seen}"
    iou = ((dark & expected) & judged).sum() / ((dark | expected) & judged).sum()
    assert iou >= 0.95, f"at {elevation} degrees: IoU {iou:.3f}"


def test_the_contact_shadow_darkens_the_ground_under_each_model(headless):
    row, camera = row_and_camera()
    dark, body = darkened(headless, row, camera, key_light=(0.0, 0.0, 0.0), contact_shadow=True,  # no cast
                          shadow_softness=0.3)
    unders = []
    for placed in row:
        low, high = placed.scene.current_bounds()
        near = CONTACT_FADE * float(high[1] - row.ground) / 2  # the darker half of the fade
        unders.append(projected(placed, (0.0, 1.0, 0.0), camera, row.ground, below=near))
    for k, under in enumerate(unders):
        ground = under & ~body
        assert ground.sum() > 30, k
        assert (dark & ground).sum() >= 0.8 * ground.sum(), f"model {k}: {(dark & ground).sum()} of {ground.sum()}"
    # and not elsewhere: the blur's reach around the feet, no more
    assert (dark & ~grow(unders[0] | unders[1], 12)).sum() <= 0.05 * dark.sum()


def test_each_model_shadows_itself_as_it_does_alone_at_its_place(headless):
    row, camera = row_and_camera()
    towards = key_light_direction(120.0, 40.0)  # from the side: the arms and the legs shadow the body
    settings = dict(key_light=towards, transparent_background=True)
    both = headless.render(row, camera, options(**settings)).astype(int)
    for k, placed in enumerate(row):
        alone_row = PlacedScenes([Placed(placed.scene, placed.offset)], row.ground)
        alone = headless.render(alone_row, camera, options(**settings)).astype(int)
        unshadowed = headless.render(alone_row, camera, options(**{**settings, "shadows": False})).astype(int)
        body = alone[..., 3] > 0
        own = body & ((unshadowed[..., :3] - alone[..., :3]).max(axis=2) > 12)
        assert own.sum() > 40, f"model {k} must shadow itself somewhere"
        differing = body & ((np.abs(both - alone)[..., :3]).max(axis=2) > 12)
        assert differing.sum() <= 0.1 * own.sum(), f"model {k}: {differing.sum()} of {own.sum()} differ"
