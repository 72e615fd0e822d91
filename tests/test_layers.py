"""The layers of DESIGN.md, checked on the source: no import circle in viewer/, and no import
from a lower layer up to a higher one (function-local imports included)."""

import ast
from pathlib import Path

VIEWER = Path(__file__).resolve().parents[1] / "viewer"

# Each layer and the layers it may import (besides itself). Lower layers never import higher ones.
LAYERS = {
    "errors": set(),
    "files": {"errors"},  # written whole, with the umask, never over an input: every layer that writes
    "model": {"errors"},
    "camera": {"errors", "files", "model"},  # the model's value checks (checks.py)
    "images": {"errors", "files", "model"},  # EncodedImage is the model's DeferredImage
    "options": {"errors"},
    "look": {"errors", "model", "options", "images"},  # the look's settings checked (the environment's .hdr, exposure, ...)
    "sources": {"errors", "files", "model"},  # the files a model is read from, which no output may overwrite
    "loaders": {"errors", "files", "model", "sources", "images"},  # images: EncodedImage, decoded when drawn
    "render": {"errors", "model", "camera", "options", "images", "look"},  # images: the .hdr (viewer.hdr); look: the built-in environments (shadows)
    "checks": {"errors", "model", "loaders", "sources"},  # check's findings: GL-free, over loaded models and their files
    "labels": {"errors", "model"},  # synth's labels: numpy over the posed skeleton and the camera, no GL
    # checks: the QA list reads the motion checks' findings (viewer/editing/qa.py)
    "editor": {"errors", "files", "model", "loaders", "sources", "options", "look", "checks"},
    "scripting": {"errors", "files", "model", "camera", "images", "options", "loaders", "sources", "editor", "look"},  # scripts, the app object
    "ui": {"errors", "files", "model", "camera", "images", "options", "loaders", "sources", "render", "editor", "scripting", "look"},
    # The notebook is another face of the editing session, beside ui (neither imports the other).
    "notebook": {"errors", "files", "model", "camera", "images", "options", "loaders", "sources", "render", "editor",
                 "scripting", "look"},
    "app": {"errors", "files", "model", "camera", "images", "options", "loaders", "sources", "render", "editor", "scripting", "ui",
            "checks", "labels", "look", "notebook"},
}
LAYER_OF = {"viewer.errors": "errors", "viewer.words": "errors",  # words: counts in words, imports nothing
            "viewer.files": "files", "viewer.sources": "sources", "viewer.camera": "camera", "viewer.images": "images", "viewer.hdr": "images",
            "viewer.options": "options", "viewer.look": "look", "viewer.editing.editor": "editor", "viewer.loaders": "loaders",
            "viewer.character": "loaders", "viewer.editing.pose": "loaders", "viewer.gltf": "loaders",
            "viewer.bvh": "loaders", "viewer.fbx": "loaders", "viewer.usd": "loaders", "viewer.isolated": "loaders",
            "viewer.model": "model", "viewer.render": "render", "viewer.ui": "ui", "viewer.notebook": "notebook",
            "viewer.editing.script": "scripting", "viewer.editing.script_app": "scripting",
            "viewer.editing": "editor", "viewer.remote": "scripting",  # the wire: applies messages to the editing session
            "viewer.checks": "checks", "viewer.synth.labels": "labels",
            "viewer.editing.interaction": "model",  # picking, gizmo and mirror maths: numpy over the model's API
            # motion is model code (DESIGN.md: the mixer, layers, the bake; numpy, no GL), beside model/
            "viewer.motion": "model", "viewer.motion.recovery": "editor",  # the window's recovery file: written
            "viewer.gcpause": "errors"}  # the garbage collector paused while a document is built: imports nothing


