"""A synth run: the catalogue of models (each loaded once here, to list its clips, retarget the
captures and size the depth scale), the images mapped in runs over the local pool or Ray
(``job.render_images``), each image's files written whole as its results come back (its label
file last, so an image with a label file is complete), then annotations.json and index.html
assembled from the label files. An interrupted run resumes: images whose label file carries this
run's key are not redone.

OUT/synth.json, the manifest, is written before the first image: the run's options (by the
flags that give them), its key and every input file's digest. A later run into the same OUT
resumes it when all of those agree; otherwise it is refused, naming what differs, unless
--force, which first removes what synth owns there (its numbered files in images/, depth/,
parts/ and labels/, annotations.json, index.html, the manifest, their temporary files) and
nothing else. So OUT never holds files that annotations.json does not list.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np

from ..errors import ViewerError
from ..files import write_file, write_files
from ..look import BUILT_IN_ENVIRONMENTS
from .job import (JOB_VERSION, Catalogue, ClipEntry, ModelEntry, SynthOptions, capture_scene, image_name, render_images,
                  retargeted_clip)

OUTPUT_FOLDERS = ("images", "depth", "parts", "labels")
ANNOTATIONS = "annotations.json"
MANIFEST = "synth.json"
# The names synth writes in its folders (NNNNNN.png, NNNNNN.json) and the hidden temporary names
# files.write_files renames from (.NNNNNN.tmpPID-K.png): what --force may remove, and nothing else.
NUMBERED = re.compile(r"^\.?(\d{6})(\.tmp\d+-\d+)?\.(png|json)$")
TOP_LEVEL = re.compile(r"^(annotations\.json|index\.html|synth\.json|\.(annotations|index|synth)\.tmp\d+-\d+\.(json|html))$")
# The flags that give each option, to name the ones a rerun changes.
OPTION_FLAGS = {"size": "--size", "seed": "--seed", "pitch": "--pitch", "fill": "--fill",
                "target_offset": "--target-offset", "fov": "--fov", "occlusion_distance": "--occlusion-distance",
                "min_visible": "--min-visible", "min_area": "--min-area", "backgrounds": "--backgrounds",
                "environments": "--environment", "environment_rotation": "--environment-rotation",
                "exposure": "--exposure", "tone_mapping": "--tone-mapping", "environment_filter": "--environment-filter",
                "skinning": "--skinning", "springs": "--springs"}
LOAD_FLAGS = {"bvh_scale": "--bvh-scale", "bvh_up": "--bvh-up", "bvh_forward": "--bvh-forward",
              "file_axes": "--keep-file-axes"}
IMAGES_PER_TASK = 8  # images a worker renders per task: its writer thread overlaps them
MOTION_SUFFIXES = (".bvh",)
DEPTH_HEADROOM = 2.0  # a posed character's extent, at most this times its rest box's diagonal
# Below this many 16-bit depth steps per character height (one step over 0.1% of it) a model's
# depth is called coarse: one depth_scale serves the run, set by its largest model.
FINE_DEPTH_STEPS = 1000


def model_inputs(source: Path) -> tuple[list, bool]:
    """([(path, name relative to the input)], whether the input is a folder)."""
    from ..checks import MODEL_SUFFIXES, model_files

    if source.is_dir():
        files = model_files(source)
        if not files:
            raise ViewerError(f"{source}: no model files ({', '.join(MODEL_SUFFIXES)}) in this folder")
        return [(path, path.relative_to(source).as_posix()) for path in files], True
    return [(source, source.name)], False


def motion_inputs(motion: Path | None) -> list:
    """The captures of --motion: a .bvh file, or every .bvh file under a folder."""
    if motion is None:
        return []
    if motion.is_dir():
        from ..checks import model_files

        files = model_files(motion, MOTION_SUFFIXES)
        if not files:
            raise ViewerError(f"--motion {motion}: no .bvh captures in this folder")
        return files
    return [motion]


def bone_map_for(bone_map: Path | None, path: Path, name: str) -> Path | None:
    """The bone map file that applies to the model ``path`` (``name``: its path relative to the
    input): --bone-map FILE for every model; --bone-map DIR: DIR/<name with .json for its
    suffix>, else DIR/<its file stem>.json, else none (the naming schemes map it)."""
    if bone_map is None or not bone_map.is_dir():
        return bone_map
    for candidate in (bone_map / Path(name).with_suffix(".json"), bone_map / f"{path.stem}.json"):
        if candidate.is_file():
            return candidate
    return None


GIVE_A_MAP = ": give a bone map"  # how a retargeting without a map ends its error


class MotionReport:
    """What --motion came to, said in one line: the captures retargeted onto how many models,
    the (model, capture) pairs left out and why, captures that do not load, the models that
    keep only their own clips, and those left out with no clip at all."""

    def __init__(self):
        self.models = 0
        self.fitted: dict = {}     # model name -> the captures retargeted onto it
        self.left_out: list = []   # (model name, capture name, why)
        self.unloadable: list = []  # (capture name, why)
        self.own_instead: list = []  # models no capture fits, drawn with their own clips
        self.dropped: list = []    # models no capture fits, without clips of their own

    def pairs_left_out(self, captures: int) -> list:
        """'model x capture (why)' per pair, a model's pairs with one reason together (the
        retargeting's advice to give a bone map said once, by ``line``); ``captures``: how many
        load."""
        grouped: dict = {}
        for model, capture, why in self.left_out:
            grouped.setdefault((model, why.removesuffix(GIVE_A_MAP)), []).append(capture)
        said = []
        for (model, why), names in grouped.items():
            which = f"all {captures} captures" if len(names) == captures > 1 else ", ".join(names)
            said.append(f"{model} x {which} ({why})")
        return said + [f"{capture} (does not load: {why})" for capture, why in self.unloadable]

    def line(self, captures: int) -> str:
        from ..words import counted

        used = {capture for names in self.fitted.values() for capture in names}
        said = [f"boneviewer: synth: retargeted {counted(len(used), 'capture')} onto {len(self.fitted)} of "
                f"{counted(self.models, 'model')}"]
        left = self.pairs_left_out(captures)
        if left:
            advice = (" (a --bone-map retargets onto bones no naming scheme knows)"
                      if any(why.endswith(GIVE_A_MAP) for _, _, why in self.left_out) else "")
            said.append(f"left out: {', '.join(left)}{advice}")
        if self.own_instead:
            said.append(f"models with their own clips instead: {', '.join(self.own_instead)}")
        if self.dropped:
            said.append(f"models left out, without clips of their own: {', '.join(self.dropped)}")
        return "; ".join(said)


def usable_captures(motion: Path | None, load: dict, report: MotionReport, say) -> list:
    """The --motion captures that load (each said as render says a BVH file). Under a folder, one
    that does not load is left out (reported); a capture file given alone is an error."""
    captures = motion_inputs(motion)
    usable = []
    for capture in captures:
        try:
            say_bvh(say, capture, capture_scene(str(capture.resolve()), load, quiet=False))
        except ViewerError as error:
            if not motion.is_dir():
                raise
            report.unloadable.append((capture.relative_to(motion).as_posix(), str(error)))
            continue
        usable.append(capture)
    return usable


def plan(source: Path, options: SynthOptions, motion: Path | None = None, load: dict | None = None,
         bone_map: Path | None = None, say=print, mix: Path | None = None) -> tuple[Catalogue, list]:
    """The catalogue the draws choose from. A model that does not load is skipped with one line
    (``say``) naming why, in a folder; the one model given is an error. A model without a skin
    is drawn as a rigid object, without keypoints. Each BVH file's scale, up axis and facing is
    said, as ``render`` says them.

    With --motion, every capture is retargeted onto every model it fits (through the model's
    bone map: ``bone_map_for``); a model no capture fits keeps its own clips, or is left out
    without any; one line (``MotionReport``) says what was retargeted, what was left out and why.
    Nothing to draw at all is one error line.

    With ``mix`` (a mix file, for one model), the model's one "clip" is the mix: each draw
    poses the mix at a time drawn over its length (its longest playing clip's duration over its
    speed); the mix is checked against the model here, before any GL work."""
    from ..loaders import load_model
    from ..model.retarget import main_skeleton, read_bone_map
    from .labels import skeleton_layout

    load = load or {}
    models, folder = model_inputs(source)
    report = MotionReport()
    captures = usable_captures(motion, load, report, say)
    maps = {path: bone_map_for(bone_map, path, name) for path, name in models}
    for map_file in sorted({m for m in maps.values() if m is not None}):
        try:
            read_bone_map(map_file)  # a broken map is one line now, not a model left out
        except ViewerError as error:
            raise ViewerError(f"--bone-map: {error}") from None
    if bone_map is not None and bone_map.is_dir():
        unused = sorted(p.relative_to(bone_map).as_posix() for p in bone_map.rglob("*.json")
                        if p.is_file() and p not in set(maps.values()))
        if unused:
            say(f"boneviewer: synth: warning: --bone-map {bone_map}: no model for {', '.join(unused)} (a map is "
                "found by the model's path under the input, or its file stem, with .json)")
    layouts: dict = {}
    entries, reaches = [], []
    for path, name in models:
        try:
            scene = load_model(path, None, **load)
        except ViewerError as error:
            if not folder:
                raise
            say(f"boneviewer: synth: skipped {name}: {error}")
            continue
        say_bvh(say, path, scene)
        clips = [ClipEntry(clip.name or index, index, None, float(clip.duration))
                 for index, clip in enumerate(scene.animations)]
        if mix is not None:
            clips = [mix_entry(scene, mix)]
        map_file = None if maps[path] is None else str(maps[path].resolve())
        if motion is not None:
            report.models += 1
            fitted = []
            for capture in captures:
                shown_as = capture.relative_to(motion).as_posix() if motion.is_dir() else capture.name
                try:
                    clip = retargeted_clip(scene, str(capture.resolve()), load, map_file, quiet=False)
                except ViewerError as error:
                    report.left_out.append((name, shown_as, str(error)))
                    continue
                fitted.append(shown_as)
                clips.append(ClipEntry(clip.name or capture.stem, None, str(capture.resolve()), float(clip.duration)))
            if fitted:
                report.fitted[name] = fitted
            elif clips:
                report.own_instead.append(name)
            else:
                report.dropped.append(name)
                continue
        skeleton = main_skeleton(scene) if scene.skeletons else None
        if skeleton is None:
            say(f"boneviewer: synth: {name} has no skin: drawn as a rigid object, without keypoints")
            layout = ((), ())
        else:
            names, pairs = skeleton_layout(skeleton)
            layout = (tuple(names), tuple(map(tuple, pairs)))
        category = layouts.setdefault(layout, (len(layouts) + 1, name))[0]
        low, high = scene.rest_bounds
        extent = np.asarray(high) - np.asarray(low)
        height = float(extent[1]) if extent[1] > 1e-6 * max(float(extent.max()), 1e-30) else float(extent.max())
        height = max(height, 1e-6)
        entries.append(ModelEntry(str(path.resolve()), name, tuple(clips), category, height,
                                  0 if skeleton is None else len(skeleton.bones), map_file))
        reaches.append(DEPTH_HEADROOM * max(float(np.linalg.norm(extent)), height))
    if motion is not None:
        if not entries and report.models:
            left = report.pairs_left_out(len(captures))
            onto = "any model, and no model has" if folder else f"{source.name}, and it has no"
            raise ViewerError(f"--motion {motion}: no capture could be retargeted onto {onto} clips of its own "
                              f"(left out: {', '.join(left)})")
        say(report.line(len(captures)))
    if not entries:
        raise ViewerError(f"{source}: no model left to draw from (each was skipped, as said above)")
    # The farthest depth any draw reaches: the character at the smallest fill, plus its own depth.
    tan = np.tan(np.radians(options.fov) / 2.0)
    farthest = max(reach / (2.0 * tan * options.fill[0]) + reach for reach in reaches)
    depth_scale = float(f"{65535.0 / farthest * 0.999:.4g}")  # 4 significant digits, rounded down by the margin
    coarse_depth(entries, reaches, depth_scale, tan, options.fill[0], say)
    catalogue = Catalogue(tuple(entries), depth_scale, load)
    from ..sources import source_files

    files = [file for path, _ in models for file in source_files(path)] + motion_inputs(motion)
    files += sorted({m for m in maps.values() if m is not None}) + [Path(b) for b in options.backgrounds]
    files += [Path(e) for e in options.environments if e not in BUILT_IN_ENVIRONMENTS]
    files += [] if mix is None else [Path(mix)]
    digests = input_digests(files)
    key = run_key(options, catalogue, digests)
    categories = [{"id": number, "name": first, "supercategory": "character",
                   "keypoints": list(layout[0]), "skeleton": [list(pair) for pair in layout[1]]}
                  for layout, (number, first) in layouts.items()]
    return Catalogue(catalogue.models, depth_scale, load, key, tuple(digests.items())), categories


def mix_entry(scene, mix: Path) -> ClipEntry:
    """The mix file as the model's one clip: checked against the model (its clips and bones)."""
    from ..motion.bake import mix_length
    from ..motion.files import apply_mix, read_mix_file

    what = f"--mix {mix}"
    data = read_mix_file(mix, what)
    apply_mix(scene.mixer, data, what)
    length = mix_length(scene.mixer)
    if length <= 0:
        raise ViewerError(f"{what}: no clip in it plays: nothing to draw times from")
    return ClipEntry(f"mix {Path(mix).name}", None, None, float(length),
                     mix=json.dumps(data, sort_keys=True, separators=(",", ":")))


