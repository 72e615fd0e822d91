"""GLSL programs from the files in glsl/, with compile-time constants injected as #defines."""

from __future__ import annotations

from pathlib import Path

from ..errors import ViewerError


def _glsl_dir() -> Path:
    """viewer/glsl in an installed wheel (pyproject maps glsl/ there); glsl/ at the top of the
    checkout when running from source or an editable install."""
    package = Path(__file__).resolve().parents[1]
    for folder in (package / "glsl", package.parent / "glsl"):
        if folder.is_dir():
            return folder
    return package / "glsl"  # neither: the error names where an install keeps them


GLSL_DIR = _glsl_dir()


def _read(name: str) -> str:
    path = GLSL_DIR / name
    try:
        return path.read_text()
    except OSError as error:
        raise ViewerError(f"shader {name}: cannot read {path}: {error.strerror}") from None


def _include(source: str, name: str) -> str:
    """Each line ``#include "file.glsl"`` replaced by that file of glsl/ (one level: an included
    file includes nothing), so shared functions (the light, tone mapping) live in one file."""
    lines = []
    for line in source.splitlines(keepends=True):
        words = line.split()
        if len(words) == 2 and words[0] == "#include" and words[1].startswith('"') and words[1].endswith('"'):
            included = words[1][1:-1]
            text = _read(included)
            if "#include" in text:
                raise ViewerError(f"shader {name}: {included} includes another file (one level only)")
            lines.append(text if text.endswith("\n") else text + "\n")
        else:
            lines.append(line)
    return "".join(lines)


def shader_source(name: str, defines: dict | None = None) -> str:
    source = _include(_read(name), name)
    if not defines:
        return source
    version, _, body = source.partition("\n")  # #version must stay the first line
    lines = "".join(f"#define {key} {value}\n" for key, value in defines.items())
    return f"{version}\n{lines}{body}"


def load_program(ctx, vertex: str, fragment: str, defines: dict | None = None, geometry: str | None = None,
                 varyings: tuple = ()):
    """The program of these shader files and #defines; ``varyings``: the outputs transform
    feedback captures (VertexArray.transform), the program draws as usual besides."""
    import moderngl

    try:
        return ctx.program(vertex_shader=shader_source(vertex, defines),
                           geometry_shader=shader_source(geometry, defines) if geometry else None,
                           fragment_shader=shader_source(fragment, defines), varyings=varyings)
    except moderngl.Error as error:
        detail = " ".join(str(error).split())[:400]
        names = "/".join(n for n in (vertex, geometry, fragment) if n)
        raise ViewerError(f"shaders {names} with {defines or {}} failed to build: {detail}") from None
