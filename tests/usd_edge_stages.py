"""Edge-case USD stages for the USD reader's tests, written as plain .usda text at test time.

Our own stages, made up for these tests: they try the kinds of condition that the USD Working
Group's importer test assets try (<https://github.com/usd-wg/assets>, ``test_assets/``): layer
metadata out of range (a time-code rate of 0 or below, a frame rate of 0, an unknown up axis, a
defaultPrim that is not there), composition arcs to files that are not there, and a mesh's
``points`` or ``normals`` authored as every type usd-core will hold. Plain text, because usd-core's
API refuses to author most of these (an ``int`` where the schema says ``point3f[]``).

``write_stages(folder)`` writes them all and returns {name: path of the stage to open}.
"""

from __future__ import annotations

from pathlib import Path

# A square pyramid: base 2 x 2 on y = 0, apex 1.5 above; a quad and four triangles, 16 corners.
PYRAMID_POINTS = [(-1, 0, -1), (1, 0, -1), (1, 0, 1), (-1, 0, 1), (0, 1.5, 0)]
PYRAMID_COUNTS = [4, 3, 3, 3, 3]
PYRAMID_INDICES = [0, 1, 2, 3, 0, 4, 1, 1, 4, 2, 2, 4, 3, 3, 4, 0]
PYRAMID_EXTENT = (2.0, 1.5, 2.0)
CORNERS = len(PYRAMID_INDICES)
# each face's outward normal, once per corner (faceVarying): sides lean 1 across for 1.5 up
_SIDE = (0.5547, 0.83205)  # a side's normal: (up, out) = (1, 1.5) / |(1, 1.5)|
_FACE_NORMALS = [(0, -1, 0), (0, _SIDE[0], -_SIDE[1]), (_SIDE[1], _SIDE[0], 0), (0, _SIDE[0], _SIDE[1]),
                 (-_SIDE[1], _SIDE[0], 0)]
PYRAMID_NORMALS = [normal for normal, count in zip(_FACE_NORMALS, PYRAMID_COUNTS) for _ in range(count)]

# The timed stages: the box moves 6 units along +y between time codes 12 and 84 (3 s at 24 a second).
MOVE_FROM, MOVE_TO = 12, 84

# Every type a mesh attribute is authored as here: the arrays of three numbers each (drawn) ...
TRIPLE_ARRAYS = ["point3f[]", "float3[]", "color3f[]", "normal3f[]", "point3d[]", "double3[]", "color3d[]",
                 "normal3d[]"]
# ... and what is not (left out, said)
FLAT_ARRAYS = ["int[]", "double[]"]
SINGLES = ["point3f", "float3", "color3f", "normal3f", "int", "double"]


def prim_name(kind: str) -> str:
    """The mesh that holds an attribute of type ``kind``: "normal3d[]" -> "as_normal3d_list"."""
    return "as_" + kind.replace("[]", "_list")


def _tuples(values) -> str:
    return "[" + ", ".join("(" + ", ".join(f"{v:g}" for v in value) + ")" for value in values) + "]"


def _numbers(values) -> str:
    return "[" + ", ".join(f"{v:g}" for v in values) + "]"


def _value(kind: str, triples: list) -> str:
    """``triples`` written as an attribute of type ``kind``: flat arrays and single values get
    numbers of their own (not a geometry anyone could mean)."""
    if kind in TRIPLE_ARRAYS:
        return _tuples(triples)
    if kind == "int[]":
        return _numbers([3 * k + 1 for k in range(len(triples))])
    if kind == "double[]":
        return _numbers([v for triple in triples for v in triple])  # 3 numbers a point, flat: still refused
    if kind == "int":
        return "42"
    if kind == "double":
        return "2.5"
    return "(" + ", ".join(f"{v:g}" for v in triples[-1]) + ")"


def _mesh(name: str, offset: float, body: list[str]) -> str:
    lines = [f'    def Mesh "{name}"', "    {", *(f"        {line}" for line in body),
             f"        double3 xformOp:translate = ({offset:g}, 0, -3)",
             '        uniform token[] xformOpOrder = ["xformOp:translate"]', "    }", ""]
    return "\n".join(lines)


def _topology() -> list[str]:
    return [f"int[] faceVertexCounts = {_numbers(PYRAMID_COUNTS)}",
            f"int[] faceVertexIndices = {_numbers(PYRAMID_INDICES)}"]


def points_stage() -> str:
    """A pyramid whose ``points`` are each type in turn, and one without any."""
    meshes = []
    for k, kind in enumerate(TRIPLE_ARRAYS + FLAT_ARRAYS + SINGLES + [None]):
        name = prim_name(kind) if kind else "no_points"
        points = [f"{kind} points = {_value(kind, PYRAMID_POINTS)}"] if kind else []
        meshes.append(_mesh(name, 3 * k, _topology() + points))
    return _layer('defaultPrim = "Gallery"', 'def Xform "Gallery"\n{\n' + "\n".join(meshes) + "}\n")


