"""Draws a Scene with moderngl: skinned meshes with their glTF materials, lit by an environment
(image-based light) or the simple light, ground grid, skeleton overlay; and picks what is under
a pixel with an ID pass (``Renderer.pick``, ``Renderer.pick_bone``).

Submeshes are drawn in two passes: the opaque and masked ones, then the blended ones back to
front by their centre, depth-tested without writing depth (glTF's alpha modes, as Babylon.js).

The renderer reads the model (final matrices, vertex arrays, world matrices) and never
changes it; it knows nothing of windows or ImGui, so the window and the headless path share
every line of drawing code.
"""

from __future__ import annotations

import enum
from typing import NamedTuple

import numpy as np

from ..errors import ViewerError
from ..model.dual_quaternions import bone_dual_quaternions
from ..model.mesh import bounds, skin
from ..model.placed import PlacedScenes
from ..model.weights import joint_row, triangle_bone
from ..options import Axes, Paint, RenderOptions
from .geometry import bone_axes, ground_grid, marker_overlay, skeleton_overlay
from .materials import ENVIRONMENT_UNIT, GpuMaterial, cull, no_depth_writes, set_sampler_units
from .paint import paint_colors
from .shaders import load_program
from .tonemap import set_tone_mapping, tone_mapping_code

DEFAULT_KEY_LENGTH = float(np.linalg.norm(RenderOptions.key_light))  # the fill's height is set against it

# Vertex uniform components kept back for everything that is not a bone matrix.
RESERVED_UNIFORM_COMPONENTS = 256
MAX_TEXTURE_BONES_PER_ROW = 1024

BONE_STORAGES = ("auto", "uniform", "texture")
MORPH_TEXTURE_WIDTH = 4096  # texels a row of a morph target texture
# Blending "over": colour by the source's alpha, and alpha as a + (1 - a) * dst, so lines drawn over
# the model leave it opaque and over a transparent background are as opaque as they are drawn.
# (GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA, GL_ONE, GL_ONE_MINUS_SRC_ALPHA: moderngl is imported lazily.)
OVER = (0x0302, 0x0303, 0x0001, 0x0303)
MAX_LIGHTS = 8  # skinning.frag's uniform arrays
LIGHT_KINDS = {"directional": 0, "point": 1, "spot": 2}
# The simple light (environment "none"): radiance of a key and a fill light and of the sky and
# the ground, chosen so a model looks about as it did under the lambert light before issue 27.
SIMPLE_KEY = (2.2, 2.15, 2.1)
SIMPLE_FILL = (0.8, 0.82, 0.88)
SIMPLE_SKY = (0.36, 0.38, 0.44)
SIMPLE_GROUND = (0.1, 0.095, 0.09)


class SkinningMode(enum.IntEnum):
    """Where a mesh is skinned. The skinning shader gets the mode as ``SKINNING`` and every
    member as ``SKINNING_<NAME>`` #defines, so GLSL compares names, not numbers."""

    CPU = 0             # numpy skinned the vertices; the shader draws them as they are
    UNIFORM_ARRAY = 1   # final matrices in uniform mat4 u_bones[BONE_COUNT]
    BONE_TEXTURE = 2    # final matrices in an RGBA32F texture read with texelFetch


class ShaderPaint(enum.IntEnum):
    """What colours a mesh in the skinning shader (``u_paint``; every member is injected as a
    ``PAINT_<NAME>`` #define): the shader paints the heatmap and the bone map itself from the
    joint/weight attributes; VERTEX takes numpy's colours (viewer.render.paint) from in_paint."""

    NONE = 0
    WEIGHTS = 1
    BONE_MAP = 2
    VERTEX = 3


def skinning_defines(mode: SkinningMode, bone_count: int, influences: int, bones_per_row: int = 1,
                     morph_targets: int = 0, morph_normals: bool = False, pick: bool = False,
                     labels: bool = False, morph_tangents: bool = False, dual_quaternions: bool = False) -> dict:
    """The skinning shader's #defines. ``morph_targets`` > 0 morphs on the GPU (MORPH_TARGETS,
    MORPH_NORMALS, MORPH_TANGENTS, MORPH_TEXELS texels per vertex and target,
    MORPH_TEXTURE_WIDTH); ``pick`` builds it for the ID pass (PICK_IDS); ``labels`` for the
    labelled draw (LABELS: the part index and the depth beside the colour);
    ``dual_quaternions`` skins with dual quaternions (SKINNING_DQ: the bones' mat4s hold
    bone_dual_quaternions' packing)."""
    defines = {f"SKINNING_{member.name}": int(member) for member in SkinningMode}
    defines.update({f"PAINT_{member.name}": int(member) for member in ShaderPaint})
    defines.update(SKINNING=int(mode), BONE_COUNT=max(bone_count, 1), INFLUENCES=max(influences, 4),
                   BONES_PER_ROW=bones_per_row)
    if morph_targets:
        defines.update(MORPH_TARGETS=morph_targets, MORPH_NORMALS=int(morph_normals),
                       MORPH_TANGENTS=int(morph_tangents), MORPH_TEXELS=1 + int(morph_normals) + int(morph_tangents),
                       MORPH_TEXTURE_WIDTH=MORPH_TEXTURE_WIDTH)
    if pick:
        defines["PICK_IDS"] = 1
    if labels:
        defines["LABELS"] = 1
    if dual_quaternions and mode is not SkinningMode.CPU:
        defines["SKINNING_DQ"] = 1
    return defines


def pick_matrix(size, x: float, y: float, region: float = 1.0) -> np.ndarray:
    """A 4x4 (row-vector layout) that, applied after a projection for an image of ``size``
    (width, height), maps the ``region`` x ``region`` pixels centred on the point (x, y)
    (pixels, y down, as mouse events) onto the whole clip square: drawn into a region x region
    viewport, a pixel centre there samples exactly what the full image samples at (x, y)
    (gluPickMatrix, so the ID pass needs no image-sized framebuffer)."""
    width, height = float(size[0]), float(size[1])
    matrix = np.eye(4)
    matrix[0, 0], matrix[3, 0] = width / region, (width - 2.0 * x) / region
    matrix[1, 1], matrix[3, 1] = height / region, (2.0 * y - height) / region
    return matrix


class MeshHit(NamedTuple):
    """What the ID pass found under a pixel: the mesh and its triangle (an index into
    ``mesh.indices.reshape(-1, 3)``)."""

    mesh: object
    triangle: int


