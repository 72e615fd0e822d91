"""`boneviewer info`: what is in a model file (as gltf-transform's `inspect` or Blender's outliner
would tell): tables on a terminal, one JSON object with --json, the bone tree with --tree."""

from __future__ import annotations

import json
import sys

from ..words import counted
from .common import add_bvh_options, bvh_options, scene_index


def add_parser(commands, common):
    info = commands.add_parser("info", parents=[common], help="what a model file holds: meshes, skins, animations",
                               description="Print what MODEL holds, as the viewer loads it: scenes, nodes, meshes "
                                           "(vertices, influences, morph targets), skins (joints, root, depth), "
                                           "animations (duration, channels, what they target), materials, "
                                           "textures, extensions, and the file's size by part. For a .bvh: its "
                                           "joints, End Sites, channels per joint and their order, frames, frame "
                                           "time, duration, the scale, up axis and facing the loader "
                                           "chose and the generated mesh.")
    info.add_argument("model", help="model file: .gltf, .glb, .fbx, .usd/.usda/.usdc/.usdz or .bvh")
    info.add_argument("--json", action="store_true", help="one JSON object instead of tables")
    info.add_argument("--tree", action="store_true", help="also the bone hierarchy, with each bone's length")
    info.add_argument("--scene", type=scene_index, metavar="N",
                      help="which scene to load for the bone tree (default: the file's default scene)")
    add_bvh_options(info.add_argument_group("BVH, FBX and USD files"))
    info.set_defaults(run=run)


def run(args) -> int:
    from ..gltf.inspect import bone_tree
    from ..loaders import inspect_model

    facts = inspect_model(args.model, args.scene, **bvh_options(args))
    scene = facts.pop("_scene")
    if args.tree:
        facts["bones"] = [{"name": name, "depth": depth, "length": length}
                          for depth, name, length in bone_tree(scene)]
    if args.json:
        json.dump(facts, sys.stdout, indent=2)
        print()
    else:
        print("\n".join(tables(facts)))
    return 0


def _name(value, fallback: str) -> str:
    return fallback if value is None else value


def _bytes(count: int) -> str:
    for unit, size in (("MB", 2**20), ("KB", 2**10)):
        if count >= size:
            return f"{count / size:.1f} {unit}"
    return f"{count} B"


def table(headers, rows) -> list[str]:
    """A plain text table, columns as wide as their widest cell (numbers to the right)."""
    cells = [[str(c) for c in row] for row in rows]
    widths = [max([len(h)] + [len(row[i]) for row in cells]) for i, h in enumerate(headers)]
    numeric = [all(isinstance(row[i], (int, float)) for row in rows) and rows for i in range(len(headers))]

    def line(values):
        return "  ".join(v.rjust(w) if n else v.ljust(w) for v, w, n in zip(values, widths, numeric)).rstrip()

    return [line(headers), line(["-" * w for w in widths])] + [line(row) for row in cells]


def tables(facts: dict) -> list[str]:
    if facts["format"] == "bvh":
        return bvh_tables(facts) + _tree(facts)
    size = facts["size"]
    counts = (f"{counted(facts['nodes'], 'node')}, {counted(len(facts['meshes']), 'mesh')}, "
              f"{counted(len(facts['skins']), 'skin')}, {counted(len(facts['animations']), 'animation')}, "
              f"{counted(facts['materials'], 'material')}, {counted(facts['textures'], 'texture')}")
    if facts["format"] == "fbx":
        fbx = facts["fbx"]
        out = [f"{facts['file']}: FBX {fbx['version']} ({fbx['encoding']}), {_bytes(size['file'])}; {counts}",
               f"written by {fbx['application'] or fbx['creator'] or 'an unnamed application'}; "
               f"{fbx['frame_rate']:g} fps; {fbx['axes']['description']}"]
        out += [f"reader warning: {warning}" for warning in fbx["warnings"]]
        return out + _model_tables(facts) + _tree(facts)
    if facts["format"] == "usd":
        usd = facts["usd"]
        out = [f"{facts['file']}: USD ({usd['encoding']}), {_bytes(size['file'])}; {counts}",
               f"default prim {usd['default_prim'] or '(none)'}; {usd['time_codes_per_second']:g} time codes a second; "
               f"{usd['axes']['description']}"]
        out += [f"reader warning: {warning}" for warning in usd["warnings"]]
        return out + _model_tables(facts) + _tree(facts)
    out = [f"{facts['file']}: glTF {facts['version']} ({facts['format']}), {_bytes(size['file'])}; {counts}"]
    if facts["scenes"]:
        out += ["", "scenes"] + table(["#", "name", "root nodes", "shown"], [
            [i, _name(s["name"], ""), s["nodes"], "yes" if i == facts["scene"] else ""]
            for i, s in enumerate(facts["scenes"])])
    out += _model_tables(facts)
    out += ["", f"extensions used: {', '.join(facts['extensions_used']) or 'none'}; "
                f"required: {', '.join(facts['extensions_required']) or 'none'}"]
    parts = [f"{part} {_bytes(size[part])}" for part in ("geometry", "animation", "skins", "images", "json", "other")
             if size[part]]
    out += [f"size by part: {', '.join(parts)} (file {_bytes(size['file'])})"]
    return out + _tree(facts)