def say_bvh(say, path, scene) -> None:
    """The line ``render`` says for a BVH file: the scale, up axis and facing the loader chose."""
    info = getattr(scene, "bvh_import", None)
    if info is not None:
        from ..bvh.build import describe_import

        say(f"boneviewer: {path}: BVH {describe_import(info)}")


def coarse_depth(entries: list, reaches: list, depth_scale: float, tan: float, smallest_fill: float, say) -> None:
    """One line for the models whose depth is coarse under the run's depth_scale and would not be
    alone (the largest model sets it; a model coarse by its own shape, flat along Y, is not told
    to run separately, which would not help)."""
    largest = entries[int(np.argmax(reaches))]
    coarse = []
    for entry, reach in zip(entries, reaches):
        steps = entry.height * depth_scale
        alone = entry.height * 65535.0 / (reach / (2.0 * tan * smallest_fill) + reach)
        if steps < FINE_DEPTH_STEPS <= alone:
            coarse.append((entry, steps))
    if len(coarse) == 1:
        (entry, steps), = coarse
        say(f"boneviewer: synth: warning: {entry.name}'s depth is coarse (one 16-bit step is 1/{steps:.0f} of its "
            f"height): the depth_scale fits {largest.name}, {largest.height / entry.height:.0f} times its height; "
            "run models of such different sizes separately")
    elif coarse:
        names = [entry.name for entry, _ in coarse]
        shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
        fewest, most = min(steps for _, steps in coarse), max(steps for _, steps in coarse)
        ratios = [largest.height / entry.height for entry, _ in coarse]
        say(f"boneviewer: synth: warning: the depth of {len(coarse)} models is coarse ({shown}: one 16-bit step is "
            f"1/{fewest:.0f} to 1/{most:.0f} of their height): the depth_scale fits {largest.name}, {min(ratios):.0f} "
            f"to {max(ratios):.0f} times their height; run models of such different sizes separately")