def normals_stage() -> str:
    """A pyramid (its points right) whose faceVarying ``normals`` are each type in turn, and one
    without any."""
    meshes = []
    for k, kind in enumerate(TRIPLE_ARRAYS + FLAT_ARRAYS + SINGLES + [None]):
        name = prim_name(kind) if kind else "no_normals"
        body = _topology() + [f"point3f[] points = {_tuples(PYRAMID_POINTS)}"]
        if kind:
            body += [f"{kind} normals = {_value(kind, PYRAMID_NORMALS)} (", '    interpolation = "faceVarying"', ")"]
        meshes.append(_mesh(name, 3 * k, body))
    return _layer('defaultPrim = "Gallery"', 'def Xform "Gallery"\n{\n' + "\n".join(meshes) + "}\n")


def _layer(metadata: str, body: str) -> str:
    return f"#usda 1.0\n(\n    {metadata}\n)\n\n{body}"


def _moving_box() -> str:
    """The sublayer under the timed stages: its own rate left at USD's default (24), a box whose
    translation has time samples."""
    box = [(x, y, z) for z in (-0.75, 0.75) for y in (0, 1.5) for x in (-0.75, 0.75)]
    body = ('def Xform "Yard"\n{\n    def Mesh "crate"\n    {\n'
            "        int[] faceVertexCounts = [4, 4, 4, 4, 4, 4]\n"
            "        int[] faceVertexIndices = [0, 2, 3, 1, 4, 5, 7, 6, 0, 1, 5, 4, 2, 6, 7, 3, 0, 4, 6, 2, 1, 3, 7, 5]\n"
            f"        point3f[] points = {_tuples(box)}\n"
            "        double3 xformOp:translate.timeSamples = {\n"
            f"            {MOVE_FROM}: (2, 0, 0),\n            {MOVE_TO}: (2, 6, 0),\n        }}\n"
            '        uniform token[] xformOpOrder = ["xformOp:translate"]\n    }\n}\n')
    return _layer('defaultPrim = "Yard"', body)


def _ground() -> str:
    """A second, still sublayer: a floor quad."""
    body = ('def Xform "Yard"\n{\n    def Mesh "floor"\n    {\n'
            "        int[] faceVertexCounts = [4]\n        int[] faceVertexIndices = [0, 3, 2, 1]\n"
            "        point3f[] points = [(-5, 0, -5), (5, 0, -5), (5, 0, 5), (-5, 0, 5)]\n    }\n}\n")
    return _layer('defaultPrim = "Yard"', body)


def _over_the_yard(metadata: str) -> str:
    """A root layer of nothing but ``metadata`` over the two sublayers."""
    return ("#usda 1.0\n(\n"
            f"    {metadata}\n    startTimeCode = {MOVE_FROM}\n    endTimeCode = {MOVE_TO}\n"
            "    subLayers = [@parts/moving_box.usda@, @parts/ground.usda@]\n)\n")


def _plain_mesh(name: str) -> str:
    """A pyramid with nothing odd about it."""
    lines = _topology() + [f"point3f[] points = {_tuples(PYRAMID_POINTS)}"]
    return f'def Mesh "{name}"\n{{\n' + "".join(f"    {line}\n" for line in lines) + "}\n"


def write_stages(folder: Path) -> dict[str, Path]:
    """Write every stage under ``folder``; {name: the stage to open}."""
    folder = Path(folder)
    (folder / "parts").mkdir(parents=True, exist_ok=True)
    (folder / "parts" / "moving_box.usda").write_text(_moving_box())
    (folder / "parts" / "ground.usda").write_text(_ground())
    texts = {
        # time codes a second of 0 and of -1 in the root, 24 (the default) in the sublayers
        "rate_zero": _over_the_yard("timeCodesPerSecond = 0"),
        "rate_negative": _over_the_yard("timeCodesPerSecond = -1"),
        "frames_zero": _over_the_yard("framesPerSecond = 0"),
        "up_axis_unknown": _layer('upAxis = "sideways"\n    subLayers = [@parts/ground.usda@]', ""),
        "default_prim_absent": _layer('defaultPrim = "NotHere"', _plain_mesh("pyramid")),
        "sublayer_absent": _layer("subLayers = [@nowhere/lost_layer.usda@]", _plain_mesh("pyramid")),
        "reference_absent": _layer('defaultPrim = "Site"',
                                   'def Xform "Site"\n{\n    def "borrowed" (\n        references = @gone_away.usda@</Thing>\n'
                                   '    )\n    {\n    }\n\n'
                                   + "".join(f"    {line}\n" for line in _plain_mesh("pyramid").splitlines())
                                   + "}\n"),
        "points_of_every_type": points_stage(),
        "normals_of_every_type": normals_stage(),
        "mesh_without_attributes": _layer('defaultPrim = "bare"', 'def Mesh "bare"\n{\n}\n'),
    }
    paths = {}
    for name, text in texts.items():
        paths[name] = folder / f"{name}.usda"
        paths[name].write_text(text)
    return paths
