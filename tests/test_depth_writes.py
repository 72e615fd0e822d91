"""What writes depth: the ground grid and alpha-blended parts are depth tested but write no
depth (Babylon.js writes none for an alpha-blended draw), so neither hides what is drawn after
it. moderngl keeps the depth mask on each framebuffer: these read the headless framebuffer's
depth and pictures to see that the mask reaches the framebuffer drawn into.
"""

import numpy as np
import pytest

from pbr_scenes import quad
from viewer import Crowd
from viewer.camera import OrbitCamera
from viewer.character import build_character
from viewer.model import Scene, SkinnedMesh, transforms
from viewer.model.material import Material
from viewer.model.mesh import Submesh
from viewer.options import RenderOptions
from viewer.render.headless import HeadlessRenderer

SIZE = (128, 96)
PLAIN = dict(environment="none", show_skeleton=False, transparent_background=True)


@pytest.fixture(scope="module")
def headless():
    with HeadlessRenderer(SIZE) as renderer:
        yield renderer


def depth(headless) -> np.ndarray:
    """The headless framebuffer's depth buffer after a render, top row first (1: cleared)."""
    data = headless.target.framebuffer.read(components=1, attachment=-1, dtype="f4", alignment=1)
    return np.frombuffer(data, np.float32).reshape(SIZE[1], SIZE[0])[::-1]


def card(name, color, degrees, alpha_mode="BLEND") -> SkinnedMesh:
    """A 1.6 x 1.2 card at the origin facing +Z, turned ``degrees`` about Y."""
    material = Material.dielectric(color)
    material.alpha_mode = alpha_mode
    geometry = quad(1.6, 1.2)
    world = transforms.compose([1.0, 1.0, 1.0], transforms.quaternion_from_yaw_pitch_roll([0, np.radians(degrees), 0]),
                               [0.0, 0.0, 0.0])
    indices = np.asarray(geometry["index"])
    return SkinnedMesh(name, geometry["position"], indices, None, normals=geometry["normal"],
                       texcoords=geometry["uv"], world_matrix=world,
                       submeshes=[Submesh(0, len(indices), pbr=material)])


def front() -> OrbitCamera:
    return OrbitCamera(target=(0.0, 0.0, 0.0), distance=3.0, yaw=0.0, pitch=0.0, fov_y=40.0)


def test_the_grid_writes_no_depth(headless):
    scene = Scene("card", [], static_meshes=[card("card", (0.8, 0.3, 0.1, 1.0), 0.0, "OPAQUE")])
    camera = OrbitCamera(target=(0.0, 0.0, 0.0), distance=3.5, yaw=20.0, pitch=25.0, fov_y=40.0)
    without = headless.render(scene, camera, RenderOptions(**PLAIN, show_grid=False))
    without_depth = depth(headless).copy()
    with_grid = headless.render(scene, camera, RenderOptions(**PLAIN, show_grid=True))
    lines = np.any(with_grid != without, axis=-1)
    assert lines.sum() > 300  # the grid is drawn
    assert (without_depth[lines] == 1.0).mean() > 0.9  # mostly on the cleared background
    np.testing.assert_allclose(depth(headless), without_depth, atol=1e-6)  # and leaves its depth


def crossing_cards(first, second):
    """Two translucent cards through each other in an X, seen from the front: the first turned
    +40 degrees (its left half nearer the camera), the second -40 (its right half nearer)."""
    return Scene("cards", [], static_meshes=[card("first", first, 40.0), card("second", second, -40.0)])