def input_digests(files) -> dict:
    """{absolute path: sha256 of its bytes} of every input file (those not there: skipped)."""
    digests = {}
    for path in files:
        path = Path(path)
        if path.is_file():
            digests.setdefault(str(path.resolve()), hashlib.sha256(path.read_bytes()).hexdigest())
    return digests


def run_key(options: SynthOptions, catalogue: Catalogue, digests: dict) -> str:
    """The hash a resumed run compares: the options, the catalogue and every input file's bytes."""
    digest = hashlib.sha256(json.dumps([options.as_json(), repr(catalogue.models), catalogue.depth_scale,
                                        catalogue.load, JOB_VERSION], sort_keys=True, default=str).encode())
    for path, sha in digests.items():
        digest.update(f"{path}\0{sha}\0".encode())
    return digest.hexdigest()


# --- the manifest: resume the same run, refuse another, --force clears synth's own files --------
def run_options(source: Path, options: SynthOptions, motion: Path | None, load: dict, bone_map: Path | None,
                mix: Path | None = None) -> dict:
    """{flag: value} of everything that decides the images (the MODEL, --motion, --bone-map and
    --mix as absolute paths), as JSON values."""
    given = {"MODEL": str(Path(source).resolve()),
             "--motion": None if motion is None else str(Path(motion).resolve()),
             "--bone-map": None if bone_map is None else str(Path(bone_map).resolve())}
    if mix is not None:  # only then: an earlier run's manifest without it is the same run
        given["--mix"] = str(Path(mix).resolve())
    for field, flag in OPTION_FLAGS.items():
        given[flag] = getattr(options, field)
    for field, flag in LOAD_FLAGS.items():
        given[flag] = (load or {}).get(field, False if field == "file_axes" else None)
    return json.loads(json.dumps(given))


