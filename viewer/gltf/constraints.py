"""VRMC_node_constraint 1.0: the roll, aim and rotation constraints a glTF or VRM file's nodes
hold, read into the scene's node constraints (viewer.motion.constraints).

Read as @pixiv/three-vrm-node-constraint 3.5's loader reads them: a node's
``extensions.VRMC_node_constraint.constraint`` holds one of ``roll`` (source, rollAxis, weight),
``aim`` (source, aimAxis, weight) or ``rotation`` (source, weight), tried in that order; the
rest rotations are the nodes' rotations as loaded. Bad data (a source the file lacks, a weight
that is not a number from 0 to 1, an axis the specification does not name, constraints that
depend on each other in a circle) is refused with one line when the file requires the
extension; otherwise the model opens without its constraints and a warning says why. A node
whose ``specVersion`` is not 1.0 is skipped alone, with a warning, as three-vrm skips it.
"""

from __future__ import annotations

from ..errors import ViewerError

EXTENSION = "VRMC_node_constraint"
SPEC_VERSIONS = ("1.0", "1.0-beta")  # what three-vrm-node-constraint 3.5 reads; others it skips


def read_constraints(file, scene, nodes) -> None:
    """Add the file's node constraints to ``scene.constraints`` (nothing when it has none)."""
    document = file.document
    specs = document["vrm"].get("node_constraints") or {}
    if not specs:
        return
    from ..motion.constraints import NodeConstraints

    made = NodeConstraints()
    try:
        for index, spec in sorted(specs.items()):
            version = spec.get("specVersion") if isinstance(spec, dict) else None
            if isinstance(spec, dict) and version not in SPEC_VERSIONS:
                # a later version's node is skipped alone, as three-vrm's loader skips it
                file.warn("constraint versions", f"{EXTENSION}: node {index} ({nodes[index].name!r}) has "
                                                 f"specVersion {version!r}, not 1.0: its constraint is not applied")
                continue
            constraint = _constraint(spec, index, nodes)
            if constraint is not None:
                made.add(constraint)
    except ViewerError as error:
        if EXTENSION in document.get("extensionsRequired", ()):
            raise file.error(f"{EXTENSION}: {error}") from None
        # none of them: half a rig's constraints would twist it wrongly
        file.warn("constraints", f"{EXTENSION} ignored: {error}; the model is shown without its node constraints "
                                 "(the file says the extension is optional)")
        return
    scene._constraints = made


def _constraint(spec, index: int, nodes):
    from ..motion.constraints import Constraint

    destination = nodes[index]
    what = f"node {index} ({destination.name!r})"
    if not isinstance(spec, dict):
        raise ViewerError(f"{what}: the extension is not an object")
    body = spec.get("constraint")
    if not isinstance(body, dict):
        raise ViewerError(f"{what}: it has no constraint object")
    for kind, axis_field in (("roll", "rollAxis"), ("aim", "aimAxis"), ("rotation", None)):
        fields = body.get(kind)
        if fields is None:
            continue
        if not isinstance(fields, dict):
            raise ViewerError(f"{what}: its {kind} constraint is not an object")
        source = fields.get("source")
        if isinstance(source, bool) or not isinstance(source, int) or not 0 <= source < len(nodes):
            raise ViewerError(f"{what}: its {kind} constraint names source node {source!r}, which the file does "
                              f"not have (its nodes are 0..{len(nodes) - 1})")
        weight = fields.get("weight", 1.0)
        if isinstance(weight, bool) or not isinstance(weight, (int, float)):
            raise ViewerError(f"{what}: its {kind} constraint's weight {weight!r} is not a number")
        return Constraint(kind, destination, nodes[source], weight, fields.get(axis_field) if axis_field else None)
    raise ViewerError(f"{what}: its constraint is none of roll, aim or rotation")
