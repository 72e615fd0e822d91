"""Model loading: the one place that turns a user's MODEL argument into a Scene."""

from __future__ import annotations

from pathlib import Path

from .errors import ViewerError, why_missing


# The model files boneviewer opens, by extension (what load_model dispatches on).
MODEL_SUFFIXES = (".gltf", ".glb", ".vrm", ".bvh", ".fbx", ".usd", ".usda", ".usdc", ".usdz")
USD_SUFFIXES = (".usd", ".usda", ".usdc", ".usdz")
GLTF_SUFFIXES = (".gltf", ".glb", ".vrm")  # a VRM avatar (.vrm) is a GLB with VRM's extensions


def load_model(model=None, scene: int | None = None, bvh_scale: float | None = None, bvh_up: str | None = None,
               bvh_forward: str | None = None, file_axes: bool = False):
    """None: the built-in character; a Scene: itself; a path: the file, by its extension.
    ``scene`` picks a glTF file's scene (default: the file's own default); ``bvh_scale``,
    ``bvh_up`` and ``bvh_forward`` are a BVH file's ``scale``, ``up`` and ``forward`` (see
    ``viewer.bvh.load_bvh``); ``file_axes`` keeps an FBX or USD file's own axes and units instead
    of turning them to glTF's (+Y up, front +Z, metres)."""
    from .model import Scene

    if model is None:
        from .character import build_character

        if scene is not None:
            raise ViewerError("--scene picks a scene of a glTF file; the built-in character has none")
        return build_character()
    if isinstance(model, Scene):
        return model
    path = _existing_file(model)
    if path.suffix.lower() in GLTF_SUFFIXES:
        from .gltf import load_gltf

        return load_gltf(path, scene)
    if path.suffix.lower() == ".bvh":
        from .bvh import load_bvh

        if scene is not None:
            raise ViewerError("--scene picks a scene of a glTF file; a BVH file has one skeleton")
        return load_bvh(path, bvh_scale, bvh_up, bvh_forward)
    if path.suffix.lower() == ".fbx":
        from .fbx import load_fbx

        if scene is not None:
            raise ViewerError("--scene picks a scene of a glTF file; an FBX file has one scene")
        return load_fbx(path, file_axes)
    if path.suffix.lower() in USD_SUFFIXES:
        from .usd import load_usd

        if scene is not None:
            raise ViewerError("--scene picks a scene of a glTF file; a USD stage is one scene")
        return load_usd(path, file_axes)
    raise ViewerError(f"model {path}: cannot open {path.suffix or 'extension-less'} files; boneviewer reads glTF 2.0 "
                      "(.gltf, .glb), FBX (.fbx), USD (.usd, .usda, .usdc, .usdz) and BVH motion capture (.bvh)")


def reads_ahead(model) -> bool:
    """Whether ``model`` is a file that ``read_ahead`` reads (an FBX or USD file)."""
    return isinstance(model, (str, Path)) and Path(model).suffix.lower() in (".fbx",) + USD_SUFFIXES \
        and Path(model).is_file()


def read_ahead(model) -> None:
    """Start reading an FBX or USD ``model`` in its reader's process now, so that the work done
    before the model is loaded (imports, a GL context) runs at the same time."""
    if not reads_ahead(model):
        return
    if Path(model).suffix.lower() == ".fbx":
        from .fbx import READER as script
        library = "ufbx"
    else:
        from .usd import READER as script
        library = "pxr"
    from .isolated import start

    start(script, library, Path(model))


def inspect_model(model, scene: int | None = None, bvh_scale: float | None = None, bvh_up: str | None = None,
                  bvh_forward: str | None = None, file_axes: bool = False) -> dict:
    """What a model file holds (see viewer.gltf.inspect, viewer.bvh.inspect, viewer.fbx.inspect),
    checked as load_model checks it; a BVH or FBX file loaded with the options load_model takes."""
    path = _existing_file(model)
    if path.suffix.lower() in GLTF_SUFFIXES:
        from .gltf.inspect import inspect_gltf

        return inspect_gltf(path, scene)
    if path.suffix.lower() == ".bvh":
        from .bvh.inspect import inspect_bvh

        if scene is not None:
            raise ViewerError("--scene picks a scene of a glTF file; a BVH file has one skeleton")
        return inspect_bvh(path, bvh_scale, bvh_up, bvh_forward)
    if path.suffix.lower() == ".fbx":
        from .fbx.inspect import inspect_fbx

        if scene is not None:
            raise ViewerError("--scene picks a scene of a glTF file; an FBX file has one scene")
        return inspect_fbx(path, file_axes)
    if path.suffix.lower() in USD_SUFFIXES:
        from .usd.inspect import inspect_usd

        if scene is not None:
            raise ViewerError("--scene picks a scene of a glTF file; a USD stage is one scene")
        return inspect_usd(path, file_axes)
    load_model(path, scene)  # refused as the viewer refuses it
    raise AssertionError("load_model reads no other extension")


def _existing_file(model) -> Path:
    if str(model) == "":  # Path("") is the current folder
        raise ViewerError("model '': an empty path names no file")
    path = Path(model)
    if path.is_dir():
        raise ViewerError(f"model {path}: is a folder, not a model file{_models_in(path)} (a whole folder: "
                          f"boneviewer check {path}, or boneviewer batch {path} --out REPORT)")
    if not path.is_file():
        raise ViewerError(f"model {path}: {why_missing(path)}")
    return path


def _models_in(folder: Path) -> str:
    """A hint naming the model files a folder holds (a few), or nothing."""
    try:
        names = sorted(p.name for p in folder.iterdir() if p.suffix.lower() in MODEL_SUFFIXES and p.is_file())
    except OSError:
        return ""
    if not names:
        return ""
    shown = ", ".join(str(folder / name) for name in names[:3])
    return f"; it holds {shown}{' and more' if len(names) > 3 else ''}"