def manifest(source: Path, count: int, options: SynthOptions, motion, load, bone_map, catalogue: Catalogue,
             mix: Path | None = None) -> dict:
    return {"written_by": "boneviewer synth", "job_version": JOB_VERSION, "key": catalogue.key, "count": count,
            "options": run_options(source, options, motion, load, bone_map, mix), "inputs": dict(catalogue.inputs)}


def owned_files(out: Path) -> list:
    """The files synth writes in ``out`` that are there now (its numbered and temporary files
    in its folders, annotations.json, index.html, the manifest)."""
    found = [path for path in sorted(out.iterdir()) if TOP_LEVEL.match(path.name) and not path.is_dir()]
    for folder in OUTPUT_FOLDERS:
        if (out / folder).is_dir() and not (out / folder).is_symlink():
            found += [path for path in sorted((out / folder).iterdir())
                      if NUMBERED.match(path.name) and (path.is_file() or path.is_symlink())]
    return found


def shown(value, flag: str = "") -> str:
    """An option's value as its flag takes it: MIN:MAX, WxH (--size), a list by commas; "not given"."""
    if value is None or value is False:
        return "not given"
    if value is True:
        return "given"
    if isinstance(value, list):
        numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
        between = "x" if flag == "--size" else ":"
        text = between.join(f"{v:g}" for v in value) if numbers and len(value) == 2 else ", ".join(map(str, value))
    else:
        text = f"{value:g}" if isinstance(value, float) else str(value)
    return text if len(text) <= 60 else text[:57] + "..."