def module_name(path: Path) -> str:
    parts = list(path.relative_to(VIEWER.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer(module: str) -> str:
    """The layer of a module: the longest matching prefix, else the app (cli, bench, app, ...)."""
    for prefix in sorted(LAYER_OF, key=len, reverse=True):
        if module == prefix or module.startswith(prefix + "."):
            return LAYER_OF[prefix]
    return "app"


def imports_of(path: Path) -> set[str]:
    """viewer modules imported anywhere in the file, resolved to module names."""
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.startswith("viewer"):
                # "from . import x" may import a submodule x
                candidates = [f"{target}.{alias.name}" for alias in node.names]
                found.add(target)
                found.update(c for c in candidates if (VIEWER.parent / c.replace(".", "/")).with_suffix(".py").exists()
                             or (VIEWER.parent / c.replace(".", "/")).is_dir())
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith("viewer"))
    return found


# The imports from the model into motion, made on first use: Scene.mixer, Scene.springs and Scene.constraints hand out
# the scene's mixer, spring bones and node constraints (the APIs issues 43 and 46 name), while motion is model code over the model and imports it. No
# module-level circle runs (the import is inside the property); the edge is left out of both checks.
LAZY_UP = {("viewer.model.scene", "viewer.motion"), ("viewer.model.scene", "viewer.motion.springs"),
           ("viewer.model.scene", "viewer.motion.constraints")}


def graph() -> dict[str, set[str]]:
    modules = {module_name(p): p for p in VIEWER.rglob("*.py")}
    edges = {}
    for name, path in modules.items():
        targets = set()
        for target in imports_of(path):
            while target not in modules and "." in target:  # "viewer.model.Bone" -> "viewer.model"
                target = target.rpartition(".")[0]
            if target in modules and target != name and (name, target) not in LAZY_UP:
                targets.add(target)
        edges[name] = targets
    return edges


def test_no_import_goes_up_a_layer():
    wrong = []
    for module, targets in graph().items():
        mine = layer(module)
        for target in targets:
            theirs = layer(target)
            if theirs != mine and theirs not in LAYERS[mine]:
                wrong.append(f"{module} ({mine}) imports {target} ({theirs})")
    assert wrong == []


def packages_of(module: str) -> set[str]:
    """The packages Python imports (runs the __init__ of) before ``module``: viewer.gltf for
    viewer.gltf.container."""
    parts = module.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts))}


def import_graph(edges: dict[str, set[str]]) -> dict[str, set[str]]:
    """``edges`` as Python runs them: importing viewer.gltf.container runs viewer/gltf/__init__.py
    first, and whatever that imports, so a module's import reaches the packages above its target
    too (but not its own packages, whose __init__ has already begun)."""
    return {module: {reached for target in targets for reached in {target} | packages_of(target)
                     if reached in edges and reached != module and reached not in packages_of(module)}
            for module, targets in edges.items()}


def circles(edges: dict[str, set[str]]) -> list[str]:
    state, cycles = {}, []

    def visit(node, stack):
        state[node] = "open"
        for target in sorted(edges[node]):
            if state.get(target) == "open":
                cycles.append(" -> ".join(stack[stack.index(target):] + [node, target]) if target in stack
                              else f"{node} -> {target}")
            elif target not in state:
                visit(target, stack + [node])
        state[node] = "done"

    for node in sorted(edges):
        if node not in state:
            visit(node, [])
    return cycles


def test_no_import_circle_between_modules():
    assert circles(import_graph(graph())) == []


def test_the_circle_checker_sees_a_circle_through_a_package():
    # The circle that was: gltf/writer.py imported loaders.py, which imports gltf/container.py,
    # whose package's __init__ imports gltf/writer.py.
    edges = {"viewer.loaders": {"viewer.gltf.container"}, "viewer.gltf": {"viewer.gltf.writer", "viewer.gltf.container"},
             "viewer.gltf.container": set(), "viewer.gltf.writer": {"viewer.loaders"}}
    assert circles(import_graph(edges)) == ["viewer.gltf -> viewer.gltf.writer -> viewer.loaders -> viewer.gltf"]
    edges["viewer.gltf.writer"] = {"viewer.sources"}
    edges["viewer.sources"] = set()
    assert circles(import_graph(edges)) == []


def test_the_checker_sees_imports():
    edges = graph()
    assert "viewer.model.batch" in edges["viewer.model.skeleton"]
    assert "viewer.render.renderer" in edges["viewer.render.headless"]
    assert layer("viewer.cli") == "app" and layer("viewer.gltf.scene") == "loaders"
    assert layer("viewer.synth.labels") == "labels" and layer("viewer.synth.job") == "app"
