"""What to draw and what to tell the user: plain data shared by the editor, the renderer and
the app (no GL, no ImGui)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class Paint(enum.Enum):
    """What colours the mesh (RenderOptions.paint): its materials, or a view of its skin."""

    SHADED = "shaded"               # base colour, vertex colours and textures, lit
    WEIGHTS = "weights"             # the selected bone's weight at each vertex: 0 blue .. 1 red
    BONE_MAP = "bone-map"           # each vertex in the colour of the bone with its largest weight
    WEIGHT_CHECK = "weight-check"   # vertices whose weights do not sum to 1, or have more than 8, stand out


class Axes(enum.Enum):
    """Whose local X/Y/Z axes the overlay draws (RenderOptions.axes)."""

    NONE = "none"
    SELECTED = "selected"
    ALL = "all"


@dataclass
class RenderOptions:
    """How a frame is drawn. The panel's toggles edit one of these; the renderer reads it."""

    show_mesh: bool = True
    show_skeleton: bool = True
    show_grid: bool = True
    wireframe: bool = False
    cpu_skinning: bool = False            # skin vertices in numpy instead of the shader
    bone_texture: bool = False            # bone matrices in a texture even when a uniform array fits
    compare_skinning: bool = False        # the view twice side by side: linear blend left, dual quaternions right
    selected_bone: object = None          # a Bone to highlight in the overlay
    markers: list = field(default_factory=list)   # Markers the overlay draws (the editor's controllers)
    paint: Paint = Paint.SHADED           # what colours the mesh (WEIGHTS shows selected_bone's)
    axes: Axes = Axes.NONE                # bone axes: red X, green Y, blue Z, a fixed size on screen
    show_gizmo: bool = True               # the rotate gizmo (and arrows) on the selected bone
    move_arrows_all_bones: bool = False   # translate arrows on every bone, not only roots
    background_top: tuple = (0.33, 0.36, 0.42)
    background_bottom: tuple = (0.12, 0.12, 0.14)
    transparent_background: bool = False  # clear to alpha 0 (RGBA PNGs to composite), no gradient
    # direction towards the key light (environment "none"; with an environment, the shadows' light
    # where the .hdr has no sun): azimuth 36.87, elevation 46.85 degrees (--key-light's default)
    key_light: tuple = (0.45, 0.8, 0.6)
    # Shadows (issue 45, viewer.render.shadows): a contact shadow on the ground and a cast shadow from
    # the key light (or the file's first directional light). Off here, as in render/batch/synth/serve;
    # the window and the notebook turn them on.
    shadows: bool = False
    shadow_intensity: float = 0.6         # 0..1: how dark a full shadow is
    shadow_softness: float = 0.3          # 0..1: the contact shadow's blur and the cast shadow's filter width
    contact_shadow: bool = True           # with shadows: the ground contact shadow too (tests turn it off)
    # The look (issue 27): image-based light from an environment, then exposure and tone mapping.
    environment: str = "studio"           # "studio" (generated in code), "none" (the simple key light), or an .hdr path
    environment_rotation: float = 0.0     # degrees about +Y
    tone_mapping: str = "khr-neutral"     # "khr-neutral", "aces" (Babylon's TONEMAPPING_ACES) or "none"
    exposure: float = 1.0                 # linear multiplier before tone mapping
    show_environment: bool = False        # draw the environment as the background
    environment_filter: str = "mipmaps"   # its reflections' blur: "mipmaps" (Babylon.js's box mips) or "ggx"

    def look(self) -> dict:
        """The look's settings (LOOK_FIELDS) by name: what carries over to another model, and what
        a command passes on to the options it builds."""
        return {name: getattr(self, name) for name in LOOK_FIELDS}

    @property
    def bone_storage(self) -> str:
        """The renderer's bone storage for these options: "texture" or "auto"."""
        return "texture" if self.bone_texture else "auto"


LOOK_FIELDS = ("environment", "environment_rotation", "tone_mapping", "exposure", "show_environment",
               "environment_filter", "shadows", "shadow_intensity", "shadow_softness", "key_light")


class MarkerKind(enum.Enum):
    """How the overlay draws a Marker's world-space points (sizes are in pixels, as the joint dots)."""

    CROSS = "cross"   # a screen-aligned cross with a dot at points[0]: a target
    POINT = "point"   # a dot at each point
    PATH = "path"     # a line through the points in order (a highlighted chain)
    LINE = "line"     # a thin line through the points in order (a guide: bone to target)
    RAY = "ray"       # a short line from points[0] along the direction points[1] (an axis)
    RING = "ring"     # a circle facing the camera around each point (a foot in contact)


@dataclass(frozen=True)
class Marker:
    """Something the overlay draws over the model: plain data, world space.

    ``points`` are world-space xyz; for RAY the second is a direction, not a point.
    ``color`` is rgba in 0..1.
    """

    kind: MarkerKind
    points: tuple
    color: tuple = (1.0, 1.0, 1.0, 1.0)


class StatusLevel(enum.Enum):
    INFO = "info"
    ERROR = "error"


@dataclass(frozen=True)
class Status:
    """One line for the panel: what just happened, and whether it went wrong."""

    text: str = ""
    level: StatusLevel = StatusLevel.INFO

    @classmethod
    def error(cls, error) -> "Status":
        return cls(str(error), StatusLevel.ERROR)

    @property
    def is_error(self) -> bool:
        return self.level is StatusLevel.ERROR

    def __str__(self) -> str:
        return f"error: {self.text}" if self.is_error else self.text


@dataclass(frozen=True)
class FrameTimes:
    """What a frame costs, for the panel: ``frame_ms`` the wall time between frames, ``gpu_ms``
    the scene's drawing as the GPU timed it (medians over recent frames; None until measured),
    ``gpu_note`` why there is no GPU time (None: there is, or soon will be)."""

    frame_ms: float | None = None
    gpu_ms: float | None = None
    gpu_note: str | None = None

    def line(self) -> str:
        """"frame 31.0 ms  GPU 5.2 ms", "frame 31.0 ms  GPU time: n/a", or "" before any."""
        if self.frame_ms is None:
            return ""
        if self.gpu_note is not None:
            gpu = "GPU time: n/a"
        else:
            gpu = "GPU --" if self.gpu_ms is None else f"GPU {self.gpu_ms:.1f} ms"
        return f"frame {self.frame_ms:.1f} ms  {gpu}"

    def explanation(self) -> str:
        """The line's meaning, for its tooltip."""
        text = ("frame: the wall time from one frame to the next (median of the last 60), what a frame costs "
                "all told.\nGPU: the scene's drawing, timed by the GPU itself (OpenGL timer queries).")
        return text + (f"\nGPU time: n/a: {self.gpu_note}." if self.gpu_note else "")