def test_a_blended_part_hides_no_blended_part_behind_it_drawn_later(headless):
    """The cards' centres are as far from the camera, so they are drawn in the scene's order;
    each is in front of the other on one side. Where the first drawn is in front, the second
    still shows through it (with depth written, the first hid it there)."""
    red, blue = (0.9, 0.05, 0.05, 0.5), (0.05, 0.05, 0.9, 0.5)
    row = SIZE[1] // 2
    left, right = slice(SIZE[0] // 2 - 18, SIZE[0] // 2 - 4), slice(SIZE[0] // 2 + 4, SIZE[0] // 2 + 18)
    for first, second in ((red, blue), (blue, red)):
        image = headless.render(crossing_cards(first, second), front(), RenderOptions(**PLAIN, show_grid=False))
        for side in (left, right):
            r, b = image[row, side, 0].astype(int), image[row, side, 2].astype(int)
            assert (r > 40).all() and (b > 40).all(), (first, side, r, b)  # both cards seen on each side
    # Opaque, the nearer card hides the other: the check above can fail.
    opaque = Scene("cards", [], static_meshes=[card("first", red[:3] + (1.0,), 40.0, "OPAQUE"),
                                               card("second", blue[:3] + (1.0,), -40.0, "OPAQUE")])
    image = headless.render(opaque, front(), RenderOptions(**PLAIN, show_grid=False))
    r, b = image[row, :, 0].astype(int), image[row, :, 2].astype(int)
    assert (r[left] > b[left] + 100).all() and (b[right] > r[right] + 100).all()


def test_a_blended_part_leaves_the_grid_behind_it_seen(headless):
    """The grid is drawn after the model: a translucent card standing on it lets it show through."""
    scene = Scene("card", [], static_meshes=[card("card", (0.05, 0.05, 0.9, 0.4), 0.0)])
    camera = OrbitCamera(target=(0.0, -0.2, 0.0), distance=3.0, yaw=0.0, pitch=30.0, fov_y=40.0)
    plain = headless.render(scene, camera, RenderOptions(**PLAIN, show_grid=False))
    gridded = headless.render(scene, camera, RenderOptions(**PLAIN, show_grid=True))
    on_card = plain[..., 3] > 0
    changed = np.any(np.abs(gridded.astype(int) - plain.astype(int)) > 3, axis=-1)
    assert on_card.sum() > 1000 and changed[~on_card].sum() > 200  # the card and the grid around it
    assert changed[on_card].mean() > 0.05  # grid lines seen through the card


def test_a_blended_crowd_copy_shows_the_copy_behind_it(headless):
    """One instanced draw, copy 0 (in front) first: copy 1 behind it still shows through it."""
    mesh = build_character().skinned_meshes[0]
    glass = Material.dielectric((0.2, 0.4, 0.9, 0.5))
    glass.alpha_mode = "BLEND"
    mesh.submeshes[0].pbr = glass
    skeletons = [build_character().skeletons[0] for _ in range(2)]
    places = np.array([np.eye(4), np.eye(4)])
    places[1, 3, :3] = (0.3, 0.0, -2.0)  # behind the first, a little to its side
    camera = OrbitCamera(target=(0.0, 1.0, 0.0), distance=5.0, yaw=0.0, pitch=0.0, fov_y=40.0)
    options = RenderOptions(**PLAIN, show_grid=False)
    both = headless.render_crowd(Crowd(mesh, skeletons, places), camera, options)
    alone = places.copy()
    alone[1] = 0.0  # the copy behind shrunk to nothing
    front_only = headless.render_crowd(Crowd(mesh, skeletons, alone), camera, options)
    figure = front_only[..., 3] > 0
    assert figure.sum() > 500
    differs = np.any(np.abs(both.astype(int) - front_only.astype(int)) > 8, axis=-1)
    assert differs[figure].mean() > 0.1  # the copy behind seen through the front one


def two_tone_card(alpha_mode="BLEND", alpha=0.5):
    """A skinned 1.6 x 1.2 card facing +Z, its left half red and its right half blue (vertex
    colours, one submesh: a crowd's copies share its material, and one submesh is one instanced
    draw), every vertex bound to the character's root; unlit, so each half is one flat colour."""
    character = build_character()
    skeleton = character.skeletons[0]
    left, right = quad(0.8, 1.2), quad(0.8, 1.2)
    positions = np.r_[left["position"] - (0.4, 0.0, 0.0), right["position"] + (0.4, 0.0, 0.0)]
    indices = np.r_[left["index"], np.asarray(right["index"]) + len(left["position"])]
    colors = np.r_[np.tile((0.9, 0.05, 0.05, 1.0), (4, 1)), np.tile((0.05, 0.05, 0.9, 1.0), (4, 1))]
    material = Material.dielectric((1.0, 1.0, 1.0, alpha))
    material.alpha_mode, material.unlit, material.double_sided = alpha_mode, True, True
    joints, weights = np.zeros((8, 4), int), np.tile((1.0, 0.0, 0.0, 0.0), (8, 1))
    mesh = SkinnedMesh("card", positions, indices, skeleton, joints, weights,
                       normals=np.r_[left["normal"], right["normal"]], texcoords=np.r_[left["uv"], right["uv"]],
                       colors=colors, submeshes=[Submesh(0, len(indices), pbr=material)])
    return mesh, [skeleton] + [build_character().skeletons[0]]


@pytest.mark.parametrize("front_first", [True, False])
def test_blended_crowd_copies_are_drawn_back_to_front(headless, front_first):
    """Two translucent copies in line from the camera: the front one's red half over the back
    one's blue half. Whatever their instance order, the overlap is red blended over (blue blended
    over the background), from each copy's picture alone: the front copy drawn last."""
    mesh, skeletons = two_tone_card()
    front_place, back_place = np.eye(4), np.eye(4)
    front_place[3, :3] = (0.4, 0.0, 0.0)    # its red half over the middle
    back_place[3, :3] = (-0.4, 0.0, -1.5)   # its blue half behind the middle
    nothing = np.zeros((4, 4))              # a copy shrunk away
    camera = OrbitCamera(target=(0.0, 0.0, 0.0), distance=4.0, yaw=0.0, pitch=0.0, fov_y=40.0)
    options = RenderOptions(environment="none", show_skeleton=False, show_grid=False)

    def picture(front, back):
        places = np.array([front, back] if front_first else [back, front])
        return headless.render_crowd(Crowd(mesh, skeletons, places), camera, options)[..., :3].astype(float)

    both, front, back, empty = (picture(front_place, back_place), picture(front_place, nothing),
                                picture(nothing, back_place), picture(nothing, nothing))
    middle = (slice(SIZE[1] // 2 - 6, SIZE[1] // 2 + 6), slice(SIZE[0] // 2 - 6, SIZE[0] // 2 + 6))
    both, front, back, empty = (image[middle] for image in (both, front, back, empty))
    assert (front[..., 0] > front[..., 2] + 40).all() and (back[..., 2] > back[..., 0] + 40).all()  # red, blue
    right_order = front + 0.5 * (back - empty)    # red over (blue over the background)
    wrong_order = back + 0.5 * (front - empty)    # blue over (red over the background)
    assert np.abs(right_order - wrong_order).max() > 40  # the order shows
    np.testing.assert_allclose(both, right_order, atol=4)


def test_opaque_crowd_copies_hide_by_depth_in_either_order(headless):
    """Opaque, the copies are not sorted (instance order kept): the front one hides the back one
    in the middle in either instance order, the two pictures the same."""
    mesh, skeletons = two_tone_card("OPAQUE", 1.0)
    front_place, back_place = np.eye(4), np.eye(4)
    front_place[3, :3] = (0.4, 0.0, 0.0)
    back_place[3, :3] = (-0.4, 0.0, -1.5)
    camera = OrbitCamera(target=(0.0, 0.0, 0.0), distance=4.0, yaw=0.0, pitch=0.0, fov_y=40.0)
    options = RenderOptions(environment="none", show_skeleton=False, show_grid=False)
    one = headless.render_crowd(Crowd(mesh, skeletons, np.array([front_place, back_place])), camera, options)
    other = headless.render_crowd(Crowd(mesh, skeletons, np.array([back_place, front_place])), camera, options)
    assert np.abs(one.astype(int) - other).max() <= 2  # the same picture but for the rasterizer's rounding
    middle = one[SIZE[1] // 2 - 6: SIZE[1] // 2 + 6, SIZE[0] // 2 - 6: SIZE[0] // 2 + 6].astype(int)
    assert (middle[..., 0] > middle[..., 2] + 100).all()  # the front copy's red