def differences(earlier: dict, now: dict) -> list:
    """What makes the earlier run another one, in words: each option whose value differs (both
    values), else each input file changed, added or gone, else the job version."""
    before, after = earlier.get("options") or {}, now["options"]
    found = [f"{flag} ({shown(before.get(flag), flag)} there, {shown(after.get(flag), flag)} now)"
             for flag in after if before.get(flag) != after[flag]]
    if found:
        return found
    old, new = earlier.get("inputs") or {}, now["inputs"]
    found = [f"{Path(path).name} {'changed' if path in old else 'added'}" for path in new if old.get(path) != new[path]]
    found += [f"{Path(path).name} gone" for path in old if path not in new]
    if found:
        return [f"the inputs changed since ({', '.join(found[:4])}{' and more' if len(found) > 4 else ''})"]
    if earlier.get("job_version") != JOB_VERSION:
        return [f"another version of synth wrote it (job version {earlier.get('job_version')}, now {JOB_VERSION})"]
    return [] if earlier.get("key") == now["key"] else ["the models it drew from differ"]


def claim_output(out: Path, count: int, wanted: dict, force: bool, say=print) -> None:
    """Make ``out`` this run's: resume an earlier run of the same options and inputs; refuse,
    in one line naming what differs, one of others, or files of synth's names with no manifest;
    ``force``: remove synth's own files first (said in one line). Then the manifest is written."""
    owned = owned_files(out) if out.is_dir() else []
    if force:
        for path in owned:
            try:
                path.unlink()
            except FileNotFoundError:
                pass
            except OSError as error:
                raise ViewerError(f"--force: cannot remove {path}: {error.strerror}") from None
        for folder in OUTPUT_FOLDERS:
            try:
                (out / folder).rmdir()  # only when it is empty: a file the user put there stays, with its folder
            except OSError:
                pass
        if owned:
            say(f"boneviewer: synth: --force: removed the {len(owned)} files of an earlier run from {out}")
    elif owned:
        try:
            earlier = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
            earlier = earlier if isinstance(earlier, dict) and earlier.get("written_by") == "boneviewer synth" else None
        except (OSError, ValueError):
            earlier = None
        if earlier is None:
            names = sorted({path.parent.name + "/" if path.parent != out else path.name for path in owned})
            raise ViewerError(f"--out {out}: holds files synth writes ({', '.join(names)}) but no {MANIFEST} saying "
                              "which run wrote them; give --force to remove them and start over, or another --out")
        differ = differences(earlier, wanted)
        if differ:
            raise ViewerError(f"--out {out}: holds an earlier synth run with other options: {', '.join(differ)}; give "
                              "the same options to resume it, or --force to remove its files and start over")
        beyond = sorted({int(NUMBERED.match(p.name).group(1)) for p in owned if p.parent != out} - set(range(count)))
        if beyond:
            raise ViewerError(f"--out {out}: the earlier run of these options has images up to {image_name(beyond[-1])}; "
                              f"--count {count} would leave {len(beyond)} of them out of {ANNOTATIONS}: give --count "
                              f"{beyond[-1] + 1} or more to resume it, or --force to remove its files and start over")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ViewerError(f"--out {out}: cannot create it: {error.strerror}") from None
    write_file(out / MANIFEST, json.dumps(wanted, indent=1, sort_keys=True) + "\n")


