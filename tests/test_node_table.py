"""TransformNodes as rows of a NodeTable: the public API unchanged (copies, validation,
versions, cached matrices), a glTF scene's nodes in one table, rows reused after a node is
collected, and linked bones gathering their nodes' rows (compiled and numpy's gather alike)."""

from __future__ import annotations

import gc
from pathlib import Path

import numpy as np
import pytest

from viewer.errors import ViewerError
from viewer.model import Bone, NodeTable, Skeleton, TransformNode, native
from viewer.model.transform_node import SHARED_TABLE
from viewer.model.transforms import compose

SAMPLES = Path(__file__).parent / "data" / "gltf-samples"


def test_a_node_is_a_row_of_its_table():
    table = NodeTable(2)
    node = TransformNode("a", table=table)
    assert node.table is table and table.position.shape == (2, 3)
    node.position = (1, 2, 3)
    node.rotation_quaternion = (0, 0, 0.6, 0.8)
    node.scaling = (2, 2, 2)
    row = node.table_row
    np.testing.assert_array_equal(table.position[row], [1, 2, 3])
    np.testing.assert_array_equal(table.quaternion[row], [0, 0, 0.6, 0.8])
    np.testing.assert_array_equal(table.scaling[row], [2, 2, 2])
    assert node.version == table.version[row]
    got = node.position
    with pytest.raises(ValueError):
        got[0] = 5.0  # a read-only copy ...
    node.position = (4, 5, 6)
    np.testing.assert_array_equal(got, [1, 2, 3])  # ... not a view of the row
    with pytest.raises(ViewerError):
        node.rotation_quaternion = (0, 0, 0, 0)
    np.testing.assert_array_equal(node.rotation_quaternion, [0, 0, 0.6, 0.8])


def test_the_table_grows_and_keeps_rows():
    table = NodeTable(1)
    nodes = [TransformNode(f"n{i}", table=table) for i in range(40)]
    for i, node in enumerate(nodes):
        node.position = (i, 0, 0)
    generation = table.generation
    more = [TransformNode(f"m{i}", table=table) for i in range(100)]
    assert table.generation > generation and table.capacity >= 140 and len(table) == 140
    assert [node.position[0] for node in nodes] == list(range(40))
    assert all(node.version >= 1 for node in nodes + more)


def test_versions_and_cached_matrices_follow_every_write():
    parent, child = TransformNode("p"), TransformNode("c")
    child.parent = parent
    world = child.get_world_matrix()
    v = child.version
    child.assign_trs(position=np.array([1.0, 0, 0]))
    assert child.version == v + 1
    parent.set_trs((0, 2, 0), (0, 0, 0, 1), (1, 1, 1))
    moved = child.get_world_matrix()
    assert moved is not world
    np.testing.assert_array_equal(moved[3, :3], [1, 2, 0])
    assert child.get_world_matrix() is moved  # unchanged: the cached one


def test_a_batched_write_sets_the_parts_given_and_moves_each_rows_version():
    table = NodeTable(4)
    parent, child, other = (TransformNode(name, table=table) for name in "pco")
    child.parent = parent
    world = child.get_world_matrix()
    versions = [node.version for node in (parent, child, other)]
    rows = np.array([parent.table_row, child.table_row])
    table.write(rows, position=np.array([[0.0, 2, 0], [1, 0, 0]]))
    assert [node.version for node in (parent, child, other)] == [versions[0] + 1, versions[1] + 1, versions[2]]
    np.testing.assert_array_equal(child.rotation_quaternion, [0, 0, 0, 1])  # the parts not given stay
    np.testing.assert_array_equal(child.scaling, [1, 1, 1])
    moved = child.get_world_matrix()
    assert moved is not world
    np.testing.assert_array_equal(moved[3, :3], [1, 2, 0])
    table.write(rows[:1], np.zeros((1, 3)), np.array([[0, 0, 0.6, 0.8]]), np.full((1, 3), 2.0))
    np.testing.assert_array_equal(parent.rotation_quaternion, [0, 0, 0.6, 0.8])
    np.testing.assert_array_equal(parent.scaling, [2, 2, 2])


