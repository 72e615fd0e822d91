"""glTF 2.0 loader (.gltf with embedded or external buffers, and .glb).

Everything read from the file is checked before it is used; a problem raises one ViewerError
that names the file and the object. The package, one job per file:

- ``container``: the file (.gltf or .glb, GLB chunks), its JSON parsed once, and the data it
  points at: buffers, buffer views, accessors (with sparse), images; URIs stay in the folder.
- ``validate``: the JSON's structure (types, ranges, references) and the node hierarchy
  (one parent each, no cycles, bounded depth), before anything is built from it.
- ``limits``: what one file may cost, checked before anything is allocated or walked.
- ``meshes``: primitives, skin attributes, materials and textures.
- ``animation``: animation clips.
- ``scene``: nodes, skins as skeletons, meshes placed, and the Scene.
- ``writer``: a Scene as it is now back to .glb / .gltf (``save_gltf``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import ViewerError
from ..model import Scene
from .container import GltfError, GltfFile
from .scene import build_scene
from .validate import short
from .writer import save_gltf

__all__ = ["FALLBACK", "GltfError", "load_file", "load_gltf", "save_gltf"]

# The wording of the last line of defence in load_gltf (an unexpected exception wrapped).
FALLBACK = "malformed glTF"


def load_gltf(path, scene: int | None = None) -> Scene:
    """Load a .gltf or .glb file (its glTF scene ``scene``, else its default one); anything
    wrong with it raises one ViewerError. The Scene's ``file_scenes`` lists the file's scenes
    by name and ``file_scene`` is the one shown (None when the file has no scenes)."""
    return load_file(path, scene)[0]


def load_file(path, scene: int | None = None) -> tuple[Scene, GltfFile]:
    """(the Scene, the read and checked GltfFile it was built from): load_gltf, with the file
    kept for what only it says (names, counts, sizes: `boneviewer info`)."""
    path = Path(path)
    try:
        with np.errstate(all="ignore"):  # overflow is checked explicitly where it matters
            file = GltfFile(path)
            return build_scene(file, scene), file
    except GltfError:
        raise
    except ViewerError as error:  # a model check the loader did not put in context: name the file
        raise ViewerError(f"{path}: {error}") from None
    except Exception as error:  # the last line of defence (MemoryError, RecursionError too), not the main one
        raise ViewerError(f"{path}: {FALLBACK} ({type(error).__name__}: {short(error, 200)})") from error
