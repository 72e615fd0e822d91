"""The files a model is read from, which no output may land on: below the loaders and the
format packages, so that a writer (gltf/, usd/) and the loader (loaders.py) both use it
without importing each other."""

from __future__ import annotations

import json
import os
import re
import struct
from pathlib import Path
from urllib.parse import unquote

from .errors import ViewerError

# The GLB header (glTF 2.0, section 4.4) and the largest glTF JSON the loader parses
# (gltf/limits.py takes its MAX_JSON_BYTES from here: a file over it lists only itself).
GLB_MAGIC, GLB_JSON, GLB_BIN = b"glTF", 0x4E4F534A, 0x004E4942
MAX_GLTF_JSON_BYTES = 256 << 20


def source_files(model, role: str = "the model") -> dict[Path, str]:
    """{file: what it is} for every file loading ``model`` reads (a glTF file's buffers and
    images too), so that no output is written over one; ``role`` names the file ("the model",
    "the --motion file"). None (the built-in character): no files; a Scene: its file's."""
    from .model import Scene

    if isinstance(model, Scene):
        model = model.file_path
    if model is None:
        return {}
    path = Path(model)
    if path.suffix.lower() in (".gltf", ".glb", ".vrm"):
        return referenced_files(path, role)
    return {path: role}


def referenced_files(path, role: str = "the model") -> dict[Path, str]:
    """{file: what it is} for a glTF file (``role``, e.g. "the model") and the buffer and image
    files its URIs name inside its folder: the files loading it reads, which no output may
    overwrite. A file that cannot be read or parsed gives itself alone (loading it says why)."""
    path = Path(path)
    files = {path: role}
    try:
        with open(path, "rb") as handle:
            head = handle.read(20)
            if head[:4] == GLB_MAGIC and len(head) == 20:
                json_length, kind = struct.unpack_from("<II", head, 12)
                if kind != GLB_JSON or json_length > MAX_GLTF_JSON_BYTES:
                    return files
                text = handle.read(json_length)
            else:
                if path.stat().st_size > MAX_GLTF_JSON_BYTES:
                    return files
                text = head + handle.read()
        document = json.loads(text.decode("utf-8-sig"))
        folder = path.resolve().parent
    except (OSError, RuntimeError, ValueError, RecursionError):
        return files
    if not isinstance(document, dict):
        return files
    for key, kind in (("buffers", "buffer"), ("images", "image")):
        items = document.get(key)
        for index, item in enumerate(items if isinstance(items, list) else ()):
            uri = item.get("uri") if isinstance(item, dict) else None
            if not isinstance(uri, str) or uri.startswith("data:") or ":" in uri.split("/")[0]:
                continue
            try:
                relative = unquote(uri, errors="strict").replace("\\", "/")
                target = (folder / relative).resolve()
            except (OSError, RuntimeError, ValueError):
                continue
            if target.is_relative_to(folder) and not relative.startswith("/"):
                files.setdefault(path.parent / relative, f"{kind} {index} of {role} {path.name}")
    return files


def check_not_source(scene, label: str, path, inputs: dict | None = None) -> None:
    """Refuse (one ViewerError line) writing ``path`` (``label`` names the writer) over a file
    ``scene`` was loaded from (its model file, buffers, images) or one of ``inputs``."""
    from .files import check_outputs

    check_outputs([(label, Path(path))], {**source_files(scene), **(inputs or {})})


def texture_file_name(stem: str, index: int, extension: str) -> str:
    """The name of a model writer's ``index``-th texture file beside ``<stem>.<suffix>``:
    ``<stem>_image<index>.<extension>`` (glTF's .gltf and USD's .usda/.usdc, and the names inside a
    .usdz, alike); ``texture_image<index>`` when the stem holds characters an asset path or a URI
    should not (anything but letters, digits, ``_ . -`` and spaces)."""
    base = stem if re.fullmatch(r"[\w.\- ]+", stem) else "texture"
    return f"{base}_image{index}.{extension}"


def write_model_files(scene, path, build, inputs: dict | None = None, force: bool = False) -> None:
    """The never-overwrite rules of every model writer (glTF, USD), then the write: ``path``'s
    folder must exist; ``path`` may be the model itself only with ``force``; ``build()`` gives the
    [(file, bytes)] to write (``path`` and its side files), none of which may land on a file
    ``scene`` was loaded from (but the model's own, with ``force``) or on one of ``inputs``, nor
    (without ``force``) on any existing file but ``path`` itself: the side files (a .gltf's .bin
    and images, a .usda's textures) are files the user did not name. All are written whole or not
    at all."""
    from .files import check_outputs, same_file, write_files

    path = Path(path)
    if not path.parent.is_dir():
        raise ViewerError(f"{path}: folder {path.parent} does not exist")
    model = source_files(scene)
    replaces_model = scene.file_path is not None and same_file(path, scene.file_path)
    if replaces_model and not force:
        raise ViewerError(f"{path}: that would overwrite the model {scene.file_path}; give --force to replace it")
    files = build()
    check_outputs([(str(path) if target == path else f"{path} (its {target.name})", target) for target, _ in files],
                  {**model, **(inputs or {})}, replaceable=model if replaces_model else ())
    if not force:
        taken = [target for target, _ in files if target != path and os.path.lexists(target)]
        if taken:
            names = [target.name for target in taken]
            several = len(names) > 1
            listed = names[0] if not several else (f"{', '.join(names[:-1])} and {names[-1]}" if len(names) <= 4
                                                   else f"{', '.join(names[:3])} and {len(names) - 3} more")
            raise ViewerError(f"{path}: would replace {listed} beside it, which {'exist' if several else 'exists'} "
                              f"and {'were' if several else 'was'} not named; give --force to replace "
                              f"{'them' if several else 'it'}, or another output name")
    write_files(files, what=path)