def done_images(out: Path, count: int, key: str) -> set:
    """The images of a previous run of the same key already written whole (their label file,
    written last, is there and carries the key)."""
    done = set()
    labels = out / "labels"
    if not labels.is_dir():
        return done
    for index in range(count):
        path = labels / f"{image_name(index)}.json"
        try:
            if json.loads(path.read_text())["key"] == key:
                done.add(index)
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return done


def chunks(indices: list, size: int):
    for start in range(0, len(indices), size):
        yield indices[start:start + size]


def map_images(todo: list, options: SynthOptions, catalogue: Catalogue, workers: int | None, ray: str | None):
    """Yield (first index of a run, {index: files or error text}) as the workers finish runs of
    IMAGES_PER_TASK images; ``ray`` not None: Ray tasks (address "" for a local runtime)."""
    from ..library.run import pool_map, ray_map

    tasks = ((run[0], (run, options, catalogue)) for run in chunks(todo, IMAGES_PER_TASK))
    if ray is not None:
        return ray_map(render_images, tasks, ray or None)
    return pool_map(render_images, tasks, workers or os.cpu_count() or 1)


def write_image(out: Path, files: dict) -> None:
    """One image's files, whole, renamed into place in order: the PNGs, then its label file."""
    ordered = sorted(files, key=lambda name: name.startswith("labels/"))
    write_files([(out / name, files[name]) for name in ordered], what=f"{out / ordered[-1]}")