def test_rows_are_reused_after_a_node_is_collected_and_versions_only_grow():
    table = NodeTable(4)
    node = TransformNode("a", table=table)
    row = node.table_row
    for _ in range(5):
        node.position = (1, 1, 1)
    seen = node.version
    del node
    gc.collect()
    again = TransformNode("b", table=table)
    assert again.table_row == row and again.version > seen
    np.testing.assert_array_equal(again.position, [0, 0, 0])  # at rest again
    np.testing.assert_array_equal(again.rotation_quaternion, [0, 0, 0, 1])
    np.testing.assert_array_equal(again.scaling, [1, 1, 1])


def test_a_gltf_scene_has_one_table_and_loose_nodes_share_one():
    from viewer import load_gltf

    scene = load_gltf(SAMPLES / "CesiumMan" / "CesiumMan.glb")
    tables = {id(c.node.table) for clip in scene.animations for c in clip.channels}
    assert len(tables) == 1 and next(iter(scene.animations)).channels[0].node.table is not SHARED_TABLE
    assert TransformNode("loose").table is SHARED_TABLE


def _linked_skeleton(tables):
    """Six bones in a chain, bones 1..5 linked to nodes spread over ``tables``."""
    skeleton = Skeleton("s")
    bones, nodes = [], []
    for i in range(6):
        bone = Bone(f"b{i}", skeleton, bones[-1] if bones else None,
                    local_matrix=compose((1, 1, 1), (0, 0, 0, 1), (0, 1, 0)))
        bones.append(bone)
        if i:
            node = TransformNode(f"n{i}", table=tables[i % len(tables)])
            node.set_trs((0, 1, 0), (0, 0, 0, 1), (1, 1, 1))
            bone.link_transform_node(node)
            nodes.append(node)
    return skeleton, nodes


@pytest.mark.parametrize("which", ["numpy", "C"])
def test_linked_bones_gather_changed_rows_from_each_table(which):
    if which == "C" and native.ckernel is None:
        pytest.skip(f"compiled kernel not available: {native.describe()}")
    saved = native.ckernel
    native.ckernel = saved if which == "C" else None
    try:
        skeleton, nodes = _linked_skeleton([NodeTable(2), NodeTable(2), None])
        skeleton.prepare()
        assert all((sync is None) == (which == "numpy") for _, sync, _, _, _ in skeleton.batch._links)
        assert len(skeleton.batch._links) == 3
        rng = np.random.default_rng(4)
        for step in range(6):
            moved = rng.choice(len(nodes), size=2, replace=False)
            for k in moved:
                q = rng.normal(size=4)
                nodes[k].set_trs(rng.normal(size=3), q / np.linalg.norm(q), rng.uniform(0.5, 2, 3))
            skeleton.prepare()
            for node, bone in zip(nodes, skeleton.bones[1:]):
                np.testing.assert_array_equal(bone.position, node.position)
                np.testing.assert_array_equal(bone.rotation_quaternion, node.rotation_quaternion)
                np.testing.assert_array_equal(bone.scaling, node.scaling)
            expected = np.array([b.get_local_matrix() for b in skeleton.bones])
            np.testing.assert_allclose(expected[1:], [compose(n.scaling, n.rotation_quaternion, n.position)
                                                      for n in nodes], rtol=0, atol=1e-12)
        # Nothing moved: nothing copied, the upload stays clean.
        batch = skeleton.batch
        copied = sum(sync(t.position, t.quaternion, t.scaling, t.version) if sync else
                     batch._gather_linked(t, rows, slots) for t, sync, rows, slots, _ in batch._links)
        assert copied == 0
    finally:
        native.ckernel = saved


@pytest.mark.skipif(native.ckernel is None, reason="compiled kernel not available")
def test_link_sync_refuses_a_table_too_short():
    skeleton, nodes = _linked_skeleton([NodeTable(8)])
    skeleton.prepare()
    table, sync, rows, slots, _ = skeleton.batch._links[0]
    with pytest.raises(ValueError):
        sync(table.position[:2], table.quaternion, table.scaling, table.version)
    with pytest.raises(ValueError):
        sync(table.position, table.quaternion, table.scaling, table.version.astype(np.int32))