def _model_tables(facts: dict) -> list[str]:
    """The meshes, skins, animations and materials, as every format's tables show them."""
    out = []
    if facts["meshes"]:
        out += ["", "meshes"] + table(["#", "name", "primitives", "vertices", "influences", "morph targets"], [
            [i, _name(m["name"], ""), m["primitives"], m["vertices"], m["influences"],
             ", ".join(m["morph_targets"]) if len(m["morph_targets"]) <= 6 else
             f"{len(m['morph_targets'])}: {', '.join(m['morph_targets'][:6])}, ..."]
            for i, m in enumerate(facts["meshes"])])
    if facts["skins"]:
        out += ["", "skins"] + table(["#", "name", "joints", "root", "depth"], [
            [i, _name(s["name"], ""), s["joints"], s["root"], s["depth"]] for i, s in enumerate(facts["skins"])])
    if facts["animations"]:
        out += ["", "animations"] + table(["#", "name", "duration (s)", "channels", "nodes", "targets",
                                           "interpolation"], [
            [i, _name(a["name"], ""), round(a["duration"], 4), a["channels"], a["nodes"],
             ", ".join(f"{count} {path}" for path, count in a["paths"].items()), ", ".join(a["interpolations"])]
            for i, a in enumerate(facts["animations"])])
        out += [f"  clip {_name(a['name'], f'#{i}')}: point cache of mesh {_name(c['mesh'], '')} (vertex animation, "
                f"{c['samples']} samples from {c['start']:.4g} s to {c['end']:.4g} s, "
                f"{'held' if c['interpolation'] == 'STEP' else 'linear'} between them)"
                for i, a in enumerate(facts["animations"]) for c in a.get("point_caches", ())]
    out += vrm_lines(facts.get("vrm"))
    out += constraint_lines(facts.get("node_constraints"))
    if facts["material_names"]:
        shown = ", ".join(_name(n, f"#{i}") for i, n in enumerate(facts["material_names"][:8]))
        out += ["", f"materials: {shown}{', ...' if len(facts['material_names']) > 8 else ''}; "
                    f"textures: {facts['textures']}; images: {facts['images']}"]
    return out


def vrm_lines(vrm: dict | None) -> list[str]:
    """A VRM avatar's humanoid map, expressions and spring chains."""
    if not vrm:
        return []
    meta = "; ".join(f"{key.replace('_', ' ')} {value}" for key, value in vrm["meta"].items())
    out = ["", f"VRM {vrm['version']}" + (f": {meta}" if meta else "")]
    if vrm["turned"]:
        out.append("facing -Z as VRM 0.x models do: turned half a turn about +Y to face +Z, as glTF's")
    out += ["humanoid map (VRM bone: node)"] + [f"  {bone}: {node}" for bone, node in vrm["humanoid"].items()]
    out += ["expressions: " + (", ".join(e["name"] + ("" if e["preset"] else " (custom)") for e in vrm["expressions"])
                               or "none")]
    out.append(f"spring chains: {vrm['spring_chains']} ({counted(vrm['colliders'], 'collider')})")
    return out


def constraint_lines(constraints: list[dict]) -> list[str]:
    """The node constraints (VRMC_node_constraint), one line each."""
    if not constraints:
        return []
    return ["", f"node constraints: {len(constraints)}"] + [
        f"  {c['node']}: {c['kind']} from {c['source']}" + (f", axis {c['axis']}" if "axis" in c else "")
        + f", weight {c['weight']:g}" for c in constraints]


def bvh_tables(facts: dict) -> list[str]:
    from ..bvh.build import describe_import

    bvh, mesh = facts["bvh"], facts["meshes"][0]
    rate = 1.0 / bvh["frame_time"]
    orders = ", ".join(f"{order} ({count})" for order, count in bvh["rotation_orders"].items()) or "none"
    out = [f"{facts['file']}: BVH motion capture, {_bytes(facts['size']['file'])}; {counted(bvh['joints'], 'joint')}, "
           f"{counted(bvh['end_sites'], 'End Site')}, {counted(bvh['channels'], 'channel')}, "
           f"{counted(bvh['frames'], 'frame')} at "
           f"{bvh['frame_time']:g} s ({rate:.4g} fps), {bvh['duration']:.4g} s",
           f"loaded with {describe_import(dict(bvh, detected=bvh['up_detected']))}; rotation orders: {orders}",
           f"generated mesh: a capsule per bone, {counted(mesh['vertices'], 'vertex', 'vertices')}, rigidly skinned "
           "(one bone each)"]
    out += ["", "joints"] + table(["#", "name", "parent", "line", "channels", "order"], [
        [i, j["name"] + (" (End Site)" if j["end_site"] else ""), j["parent"] or "", j["line"],
         " ".join(j["channels"]) or "-", j["order"] or ""]
        for i, j in enumerate(bvh["hierarchy"])])
    return out


def _tree(facts: dict) -> list[str]:
    if "bones" not in facts:
        return []
    out = ["", "bones (length)"]
    for bone in facts["bones"]:
        length = "" if bone["length"] is None else f"  {bone['length']:.4g}"
        out.append(f"{'  ' * bone['depth']}{bone['name']}{length}")
    return out