def morph_texture_data(morph_targets, tangents: bool = False) -> tuple[np.ndarray, tuple[int, int]]:
    """A MorphTargets' deltas as RGBA32F texels laid out as the shader reads them (vertex by
    vertex, each target's position delta, then its normal delta when there are normals, then
    with ``tangents`` its tangent delta), and the texture's (width, height)."""
    deltas = [morph_targets.positions] + ([morph_targets.normals] if morph_targets.normals is not None else [])
    if tangents:
        deltas.append(morph_targets.tangents)
    # (targets, vertices, texels, 3) -> (vertices, targets, texels, 4)
    stacked = np.stack(deltas, axis=2).transpose(1, 0, 2, 3)
    texels = np.zeros(stacked.shape[:3] + (4,), np.float32)
    texels[..., :3] = stacked
    texels = texels.reshape(-1, 4)
    width = min(MORPH_TEXTURE_WIDTH, max(len(texels), 1))
    height = -(-len(texels) // width)
    data = np.zeros((height * width, 4), np.float32)
    data[: len(texels)] = texels
    return data, (width, height)


class Renderer:
    """One per GL context. ``bone_storage``: "auto" (uniform array while the skeleton fits the
    context's uniform budget, else texture), "uniform" or "texture"; ``cpu_skinning`` skins in
    numpy and uploads vertices (Babylon's computeBonesUsingShaders = false)."""

    def __init__(self, ctx, bone_storage: str = "auto", cpu_skinning: bool = False):
        if bone_storage not in BONE_STORAGES:
            raise ViewerError(f"bone storage must be one of {', '.join(BONE_STORAGES)}, got {bone_storage!r}")
        self.ctx = ctx
        self.bone_storage = bone_storage
        self.cpu_skinning = cpu_skinning
        components = int(ctx.info.get("GL_MAX_VERTEX_UNIFORM_COMPONENTS", 1024))
        self.uniform_bone_budget = max(0, (components - RESERVED_UNIFORM_COMPONENTS) // 16)
        self._programs: dict = {}
        self._meshes: dict = {}
        self.white_texture = ctx.texture((1, 1), 4, b"\xff\xff\xff\xff")  # untextured materials
        self._lines = load_program(ctx, "lines.vert", "lines.frag")
        self._background = load_program(ctx, "background.vert", "background.frag")
        self._background_vao = ctx.vertex_array(self._background, [])
        self._wide_lines = load_program(ctx, "lines.vert", "lines.frag", {"WIDE_LINES": 1}, geometry="lines.geom")
        self._line_buffer = ctx.buffer(reserve=4096, dynamic=True)
        layout = [(self._line_buffer, "3f 4f", "in_position", "in_color")]
        self._line_vao = ctx.vertex_array(self._lines, layout)
        self._wide_line_vao = ctx.vertex_array(self._wide_lines, layout)
        self._grid_key = None
        self._grid_vertices = np.zeros((0, 7), np.float32)
        self._pick_target = None  # (id texture, depth renderbuffer, framebuffer), made on the first pick
        # "lbs" or "dq" while RenderOptions.compare_skinning draws one of its two views (every
        # mesh drawn so, whatever its own mesh.skinning: the model is not changed); else None.
        self.skinning_override = None
        self._environments: dict = {}  # source: Environment, loaded on first use
        self._shadow_pass = None  # viewer.render.shadows.ShadowPass, made on the first frame with shadows

    # --- resources -----------------------------------------------------------------------------
    def program(self, skinning: SkinningMode, bone_count: int, influences: int, bones_per_row: int = 1,
                morph_targets: int = 0, morph_normals: bool = False, morph_tangents: bool = False,
                pick: bool = False, labels: bool = False, shading: tuple = (), dual_quaternions: bool = False,
                shadow: bool = False):
        """The skinning program for these #defines (``pick``: skinning.vert with PICK_IDS and
        pick.frag, the ID pass; ``labels``: with LABELS, the labelled draw; ``shading``: the
        material's and the frame's ((name, value), ...), see skinning.frag; ``dual_quaternions``:
        SKINNING_DQ; ``shadow``: with SHADOW_PASS and shadow.frag, the shadow pass), built once per renderer."""
        key = (skinning, bone_count, influences, bones_per_row, morph_targets, morph_normals, morph_tangents, pick,
               labels, shading, dual_quaternions, shadow)
        if key not in self._programs:
            defines = skinning_defines(skinning, bone_count, influences, bones_per_row, morph_targets, morph_normals,
                                       pick, labels, morph_tangents, dual_quaternions)
            defines.update(shading)
            if shadow:
                defines["SHADOW_PASS"] = 1
            fragment = "pick.frag" if pick else "shadow.frag" if shadow else "skinning.frag"
            self._programs[key] = load_program(self.ctx, "skinning.vert", fragment, defines,
                                               varyings=("v_world_position",) if shadow else ())
        return self._programs[key]

    def gpu_mesh(self, mesh) -> "GpuMesh":
        entry = self._meshes.get(id(mesh))
        if entry is None or entry.mesh is not mesh:
            if entry is not None:
                entry.release()  # another mesh reused the id: its GL objects go
            entry = GpuMesh(self, mesh)
            self._meshes[id(mesh)] = entry
        return entry

    def forget(self, scene) -> None:
        """Release the GPU copies of a scene's meshes (when a model is replaced)."""
        for mesh in scene.meshes:
            entry = self._meshes.pop(id(mesh), None)
            if entry is not None:
                entry.release()

    def release(self) -> None:
        for entry in self._meshes.values():
            entry.release()
        self._meshes.clear()
        for program in self._programs.values():
            program.release()
        self._programs.clear()
        for resource in (self.white_texture, self._line_vao, self._wide_line_vao, self._line_buffer, self._lines,
                         self._wide_lines, self._background_vao, self._background, *(self._pick_target or ())):
            resource.release()
        self._pick_target = None
        if self._shadow_pass is not None:
            self._shadow_pass.release()
            self._shadow_pass = None
        self._environments.clear()  # the context's cache (viewer.render.environment) owns them

    # --- the light ------------------------------------------------------------------------------
    def environment(self, source, filtering: str = "mipmaps"):
        """The Environment of ``source`` ("studio" or an .hdr path) with its reflections blurred by
        ``filtering`` ("mipmaps" or "ggx"; loaded once per renderer), or None for "none" (the
        simple light)."""
        if source in (None, "", "none"):
            return None
        environment = self._environments.get((source, filtering))
        if environment is None:
            from .environment import Environment

            # Baking may draw into framebuffers of its own (GGX prefiltering): the frame's target
            # and viewport are bound again after, whichever was bound.
            import moderngl

            ctx = self.ctx
            previous, viewport = ctx.fbo, ctx.viewport
            if previous is None or isinstance(previous.mglo, moderngl.InvalidObject):
                previous = ctx.detect_framebuffer()  # none bound through moderngl yet
            try:
                environment = Environment.load(ctx, source, filtering)
            finally:
                previous.use()
                ctx.viewport = viewport
            self._environments[(source, filtering)] = environment
        return environment

    def frame_light(self, scene, options: RenderOptions) -> "FrameLight":
        """This frame's light: the environment (or none) and the punctual lights: the scene's
        KHR_lights_punctual ones, with the simple light's key and fill first when there is no
        environment (at most MAX_LIGHTS; the scene must be prepared, so nodes are placed)."""
        environment = self.environment(options.environment, options.environment_filter)
        lights = []
        if environment is None:
            key = np.asarray(options.key_light, np.float64)
            norm = np.linalg.norm(key)
            if norm > 0:  # the fill from the key's direction, not its length: --key-light at the default's angles
                key = key * (DEFAULT_KEY_LENGTH / norm)  # (a unit vector) lights as the default (not unit) does
            fill = np.array([-key[0], 0.3, -key[2]])
            for towards, color in ((key, SIMPLE_KEY), (fill, SIMPLE_FILL)):
                norm = np.linalg.norm(towards)
                if norm > 0:
                    lights.append((0, np.zeros(3), -towards / norm, 0.0, np.asarray(color), (0.0, 0.0)))
        simple = len(lights)
        scene_lights = getattr(scene, "lights", ())[: MAX_LIGHTS - simple]  # a Crowd has none
        for light in scene_lights:
            kind = LIGHT_KINDS[light.kind]
            inverse_range2 = 0.0 if not light.range else 1.0 / float(light.range) ** 2
            cone = (0.0, 0.0)
            if light.kind == "spot":
                inner, outer = np.cos(light.inner_cone_angle), np.cos(light.outer_cone_angle)
                scale = 1.0 / max(1e-3, inner - outer)
                cone = (scale, -outer * scale)
            lights.append((kind, np.asarray(light.world_position(), np.float64),
                           np.asarray(light.world_direction(), np.float64), inverse_range2,
                           np.asarray(light.color, np.float64) * float(light.intensity), cone))
        return FrameLight(environment, options, lights, (simple, scene_lights))

    def prepare_shadows(self, scene, options: RenderOptions, light: "FrameLight", crowd=None):
        """With ``options.shadows``: this frame's shadow maps drawn and added to ``light``
        (viewer.render.shadows.prepare_frame); the ShadowFrame, or None."""
        if not casts_shadows(options):
            return None
        from .shadows import prepare_frame

        return prepare_frame(self, scene, options, light, crowd)

    # --- picking -------------------------------------------------------------------------------
    def pick(self, scene, camera, size, x: float, y: float) -> MeshHit | None:
        """The mesh triangle nearest the camera at the point (x, y) of an image of ``size``
        (pixels, y down, as mouse events), or None: an ID pass.

        Every mesh of the scene is drawn as ``render`` draws it (the same skinning.vert, built
        with PICK_IDS: the same bone storage or CPU-skinned vertices, morph targets, world
        matrices, every submesh, depth-tested), writing 1 + its index in ``scene.meshes`` and
        its triangle number into an RG32UI pixel. The projection is narrowed to a 1-pixel
        region about (x, y) (``pick_matrix``), so the pass rasterizes one pixel of a 1x1
        framebuffer and reads 8 bytes back; the bound framebuffer is bound again after.
        The scene is drawn as it is: call ``scene.prepare()`` first, as for ``render``.
        """
        import moderngl

        width, height = float(size[0]), float(size[1])
        if not (0.0 <= x < width and 0.0 <= y < height):
            return None
        ctx = self.ctx
        ids, _depth, framebuffer = self._pick_framebuffer()
        previous = ctx.fbo
        if previous is None or isinstance(previous.mglo, moderngl.InvalidObject):
            previous = ctx.detect_framebuffer()  # none bound through moderngl yet (or released since)
        meshes = scene.meshes
        try:
            framebuffer.use()
            framebuffer.clear(depth=1.0)
            ids.write(bytes(8))  # "nothing" (an integer attachment is not cleared by glClear)
            ctx.disable(moderngl.CULL_FACE | moderngl.BLEND)
            ctx.enable(moderngl.DEPTH_TEST)
            ctx.depth_func = "<"
            ctx.wireframe = False
            view = camera.view_matrix()
            projection = camera.projection_matrix(width / max(height, 1.0)) @ pick_matrix((width, height), x, y)
            for number, mesh in enumerate(meshes, start=1):
                self.gpu_mesh(mesh).draw_ids(view, projection, number)
            found, triangle = np.frombuffer(ids.read(), np.uint32)[:2]
        finally:
            previous.use()
        if found == 0 or found > len(meshes):
            return None
        return MeshHit(meshes[int(found) - 1], int(triangle))

    def pick_bone(self, scene, camera, size, x: float, y: float):
        """(skeleton, i) of the bone a click at (x, y) on the mesh picks (``skeleton.bones[i]``),
        or None: the ID pass (``pick``), then the bone with the largest summed skin weight on the
        triangle found, or the bone a mesh without a skin hangs from
        (viewer.model.weights.triangle_bone, as the numpy ray cast viewer.editing.interaction.mesh_bone_at)."""
        hit = self.pick(scene, camera, size, x, y)
        bone = None if hit is None else triangle_bone(hit.mesh, scene, hit.triangle)
        skeleton = None if bone is None else bone.get_skeleton()
        if skeleton is None:
            return None
        return skeleton, list(skeleton.bones).index(bone)

    def _pick_framebuffer(self):
        if self._pick_target is None:
            ids = self.ctx.texture((1, 1), 2, dtype="u4")
            ids.filter = (self.ctx.NEAREST, self.ctx.NEAREST)
            depth = self.ctx.depth_renderbuffer((1, 1))
            self._pick_target = (ids, depth, self.ctx.framebuffer(color_attachments=[ids], depth_attachment=depth))
        return self._pick_target

    # --- drawing -------------------------------------------------------------------------------
    def render(self, scene, camera, size, options: RenderOptions | None = None) -> None:
        """Draw into the currently bound framebuffer, whose size is ``size`` (width, height).

        The scene is drawn as it is: the app calls ``scene.prepare()`` once per frame first.
        With ``options.compare_skinning`` the view is drawn twice side by side, each half as
        wide, in the room right of ``camera.screen_offset`` (a side panel's): every skinned mesh
        with linear blend skinning on the left, with dual quaternions on the right.
        """
        options = options or RenderOptions()
        if not options.compare_skinning:
            self._render_view(scene, camera, size, options)
            return
        import copy

        width, height = size
        left = int(round(camera.screen_offset * width))
        half = max((width - left) // 2, 1)
        self._begin_frame(camera, size, options, self.frame_light(scene, options))  # the whole frame's background
        single = copy.copy(camera)
        single.screen_offset = 0.0
        try:
            for k, mode in enumerate(("lbs", "dq")):
                self.skinning_override = mode
                self._render_view(scene, single, (half, height), options, origin=(left + k * half, 0))
        finally:
            self.skinning_override = None
            self.ctx.viewport = (0, 0, width, height)

    def _render_view(self, scene, camera, size, options: RenderOptions, origin=None) -> None:
        """``render``'s one view, into the viewport at ``origin`` (x, y; None: the framebuffer's
        corner, the whole of it cleared) of ``size``."""
        import moderngl

        ctx = self.ctx
        height = size[1]
        placed = PlacedScenes.of(scene)  # one model is a list of one
        first = placed[0].scene
        light = self.frame_light(first, options)
        row = len(placed) > 1 or bool(np.any(placed[0].offset))
        shadow = None
        if not row:
            shadow = self.prepare_shadows(first, options, light)
        elif casts_shadows(options):  # one shadow pass for the row, fitted to every model, on the shared ground
            with _ShadowRow(placed) as moved:
                shadow = self.prepare_shadows(moved, options, light)
        view, projection = self._begin_frame(camera, size, options, light, origin)
        # Each model is drawn in its own coordinates, moved by its offset in the view matrix
        # (row vectors: local @ T @ view), and lit by its own lights, as it is drawn alone.
        views = [(item.scene, placed_view(view, item.offset), np.asarray(camera.position) - item.offset)
                 for item in placed]
        for item, (model, model_view, eye) in zip(placed, views):
            model_light = light if model is first else self.frame_light(model, options)
            if row:
                model_light = placed_shadow(model_light, light, item.offset)
            self._draw_meshes(model, model_view, projection, eye, options, model_light)
        if shadow is not None:
            self._shadow_pass.draw_ground(shadow, view, projection)

        ctx.enable(moderngl.BLEND)
        ctx.blend_func = OVER
        if options.show_grid:
            ground = placed.ground_bounds if len(placed) > 1 else first.rest_bounds
            with no_depth_writes(ctx):  # an overlay: it hides nothing drawn after it
                self._draw_lines(self._grid(ground), view, projection, moderngl.LINES, fade=ground)
        for model, model_view, _ in views:
            if options.show_skeleton:
                ctx.disable(moderngl.DEPTH_TEST)  # the overlay is seen through the mesh
                lines, points = skeleton_overlay(model, options.selected_bone)
                scale = max(1.0, height / 600.0)  # overlay sizes follow the image, not the model
                self._draw_lines(lines, model_view, projection, moderngl.LINES, line_width=2.5 * scale, size=size)
                ctx.enable(moderngl.PROGRAM_POINT_SIZE)
                self._draw_lines(points, model_view, projection, moderngl.POINTS, point_size=7.0 * scale)
                ctx.disable(moderngl.PROGRAM_POINT_SIZE)
            if options.axes is not Axes.NONE:
                self._draw_axes(model, options, model_view, projection, size)
        if options.markers:
            self._draw_markers(options.markers, view, projection, size)
        ctx.disable(moderngl.BLEND)

    def render_labels(self, scene, camera, size, options: RenderOptions, parts: dict, color_target,
                      label_target) -> None:
        """The labelled draw (boneviewer synth): the meshes as ``render`` draws them (no grid,
        skeleton or overlays) into ``label_target``, a framebuffer whose attachment 0 is
        ``color_target``'s colour, 1 an R16UI part index and 2 an R32F camera-space depth, in
        one draw per submesh (the skinning shader built with LABELS). ``parts``: {id(mesh):
        (V,) int part per vertex, 0 for none}; ``color_target`` (the colour and depth buffers
        alone) gets the background first. The part and depth targets must be cleared to 0 by
        the caller (an integer attachment is not cleared by glClear)."""
        color_target.use()
        light = self.frame_light(scene, options)
        shadow = self.prepare_shadows(scene, options, light)
        view, projection = self._begin_frame(camera, size, options, light)
        label_target.use()
        self._draw_meshes(scene, view, projection, camera.position, options, light, parts, label_target)
        if shadow is not None:  # the ground's shadow is colour only: the labels are the model's
            color_target.use()
            self._shadow_pass.draw_ground(shadow, view, projection)
            label_target.use()

    def _draw_meshes(self, scene, view, projection, camera_position, options, light, parts=None,
                     label_target=None) -> None:
        """Every mesh shaded (opaque and masked submeshes, then the blended ones back to front),
        then the wireframe; ``parts``: the labelled draw's (see render_labels), whose blended
        submeshes write colour only, so the labels show what is behind them."""
        import moderngl

        if not (options.show_mesh or options.wireframe):
            return
        ctx = self.ctx
        meshes = [self.gpu_mesh(mesh) for mesh in scene.meshes]
        if options.show_mesh:
            blended = []
            for order, gpu in enumerate(meshes):
                mesh_parts = parts[id(gpu.mesh)] if parts is not None else None
                later = gpu.draw(view, projection, camera_position, options, scene, light, mesh_parts)
                blended += [(gpu.view_depth(index, view), order, index) for index in later]
            if blended:
                blended.sort()  # farthest (most negative view z) first
                ctx.enable(moderngl.BLEND)
                ctx.blend_func = OVER
                # Depth tested, not written: a blended part hides none of what is drawn after it
                # (the blended parts behind it, the ground's shadow, the grid), as in Babylon.js.
                with no_depth_writes(ctx):
                    if label_target is not None:
                        label_target.color_mask = [(True, True, True, True)] + [(False,) * 4] * 2
                    bound = None
                    for _, order, index in blended:
                        gpu = meshes[order]
                        mesh_parts = parts[id(gpu.mesh)] if parts is not None else None
                        program, vao = gpu.build(index, light, options, mesh_parts)
                        if bound != (order, program):
                            gpu.bind(view, projection, camera_position, options, scene, light, program)
                            bound = (order, program)
                        gpu.draw_submesh(program, vao, index, options)
                    if label_target is not None:
                        label_target.color_mask = [(True, True, True, True)] * 3
                ctx.disable(moderngl.BLEND)
            ctx.disable(moderngl.CULL_FACE)
            ctx.front_face = "ccw"  # as the overlays and the next frame expect it
        if options.wireframe:
            for gpu in meshes:
                gpu.draw_wireframe(view, projection, camera_position, options, scene, light,
                                   parts[id(gpu.mesh)] if parts is not None else None)

    def _draw_axes(self, scene, options, view, projection, size) -> None:
        """Bone axes (the selected bone's, or every bone's) over everything, a fixed size on screen."""
        import moderngl

        if options.axes is Axes.SELECTED and options.selected_bone is None:
            return
        bones = None if options.axes is Axes.ALL else [options.selected_bone]
        scale = max(1.0, size[1] / 600.0)
        lines = bone_axes(scene, bones, view, projection, size[1], scale)
        self.ctx.disable(moderngl.DEPTH_TEST)
        self._draw_lines(lines, view, projection, moderngl.LINES, line_width=2.0 * scale, size=size)

    def _draw_markers(self, markers, view, projection, size) -> None:
        """The editor's markers (controller targets, IK chains) over everything, sized on
        screen as the skeleton overlay is."""
        import moderngl

        scale = max(1.0, size[1] / 600.0)
        geometry = marker_overlay(markers, view, projection, size[1], scale)
        self.ctx.disable(moderngl.DEPTH_TEST)
        self._draw_lines(geometry.guides, view, projection, moderngl.LINES, line_width=1.5 * scale, size=size)
        self._draw_lines(geometry.lines, view, projection, moderngl.LINES, line_width=3.0 * scale, size=size)
        self.ctx.enable(moderngl.PROGRAM_POINT_SIZE)
        self._draw_lines(geometry.points, view, projection, moderngl.POINTS, point_size=9.0 * scale)
        self.ctx.disable(moderngl.PROGRAM_POINT_SIZE)

    def render_crowd(self, crowd, camera, size, options: RenderOptions | None = None) -> None:
        """Draw a Crowd (one mesh, many posed and placed copies) with one instanced draw call.

        The app updates the crowd's skeletons first, as one batch (``crowd.prepare()``); their
        matrices go up as one RGBA32F texture, which instance i reads from row
        i * bones_per_instance + joint. The ground grid spans every copy.
        """
        import moderngl

        options = options or RenderOptions()
        light = self.frame_light(crowd, options)
        entry = self._meshes.get(("crowd", id(crowd)))
        if entry is None or entry.crowd is not crowd or entry.instances != len(crowd):
            if entry is not None:
                entry.release()
            entry = GpuCrowd(self, crowd)
            self._meshes[("crowd", id(crowd))] = entry
        shadow = self.prepare_shadows(crowd, options, light, crowd=entry)
        view, projection = self._begin_frame(camera, size, options, light)
        entry.draw(view, projection, camera.position, options, light)
        if shadow is not None:
            self._shadow_pass.draw_ground(shadow, view, projection)
        if options.show_grid:
            ground = entry.ground_bounds()
            self.ctx.enable(moderngl.BLEND)
            self.ctx.blend_func = OVER
            with no_depth_writes(self.ctx):
                self._draw_lines(self._grid(ground), view, projection, moderngl.LINES, fade=ground)
            self.ctx.disable(moderngl.BLEND)

    def _begin_frame(self, camera, size, options: RenderOptions, light=None, origin=None):
        """Viewport, cleared depth, background (the gradient, or the environment when
        ``options.show_environment``), depth test on: (view, projection). ``origin``: the
        viewport's corner, the clear kept inside it (None: (0, 0), the whole framebuffer)."""
        import moderngl

        ctx = self.ctx
        width, height = size
        ctx.viewport = (0, 0, width, height) if origin is None else (*origin, width, height)
        area = None if origin is None else ctx.viewport  # the clears' own rectangle
        ctx.disable(moderngl.DEPTH_TEST | moderngl.CULL_FACE | moderngl.BLEND)
        ctx.front_face = "ccw"
        view, projection = camera.view_matrix(), camera.projection_matrix(width / max(height, 1))
        environment = light.environment if light is not None else None
        if options.transparent_background:
            ctx.clear(0.0, 0.0, 0.0, 0.0, depth=1.0, viewport=area)
        elif options.show_environment and environment is not None:
            ctx.clear(depth=1.0, viewport=area)
            environment.draw_background(view, projection, options.environment_rotation, options.exposure,
                                        options.tone_mapping)
        else:
            ctx.clear(depth=1.0, viewport=area)
            self._background["u_top"].value = tuple(options.background_top)
            self._background["u_bottom"].value = tuple(options.background_bottom)
            self._background_vao.render(moderngl.TRIANGLES, vertices=3)
        ctx.enable(moderngl.DEPTH_TEST)
        return view, projection

    def _draw_lines(self, vertices, view, projection, mode, fade=None, point_size=1.0, line_width=None, size=None):
        """Lines or points; ``line_width`` (pixels) widens lines in the geometry shader."""
        if len(vertices) == 0:
            return
        data = np.ascontiguousarray(vertices, dtype=np.float32)
        if data.nbytes > self._line_buffer.size:
            self._line_buffer.orphan(max(data.nbytes, self._line_buffer.size * 2))
        self._line_buffer.write(data.tobytes())
        program, vao = self._lines, self._line_vao
        if line_width is not None:
            program, vao = self._wide_lines, self._wide_line_vao
            program["u_line_width"].value = float(line_width)
            program["u_viewport"].value = (float(size[0]), float(size[1]))
        program["u_view"].write(view.astype(np.float32).tobytes())
        program["u_projection"].write(projection.astype(np.float32).tobytes())
        if "u_point_size" in program:
            program["u_point_size"].value = point_size
        if "u_round_points" in program:
            program["u_round_points"].value = mode == 0  # moderngl.POINTS
        if fade is not None:
            low, high = fade
            program["u_fade_center"].value = tuple((low + high) / 2.0)
            program["u_fade_radius"].value = float(self._grid_radius)
        else:
            program["u_fade_radius"].value = 0.0
        vao.render(mode, vertices=len(data))

    def _grid(self, rest_bounds):
        low, high = rest_bounds
        key = (tuple(low), tuple(high))
        if key != self._grid_key:
            self._grid_vertices, self._grid_radius = ground_grid(low, high)
            self._grid_key = key
        return self._grid_vertices


def casts_shadows(options: RenderOptions) -> bool:
    """Whether a frame with ``options`` draws shadows (the mesh shown and shadows on)."""
    return bool(options.shadows and options.show_mesh)


def placed_view(view, offset) -> np.ndarray:
    """The view matrix of a model drawn at ``offset`` (row vectors: translate, then view)."""
    if not np.any(offset):
        return view
    moved = np.eye(4)
    moved[3, :3] = offset
    return moved @ view


class _ShadowRow:
    """Several placed models as the shadow pass takes one scene: every model's meshes, the row's
    ground (the grid's: ``PlacedScenes.ground_bounds``). The pass fits its maps to the meshes'
    world matrices and draws them by those, so while it runs (``with``) each model's meshes are
    moved by the model's offset, and put back after: the colour pass moves them in the view."""

    def __init__(self, placed: PlacedScenes):
        self.rest_bounds = placed.ground_bounds  # what prepare_frame takes the ground from
        self._moved, seen = [], set()
        for item in placed:
            if id(item.scene) in seen:  # one scene placed twice is drawn where it is first placed
                continue
            seen.add(id(item.scene))
            self._moved += [(mesh, item.offset) for mesh in item.scene.meshes]
        self.meshes = [mesh for mesh, _ in self._moved]

    def __enter__(self) -> "_ShadowRow":
        self._kept = [(mesh, mesh.world_matrix) for mesh, offset in self._moved if np.any(offset)]
        for mesh, offset in self._moved:
            if np.any(offset):
                moved = np.array(mesh.world_matrix, np.float64)
                moved[3, :3] += offset  # row vectors: the translation row
                mesh.world_matrix = moved
        return self

    def __exit__(self, *exc) -> None:
        for mesh, kept in self._kept:
            mesh.world_matrix = kept


def placed_shadow(model_light: "FrameLight", row_light: "FrameLight", offset) -> "FrameLight":
    """``model_light`` (a placed model's own light; the first model's is ``row_light``, which the
    row's shadow pass was prepared in) reading the row's shadow frame, the cast map moved into the
    model's own coordinates (its meshes are drawn unmoved, the view moved): the model shadows
    itself where its own light is the one that casts, as it does alone."""
    import copy

    shadow = row_light.shadow
    if shadow is None or shadow.cast_matrix is None or (model_light is row_light and not np.any(offset)):
        return model_light
    own = copy.copy(shadow)
    own.cast_matrix = placed_view(shadow.cast_matrix, offset)
    if model_light is row_light:
        model_light = copy.copy(row_light)  # its defines already read the map
        model_light.shadow = own
        return model_light
    from .shadows import shadow_light

    simple, scene_lights = model_light.casters  # which of its own lights would cast, were it alone
    direction, spot = shadow_light(model_light.options, model_light.environment, scene_lights, simple,
                                   row_light.shadow_pass.suns)
    if direction is None:
        return model_light
    (towards, index), (row_towards, _) = direction, row_light.shadow_direction
    if not np.allclose(towards, row_towards) or (spot is None) != (row_light.shadow_spot is None):
        return model_light  # its own light casts elsewhere: the map is not its
    own.cast_light = index
    model_light.shadow, model_light.shadow_pass = own, row_light.shadow_pass
    model_light.defines = model_light.defines + own.defines
    return model_light


class FrameLight:
    """One frame's light, set into every mesh program (``set_frame_uniforms``): the environment
    (or None: the simple light), the look's options, and the punctual lights as the shader's
    uniform arrays."""

    def __init__(self, environment, options: RenderOptions, lights, casters=(0, ())):
        self.environment, self.options = environment, options
        self.casters = casters  # (simple lights first, the scene's lights): which may cast (shadows.shadow_light)
        self.shadow = self.shadow_pass = None  # this frame's ShadowFrame and its pass (Renderer.prepare_shadows)
        # What skinning.frag compiles in for this frame (beside the material's); the tone curve
        # too (tonemap.glsl's TONE_MAPPING: a uniform choice would run both curves on llvmpipe).
        self.defines = (("ENVIRONMENT", int(environment is not None)), ("LIGHTS", len(lights)),
                        ("SHADED", int(options.paint is Paint.SHADED)),
                        ("TONE_MAPPING", tone_mapping_code(options.tone_mapping)))
        position = np.zeros((MAX_LIGHTS, 4), np.float32)
        direction = np.zeros((MAX_LIGHTS, 4), np.float32)
        color = np.zeros((MAX_LIGHTS, 3), np.float32)
        cone = np.zeros((MAX_LIGHTS, 2), np.float32)
        for i, (kind, where, towards, inverse_range2, rgb, spot) in enumerate(lights):
            position[i] = (*where, kind)
            direction[i] = (*towards, inverse_range2)
            color[i], cone[i] = rgb, spot
        self.arrays = {"u_light_position": position.tobytes(), "u_light_direction": direction.tobytes(),
                       "u_light_color": color.tobytes(), "u_light_cone": cone.tobytes()}


def set_frame_uniforms(program, view, projection, camera_position, light: FrameLight) -> None:
    """The per-frame uniforms every mesh program shares: camera, light, the look, sampler units."""
    options = light.options
    program["u_view"].write(view.astype(np.float32).tobytes())
    program["u_projection"].write(projection.astype(np.float32).tobytes())
    set_sampler_units(program)
    for name, value in (("u_camera_position", tuple(camera_position)), ("u_key_direction", tuple(options.key_light)),
                        ("u_environment", light.environment is not None), ("u_sky", SIMPLE_SKY),
                        ("u_ground", SIMPLE_GROUND)):
        if name in program:
            program[name].value = value
    set_tone_mapping(program, options.exposure)
    for name, data in light.arrays.items():
        if name in program:  # the compiler keeps the arrays up to the last light
            uniform = program[name]
            uniform.write(data[: len(data) // MAX_LIGHTS * uniform.array_length])
    if light.shadow is not None:
        light.shadow_pass.use(program, light.shadow)
    if light.environment is not None:
        light.environment.use(program, ENVIRONMENT_UNIT, options.environment_rotation)
    else:  # unused, but a cube sampler left on unit 0 beside the 2D ones makes GL refuse the draw
        for offset, name in enumerate(("u_env_specular", "u_env_brdf")):
            if name in program:
                program[name].value = ENVIRONMENT_UNIT + offset


def submesh_materials(ctx, mesh, textures: dict) -> list:
    """A GpuMaterial per submesh of ``mesh`` (textures shared through ``textures``)."""
    return [GpuMaterial(ctx, submesh.pbr, textures) for submesh in mesh.submeshes]


class GpuMesh:
    """GPU buffers of one SkinnedMesh, its bone matrix storage, its morph target texture and
    its materials.

    Morph targets are applied in the shader (deltas in an RGBA32F texture, weights in a
    uniform array), except with CPU skinning, where numpy morphs and skins the vertices."""

    def __init__(self, renderer: Renderer, mesh):
        self.renderer, self.mesh = renderer, mesh
        ctx = renderer.ctx
        skeleton = mesh.skeleton
        bone_count = len(skeleton.bones) if skeleton is not None else 0
        self.influences = mesh.influences
        self.tangents = mesh.tangents
        morph = mesh.morph_targets
        self.cpu_morph = morph is not None and renderer.cpu_skinning
        self.morph_targets = len(morph) if morph is not None and not self.cpu_morph else 0
        morph_normals = self.morph_targets > 0 and morph.normals is not None
        morph_tangents = self.morph_targets > 0 and self.tangents is not None and morph.tangents is not None
        # The weights take uniform vectors the bone matrices cannot use.
        budget = renderer.uniform_bone_budget - (-(-self.morph_targets // 4) + 3) // 4
        if skeleton is None or renderer.cpu_skinning:
            self.skinning, self.bones_per_row = SkinningMode.CPU, 1
        else:
            storage = renderer.bone_storage
            if storage == "uniform" and bone_count > budget:
                raise ViewerError(f"mesh {mesh.name!r}: {bone_count} bones do not fit this GL context's uniform "
                                  f"budget of {budget} matrices; use the bone texture")
            if storage == "auto":
                storage = "uniform" if bone_count <= budget else "texture"
            self.skinning = SkinningMode.UNIFORM_ARRAY if storage == "uniform" else SkinningMode.BONE_TEXTURE
            self.bones_per_row = min(bone_count, MAX_TEXTURE_BONES_PER_ROW) if self.skinning is SkinningMode.BONE_TEXTURE else 1
        self._program_key = (self.skinning, bone_count, self.influences, self.bones_per_row, self.morph_targets,
                             morph_normals, morph_tangents)
        self.morph_texture = None
        if self.morph_targets:
            data, (width, height) = morph_texture_data(morph, morph_tangents)
            limit = int(ctx.info.get("GL_MAX_TEXTURE_SIZE", 16384))
            if height > limit:
                raise ViewerError(f"mesh {mesh.name!r}: {len(morph)} morph targets of {morph.vertex_count} vertices "
                                  f"need a {width}x{height} texture, over this GL context's limit of {limit}; use "
                                  f"CPU skinning")
            self.morph_texture = ctx.texture((width, height), 4, data.tobytes(), dtype="f4")
            self.morph_texture.filter = (ctx.NEAREST, ctx.NEAREST)
            self._morph_weights = np.zeros(4 * -(-self.morph_targets // 4), np.float32)
        self.bone_texture = None
        if self.skinning is SkinningMode.BONE_TEXTURE:
            rows = -(-bone_count // self.bones_per_row)
            self.bone_texture = ctx.texture((4 * self.bones_per_row, rows), 4, dtype="f4")
            self.bone_texture.filter = (ctx.NEAREST, ctx.NEAREST)
            self._texture_data = np.zeros((rows * self.bones_per_row, 4, 4), np.float32)

        self.buffers = vertex_buffers(ctx, mesh, skinned=self.skinning is not SkinningMode.CPU,
                                      dynamic=self.skinning is SkinningMode.CPU and (skeleton is not None or self.cpu_morph))
        self._uploaded_morph = None  # the morph weights version the CPU-morphed vertices show
        self._uploaded_skin = None   # CPU skinning: (final matrices, morph weights) the vertices show
        self._painted = None         # (paint, bone, scene) whose numpy colours in_paint holds
        self.index_buffer = ctx.buffer(mesh.indices.astype(np.uint32).tobytes())
        self.textures: dict = {}
        self.materials = submesh_materials(ctx, mesh, self.textures)
        self.centers = submesh_centers(mesh)
        self._builds: dict = {}  # (shading defines, labels, dual quaternions): (program, vertex array)
        self._picks: dict = {}  # dual quaternions: the ID pass's (program, vertex array), made on the first pick
        self._shadows: dict = {}  # dual quaternions: the shadow pass's (program, unindexed vertex array)
        self.shadow_positions = None  # the posed world positions skin_for_shadow captures
        self.part_buffer = None  # the labelled draw's in_part, made on its first
        self._parts = None  # the part array part_buffer holds

    def _vertex_array(self, program, extra=()):
        content = [(buffer, layout, name) for name, (buffer, layout) in self.buffers.items() if name in program]
        return self.renderer.ctx.vertex_array(program, content + list(extra), index_buffer=self.index_buffer,
                                              index_element_size=4)

    @property
    def skinning_mode(self) -> str:
        """How the mesh is skinned now: the renderer's side-by-side override, else ``mesh.skinning``
        (read each frame)."""
        return self.renderer.skinning_override or self.mesh.skinning

    @property
    def dual_quaternions(self) -> bool:
        return self.skinning_mode == "dq"

    def update(self, program) -> None:
        """Upload this frame's bone matrices and morph weights to ``program`` (a drawing program
        or the ID pass's) or the bone texture (or CPU-morphed and -skinned vertices). With
        dual-quaternion skinning on the GPU, each bone's mat4 is its dual quaternion and scale
        (bone_dual_quaternions: the compiled kernel's loop, or numpy over the bones), uploaded where
        the matrices go."""
        mesh = self.mesh
        if self.morph_targets:
            self._morph_weights[: self.morph_targets] = mesh.morph_weights
            program["u_morph_weights"].write(self._morph_weights.tobytes())
        skeleton = mesh.skeleton
        if skeleton is None:
            if self.cpu_morph and self._uploaded_morph != mesh.morph_targets.version:
                self._write_vertices(*mesh.morphed(tangents=True))
                self._uploaded_morph = mesh.morph_targets.version
            return
        matrices = skeleton.get_transform_matrices()
        if self.skinning is not SkinningMode.CPU and self.dual_quaternions:
            matrices = bone_dual_quaternions(matrices).astype(np.float32)
        if self.skinning is SkinningMode.UNIFORM_ARRAY:
            program["u_bones"].write(matrices.tobytes())
        elif self.skinning is SkinningMode.BONE_TEXTURE:
            self._texture_data[: len(matrices)] = matrices
            self.bone_texture.write(self._texture_data.tobytes())
        else:
            # The vertices are skinned again only when the pose, the morph weights or the
            # skinning changed since the last upload (a paused frame, or the ID pass after the
            # frame, reuses them).
            uploaded = self._uploaded_skin
            mode = self.skinning_mode
            if (uploaded is not None and np.array_equal(uploaded[0], matrices)
                    and np.array_equal(uploaded[1], mesh.morph_weights) and uploaded[2] == mode):
                return
            positions, normals, tangents = mesh.morphed(tangents=True)
            self._write_vertices(*skin(positions, normals, mesh.joints, mesh.weights, matrices, tangents=tangents,
                                       mode=mode))
            self._uploaded_skin = (matrices.copy(), np.array(mesh.morph_weights, copy=True), mode)

    def _write_vertices(self, positions, normals, tangents=None) -> None:
        self.buffers["in_position"][0].write(positions.astype(np.float32).tobytes())
        self.buffers["in_normal"][0].write(normals.astype(np.float32).tobytes())
        if tangents is not None and "in_tangent" in self.buffers:
            self.buffers["in_tangent"][0].write(np.asarray(tangents, np.float32).tobytes())

    def set_paint(self, options: RenderOptions, scene, program) -> None:
        """The skin view's uniforms; numpy's colours uploaded when the shader cannot paint them."""
        mesh, paint = self.mesh, options.paint
        mode = ShaderPaint.NONE
        if paint is not Paint.SHADED:
            gpu = self.skinning is not SkinningMode.CPU and paint in (Paint.WEIGHTS, Paint.BONE_MAP)
            if gpu:
                mode = ShaderPaint.WEIGHTS if paint is Paint.WEIGHTS else ShaderPaint.BONE_MAP
                joint = joint_row(mesh, options.selected_bone) if paint is Paint.WEIGHTS else -1
                program["u_paint_joint"].value = joint
            else:
                mode = ShaderPaint.VERTEX
                bone = options.selected_bone if paint is Paint.WEIGHTS else None
                key = (paint, id(bone), id(scene))
                if key != self._painted:
                    colors = paint_colors(mesh, scene, paint, bone)
                    self.buffers["in_paint"][0].write(colors.tobytes())
                    self._painted = key
        if "u_paint" in program:  # the vertex shader paints with GPU skinning only
            program["u_paint"].value = int(mode)

    def build(self, index: int, light: FrameLight, options: RenderOptions, parts=None):
        """(program, vertex array) that draws submesh ``index`` in this frame: the skinning
        program built with its material's and the frame's #defines (a skin view's: the same for
        every material), and with ``parts`` ((V,) part per vertex) the labelled draw's (LABELS,
        parts as the in_part attribute)."""
        frame = light.defines + (("HAS_TANGENTS", int(self.tangents is not None)),)
        shading = (self.materials[index].defines if options.paint is Paint.SHADED else ()) + frame
        labels = parts is not None
        if labels:
            if self.part_buffer is None:
                self.part_buffer = self.renderer.ctx.buffer(reserve=4 * max(len(self.mesh.positions), 1))
            if self._parts is not parts:
                self.part_buffer.write(np.ascontiguousarray(parts, dtype=np.int32).tobytes())
                self._parts = parts
        dual = self.dual_quaternions
        entry = self._builds.get((shading, labels, dual))
        if entry is None:
            program = self.renderer.program(*self._program_key, labels=labels, shading=shading, dual_quaternions=dual)
            extra = [(self.part_buffer, "1i", "in_part")] if labels else []
            entry = self._builds[(shading, labels, dual)] = (program, self._vertex_array(program, extra))
        return entry

    def bind(self, view, projection, camera_position, options: RenderOptions, scene, light: FrameLight,
             program) -> None:
        """This mesh's pose, placement, the frame's view and light, and the paint, into
        ``program`` (programs are shared by meshes built alike: bind before each mesh's draws)."""
        self.update(program)
        program["u_world"].write(self.mesh.world_matrix.astype(np.float32).tobytes())
        set_frame_uniforms(program, view, projection, camera_position, light)
        self.set_paint(options, scene, program)
        program["u_flat_color"].value = False
        self._use_vertex_textures(program)

    def _use_vertex_textures(self, program) -> None:
        """The bone and morph target textures the vertex stage reads, on units 1 and 2."""
        if self.bone_texture is not None:
            self.bone_texture.use(location=1)
            program["u_bone_texture"].value = 1
        if self.morph_texture is not None:
            self.morph_texture.use(location=2)
            program["u_morph_texture"].value = 2

    def draw(self, view, projection, camera_position, options: RenderOptions, scene, light: FrameLight,
             parts=None) -> list:
        """The opaque and masked submeshes shaded (every submesh, unculled, in a skin view);
        returns the indices of the blended ones, for the caller to draw back to front after
        every mesh's opaque ones (``build``, ``bind``, ``draw_submesh``). ``parts``: see build."""
        shaded = options.paint is Paint.SHADED
        blended, bound = [], None
        for index, material in enumerate(self.materials):
            if shaded and material.blend:
                blended.append(index)
                continue
            program, vao = self.build(index, light, options, parts)
            if program is not bound:
                self.bind(view, projection, camera_position, options, scene, light, program)
                bound = program
            self.draw_submesh(program, vao, index, options)
        return blended

    def draw_submesh(self, program, vao, index: int, options: RenderOptions) -> None:
        """One submesh with its material (culled as it says, in the shaded look)."""
        import moderngl

        submesh, material = self.mesh.submeshes[index], self.materials[index]
        material.use(program)
        if options.paint is Paint.SHADED:
            cull(self.renderer.ctx, material.double_sided, self.mesh.world_matrix)
        vao.render(moderngl.TRIANGLES, vertices=submesh.index_count, first=submesh.first_index)

    def draw_wireframe(self, view, projection, camera_position, options: RenderOptions, scene, light: FrameLight,
                       parts=None) -> None:
        """Dark edges over the shaded mesh, light ones on their own."""
        import moderngl

        program, vao = self.build(0, light, options, parts)
        ctx = self.renderer.ctx
        self.bind(view, projection, camera_position, options, scene, light, program)
        ctx.disable(moderngl.CULL_FACE)
        program["u_flat_color"].value = True
        program["u_base_color"].value = (0.05, 0.05, 0.05, 1.0) if options.show_mesh else (0.85, 0.9, 1.0, 1.0)
        ctx.wireframe = True
        ctx.depth_func = "<="  # edges lie exactly on the filled surface
        vao.render(moderngl.TRIANGLES)
        ctx.depth_func = "<"
        ctx.wireframe = False

    def view_depth(self, index: int, view) -> float:
        """The view-space z of submesh ``index``'s centre (more negative: farther)."""
        center = np.append(self.centers[index], 1.0) @ np.asarray(self.mesh.world_matrix, np.float64)
        return float((center @ np.asarray(view, np.float64))[2])

    def draw_ids(self, view, projection, number: int) -> None:
        """The ID pass for this mesh (see Renderer.pick): its pose uploaded as ``draw`` does,
        every submesh drawn with the PICK_IDS program, writing ``number`` and its triangles'."""
        import moderngl

        dual = self.dual_quaternions
        if dual not in self._picks:
            pick_program = self.renderer.program(*self._program_key, pick=True, dual_quaternions=dual)
            self._picks[dual] = (pick_program, self._vertex_array(pick_program))
        program, vao = self._picks[dual]
        self.update(program)
        program["u_world"].write(self.mesh.world_matrix.astype(np.float32).tobytes())
        program["u_view"].write(view.astype(np.float32).tobytes())
        program["u_projection"].write(projection.astype(np.float32).tobytes())
        program["u_pick_mesh"].value = int(number)
        self._use_vertex_textures(program)
        for submesh in self.mesh.submeshes:
            if "u_first_triangle" in program:
                program["u_first_triangle"].value = submesh.first_index // 3
            vao.render(moderngl.TRIANGLES, vertices=submesh.index_count, first=submesh.first_index)

    def skin_for_shadow(self):
        """The posed mesh's world positions for the shadow pass (viewer.render.shadows): its pose
        uploaded as ``draw`` does, morphed and skinned once by the SHADOW_PASS program into a
        buffer (transform feedback), which every shadow map then draws (with ``index_buffer``)."""
        import moderngl

        dual = self.dual_quaternions
        if dual not in self._shadows:
            program = self.renderer.program(*self._program_key, shadow=True, dual_quaternions=dual)
            content = [(buffer, layout, name) for name, (buffer, layout) in self.buffers.items() if name in program]
            self._shadows[dual] = (program, self.renderer.ctx.vertex_array(program, content))  # each vertex once
        program, vao = self._shadows[dual]
        if self.shadow_positions is None:
            self.shadow_positions = self.renderer.ctx.buffer(reserve=max(len(self.mesh.positions), 1) * 12)
        self.update(program)
        program["u_world"].write(self.mesh.world_matrix.astype(np.float32).tobytes())
        self._use_vertex_textures(program)
        vao.transform(self.shadow_positions, moderngl.POINTS)
        return self.shadow_positions

    def release(self) -> None:
        if self.renderer._shadow_pass is not None:
            self.renderer._shadow_pass.forget(self)  # its capture draws this mesh's buffers
        for buffer, _ in self.buffers.values():
            buffer.release()
        for resource in (self.index_buffer, *(vao for _, vao in self._picks.values()), self.part_buffer,
                         *(vao for _, vao in self._shadows.values()), self.shadow_positions,
                         self.bone_texture, self.morph_texture,
                         *(vao for _, vao in self._builds.values()), *self.textures.values()):
            if resource is not None:
                resource.release()


class GpuCrowd:
    """GPU buffers of a Crowd: the mesh once, per-instance world matrices (the mesh's world
    matrix, then the instance matrix: Crowd.world_matrices) and copy numbers, one bone texture.

    Instances are drawn in copy order, except when a submesh is alpha-blended: then each frame
    draws them back to front from the camera (the world matrices and copy numbers uploaded in
    that order; a copy's bones stay in its rows), so a blended copy is blended over the copies
    behind it, as separate meshes are."""

    def __init__(self, renderer: Renderer, crowd):
        self.renderer, self.crowd, self.mesh = renderer, crowd, crowd.mesh
        ctx, mesh = renderer.ctx, crowd.mesh
        self.instances = len(crowd)
        self.bones_per_instance = max(crowd.bones_per_instance, 1)
        total = self.instances * self.bones_per_instance
        self.bones_per_row = max(1, min(total, MAX_TEXTURE_BONES_PER_ROW))
        rows = max(1, -(-total // self.bones_per_row))
        self.influences = mesh.influences
        self._defines = skinning_defines(SkinningMode.BONE_TEXTURE, self.bones_per_instance, self.influences,
                                         self.bones_per_row)
        self._defines.update(INSTANCED=1, BONES_PER_INSTANCE=self.bones_per_instance)
        self._builds: dict = {}  # (shading defines, dual quaternions): (program, vertex array)
        self.bone_texture = ctx.texture((4 * self.bones_per_row, rows), 4, dtype="f4")
        self.bone_texture.filter = (ctx.NEAREST, ctx.NEAREST)
        self._texture_data = np.zeros((rows * self.bones_per_row, 4, 4), np.float32)
        self._world_data = np.zeros((self.instances, 4, 4), np.float32)
        self.buffers = vertex_buffers(ctx, mesh, skinned=True)
        self.world_buffer = ctx.buffer(reserve=max(64, 64 * self.instances), dynamic=True)
        # Which copy each instance draws: 0..N-1, rewritten only while copies are drawn sorted.
        self.copy_buffer = ctx.buffer(np.arange(max(self.instances, 1), dtype=np.int32).tobytes(), dynamic=True)
        self._sorted = False  # whether copy_buffer holds a sorted order (not 0..N-1)
        self.index_buffer = ctx.buffer(mesh.indices.astype(np.uint32).tobytes())
        self.textures: dict = {}
        self.materials = submesh_materials(ctx, mesh, self.textures)
        # Corners of the first copy's box in mesh space, as posed now: placed by each world
        # matrix, they give the ground's extent without skinning every copy each frame.
        matrices = crowd.group.get_transform_matrices()[: crowd.bones_per_instance]
        low, high = bounds(skin(mesh.positions, mesh.normals, mesh.joints, mesh.weights, matrices,
                                mode=mesh.skinning)[0])
        self._corners = np.array([[x, y, z] for x in (low[0], high[0]) for y in (low[1], high[1])
                                  for z in (low[2], high[2])])
        self._center = (low + high) / 2.0  # each copy's sort point, placed by its world matrix
        self.blended = any(material.blend for material in self.materials)

    def ground_bounds(self):
        """World-space (low, high) around every copy (from the first copy's box): the grid's extent."""
        worlds = self.crowd.world_matrices
        points = (self._corners @ worlds[:, :3, :3] + worlds[:, None, 3, :3]).reshape(-1, 3)
        return points.min(axis=0), points.max(axis=0)

    def back_to_front(self, view) -> np.ndarray:
        """The copies' numbers, farthest from the camera first: by the view-space z of each
        copy's centre (the first copy's posed box centre placed by its world matrix), as the
        single meshes' blended parts are sorted; a stable sort, so ties keep copy order."""
        worlds = self.crowd.world_matrices
        centers = self._center @ worlds[:, :3, :3] + worlds[:, 3, :3]
        view = np.asarray(view, np.float64)
        depths = centers @ view[:3, 2] + view[3, 2]  # view z (row vectors): more negative is farther
        return np.argsort(depths, kind="stable").astype(np.int32)

    def update(self, order=None) -> None:
        """Upload this frame's bone matrices (one texture) and instance world matrices, the
        instances in ``order`` (copy numbers; None: copy order)."""
        matrices = self.crowd.group.get_transform_matrices()
        if self.mesh.skinning == "dq":
            matrices = bone_dual_quaternions(matrices)
        self._texture_data[: len(matrices)] = matrices
        self.bone_texture.write(self._texture_data)
        worlds = self.crowd.world_matrices
        self._world_data[...] = worlds if order is None else worlds[order]
        self.world_buffer.write(self._world_data)
        if order is not None and len(order):
            self.copy_buffer.write(np.ascontiguousarray(order, np.int32).tobytes())
        elif self._sorted and self.instances:  # back to copy order (once: opaque frames pay nothing)
            self.copy_buffer.write(np.arange(self.instances, dtype=np.int32).tobytes())
        self._sorted = order is not None

    def build(self, index: int, light: FrameLight):
        """(program, vertex array) for submesh ``index``: the instanced skinning program with
        its material's and the frame's #defines."""
        shading = (self.materials[index].defines + light.defines
                   + (("HAS_TANGENTS", int(self.mesh.tangents is not None)),))
        dual = self.mesh.skinning == "dq"
        entry = self._builds.get((shading, dual))
        if entry is None:
            ctx = self.renderer.ctx
            program = load_program(ctx, "skinning.vert", "skinning.frag",
                                   {**self._defines, **({"SKINNING_DQ": 1} if dual else {}), **dict(shading)})
            entry = self._builds[(shading, dual)] = (program, self._instanced(program))
        return entry

    def _instanced(self, program):
        """The vertex array of ``program``: the mesh's buffers it reads, each copy's world matrix
        and place in the bone texture per instance."""
        content = [(buffer, layout, name) for name, (buffer, layout) in self.buffers.items() if name in program]
        content.append((self.world_buffer, "16f/i", "in_instance_world"))
        if "in_instance_copy" in program:
            content.append((self.copy_buffer, "1i/i", "in_instance_copy"))
        return self.renderer.ctx.vertex_array(program, content, index_buffer=self.index_buffer, index_element_size=4)

    def draw_shadow(self, view, projection) -> None:
        """The shadow pass (viewer.render.shadows): every copy in one instanced call, with the
        skinning program built with SHADOW_PASS."""
        import moderngl

        self.update()
        dual = self.mesh.skinning == "dq"
        key = ("shadow", dual)
        if key not in self._builds:
            ctx = self.renderer.ctx
            program = load_program(ctx, "skinning.vert", "shadow.frag",
                                   {**self._defines, **({"SKINNING_DQ": 1} if dual else {}), "SHADOW_PASS": 1})
            self._builds[key] = (program, self._instanced(program))
        program, vao = self._builds[key]
        program["u_view"].write(view.astype(np.float32).tobytes())
        program["u_projection"].write(projection.astype(np.float32).tobytes())
        self.bone_texture.use(location=1)
        program["u_bone_texture"].value = 1
        vao.render(moderngl.TRIANGLES, instances=self.instances)

    def draw(self, view, projection, camera_position, options: RenderOptions, light: FrameLight) -> None:
        """Every copy in one instanced call per submesh (blended submeshes after the others;
        with a blended submesh, the copies back to front from the camera, see back_to_front)."""
        import moderngl

        self.update(self.back_to_front(view) if self.blended else None)
        ctx = self.renderer.ctx
        self.bone_texture.use(location=1)

        def one_submesh(index) -> None:
            submesh, material = self.mesh.submeshes[index], self.materials[index]
            program, vao = self.build(index, light)
            set_frame_uniforms(program, view, projection, camera_position, light)
            program["u_bone_texture"].value = 1
            program["u_flat_color"].value = False
            material.use(program)
            cull(ctx, material.double_sided, self.mesh.world_matrix)
            vao.render(moderngl.TRIANGLES, vertices=submesh.index_count, first=submesh.first_index,
                       instances=self.instances)

        blended = [index for index, material in enumerate(self.materials) if material.blend]
        for index, material in enumerate(self.materials):
            if not material.blend:
                one_submesh(index)
        if blended:  # depth tested, not written, as the single mesh's blended parts
            ctx.enable(moderngl.BLEND)
            ctx.blend_func = OVER
            with no_depth_writes(ctx):
                for index in blended:
                    one_submesh(index)
        ctx.disable(moderngl.BLEND | moderngl.CULL_FACE)

    def release(self) -> None:
        for buffer, _ in self.buffers.values():
            buffer.release()
        for resource in (self.world_buffer, self.copy_buffer, self.index_buffer, self.bone_texture,
                         *self.textures.values()):
            resource.release()
        for program, vao in self._builds.values():
            vao.release()
            program.release()


def vertex_buffers(ctx, mesh, skinned: bool, dynamic: bool = False) -> dict:
    """{attribute: (buffer, layout)} of a mesh; positions, normals and tangents dynamic for CPU
    skinning. TANGENT and TEXCOORD_1 only when the mesh has them (a missing attribute reads as
    its default, and the shader does not use it)."""
    f32 = lambda a: np.ascontiguousarray(a, dtype=np.float32).tobytes()  # noqa: E731
    buffers = {
        "in_position": (ctx.buffer(f32(mesh.positions), dynamic=dynamic), "3f"),
        "in_normal": (ctx.buffer(f32(mesh.normals), dynamic=dynamic), "3f"),
        "in_uv": (ctx.buffer(f32(mesh.texcoords)), "2f"),
        "in_color": (ctx.buffer(f32(mesh.colors)), "4f"),
        "in_paint": (ctx.buffer(reserve=16 * max(len(mesh.positions), 1), dynamic=True), "4f"),  # skin views
    }
    if mesh.tangents is not None:
        buffers["in_tangent"] = (ctx.buffer(f32(mesh.tangents), dynamic=dynamic), "4f")
    if any(slot.texcoord == 1 for submesh in mesh.submeshes for slot in submesh.pbr.textures().values()):
        buffers["in_uv1"] = (ctx.buffer(f32(mesh.texcoords1)), "2f")
    if skinned:
        joints = np.ascontiguousarray(mesh.joints, dtype=np.int32)
        for k in range(mesh.influences // 4):
            buffers[f"in_joints{k}"] = (ctx.buffer(joints[:, 4 * k:4 * k + 4].copy().tobytes()), "4i")
            buffers[f"in_weights{k}"] = (ctx.buffer(f32(mesh.weights[:, 4 * k:4 * k + 4])), "4f")
    return buffers


def submesh_centers(mesh) -> np.ndarray:
    """(S, 3): the middle of each submesh's box in mesh space (the blended ones' sort key)."""
    centers = np.zeros((len(mesh.submeshes), 3))
    for index, submesh in enumerate(mesh.submeshes):
        used = mesh.indices[submesh.first_index: submesh.first_index + submesh.index_count]
        if len(used):
            points = mesh.positions[used]
            centers[index] = (points.min(axis=0) + points.max(axis=0)) / 2.0
    return centers