def synth(source: Path, out: Path, count: int, options: SynthOptions, motion: Path | None = None,
          load: dict | None = None, bone_map: Path | None = None, workers: int | None = None,
          ray: str | None = None, say=print, progress=None, force: bool = False, mix: Path | None = None) -> dict:
    """The whole run: plan, ``out`` claimed (``claim_output``: resumed, refused, or with
    ``force`` cleared of an earlier run's files), the images not done yet, annotations.json and
    index.html. Returns the annotations. A failed image stops the run with its ViewerError (what
    was written stays)."""
    from .report import index_html

    catalogue, categories = plan(source, options, motion, load, bone_map, say, mix)
    claim_output(out, count, manifest(source, count, options, motion, load, bone_map, catalogue, mix), force, say)
    for folder in OUTPUT_FOLDERS:
        try:
            (out / folder).mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise ViewerError(f"--out {out}: cannot create {folder}/ in it: {error.strerror}") from None
    done = done_images(out, count, catalogue.key)
    todo = [index for index in range(count) if index not in done]
    if done:
        say(f"boneviewer: synth: resuming: {len(done)} of {count} images already written by an earlier run "
            f"of the same options and inputs{'' if todo else ', so none is rendered'}")
    if todo:
        from contextlib import closing

        finished = 0
        # closing: a failed image or Ctrl+C stops the workers at once (what was written stays whole)
        shipped = replace(catalogue, inputs=())  # the workers need no digests
        with closing(map_images(todo, options, shipped, workers, ray)) as results_of_runs:
            for _, results in results_of_runs:
                if isinstance(results, str):
                    raise ViewerError(f"a worker failed: {results}")
                for index in sorted(results):
                    files = results[index]
                    if isinstance(files, str):
                        raise ViewerError(files)
                    write_image(out, files)
                    finished += 1
                if progress is not None:
                    progress(finished, len(todo))
    annotations = assemble(out, count, options, catalogue, categories)
    write_file(out / ANNOTATIONS, json.dumps(annotations, separators=(",", ":")) + "\n")
    write_file(out / "index.html", index_html(annotations, statistics(annotations),
                                              f"boneviewer synth: {source.name}"))
    return annotations


def assemble(out: Path, count: int, options: SynthOptions, catalogue: Catalogue, categories: list) -> dict:
    """annotations.json's content from the label files of images 0 .. count - 1."""
    images, annotations = [], []
    for index in range(count):
        path = out / "labels" / f"{image_name(index)}.json"
        try:
            label = json.loads(path.read_text())
        except (OSError, ValueError) as error:
            raise ViewerError(f"cannot read {path}: {getattr(error, 'strerror', None) or error}") from None
        images.append(label["image"])
        annotations.extend(label["annotations"])
    info = {"description": "boneviewer synth: labelled images of posed characters", "seed": options.seed,
            "count": count, "depth_scale": catalogue.depth_scale, "ranges": options.as_json(),
            "depth": "depth/NNNNNN.png: 16-bit, camera-space depth along the view axis times depth_scale, 0 where "
                     "nothing is drawn",
            "parts": "parts/NNNNNN.png: 1 + the keypoint index of the bone that most influences the surface, 0 "
                     "background (16-bit when a category has more than 254 keypoints)",
            "camera": "K and world_to_camera in OpenCV's axes (x right, y down, z forward); pixel coordinates from "
                      "the top-left corner, the top-left pixel's centre at (0.5, 0.5)",
            "visibility": "v=0 behind the camera or outside the image; v=2 visible: the surface drawn at the "
                          "joint's pixel within the image's occlusion_distance of the joint in depth; else v=1 "
                          "hidden (a surface nearer by more, the joint's own surface not drawn, or nothing drawn)",
            "attempt": "an image whose first draw showed too little (ranges min_visible, min_area) was drawn "
                       "again from (seed, index, attempt): its image's attempt"}
    return {"info": info, "licenses": [], "images": images, "annotations": annotations, "categories": categories}


def statistics(annotations: dict) -> dict:
    """The label statistics the preview page shows: images, keypoints per visibility state,
    images per model and per clip."""
    states = Counter()
    for annotation in annotations["annotations"]:
        states.update(int(v) for v in annotation["keypoints"][2::3])
    models = Counter(image["model"] for image in annotations["images"])
    clips = Counter(f"{image['model']}: {image['clip'] if image['clip'] is not None else 'rest pose'}"
                    for image in annotations["images"])
    return {"images": len(annotations["images"]), "annotations": len(annotations["annotations"]),
            "redrawn": sum(1 for image in annotations["images"] if image.get("attempt", 0) > 0),
            "visibility": {str(v): states.get(v, 0) for v in (0, 1, 2)},
            "models": dict(sorted(models.items())), "clips": dict(sorted(clips.items()))}
