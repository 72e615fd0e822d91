"""The shadow pass (issue 45): a ground contact shadow and a cast shadow map from one light.

Both are drawn by the skinning shader family (skinning.vert built with SHADOW_PASS, the same
bone storage, dual quaternions and morph targets as the colour pass, and shadow.frag), so a
shadow follows every pose. Both are fitted each frame to the posed character's bounds
(``posed_bounds``: per-bone boxes carried by the bones, never smaller than the skinned mesh),
so no clip walks or jumps out of them.

- The **contact shadow** (model-viewer's): the character seen from below by an orthographic
  camera on the ground, each pixel as dark as the lowest surface above it is near the ground
  (fading out over ``CONTACT_FADE`` of the character's height), blurred by the softness.
- The **cast shadow**: a depth map from the light (orthographic along a directional light),
  read by the colour pass (skinning.frag with SHADOWS: the character shadows itself) and by the
  ground, with percentage-closer filtering (soft edges, wider with the softness) and a slope
  and normal-offset bias (no acne on the lit body; the ground is no caster, so it has none and
  a planted foot touches its shadow).

The ground is a shadow catcher: a quad at the grid's height that only darkens (black with the
shadow's alpha, blended over), so the lit ground looks exactly as it does without shadows.
"""

from __future__ import annotations

import numpy as np

from .materials import cull, no_depth_writes
from .shaders import load_program

SHADOW_MAP_SIZE = 512
CONTACT_MAP_SIZE = 64
# The ground's composed shadow (both maps read once per texel, not per screen pixel). Its texels
# span the shadow's whole extent (several character sizes): at 64 the cast shadow's edge was
# blurred by 2-4% of the character's size whatever the softness, farther from Babylon.js's PCF
# edge than the softness asks (tests/test_shadows_babylon.py); 128 keeps it within the blur.
# (128 spans four of llvmpipe's 64-pixel tiles, so both its threads compose it.)
GROUND_MAP_SIZE = 128
SHADOW_UNIT = 10     # skinning.frag's u_shadow_map (units 0..6 materials, 7.. the environment's)
CONTACT_UNIT = 11
GROUND_UNIT = 12
CONTACT_FADE = 0.35  # the contact shadow fades out this fraction of the character's height above the ground
BLUR = 0.06          # the ground shadow's blur (sigma) at softness 1, as a fraction of the character's size


SUN_CONTRAST = 8.0   # an .hdr's brightest region is its sun when at least this many times its median


def sun_direction(pixels, rotation_degrees: float = 0.0):
    """The unit world direction towards an equirectangular environment's sun: its brightest
    region (blocks about 1/64 of the picture wide, then the brightest pixel there), in the
    orientation the renderer reads it (viewer.render.environment: u = 0.5 + atan2(d.x, -d.z) / 2pi,
    v = acos(d.y) / pi, turned by ``rotation_degrees``); None when nothing stands out (no sun) or
    it is below the horizon."""
    from .environment import rotation_matrix

    pixels = np.asarray(pixels, np.float64)
    height, width = pixels.shape[:2]
    luminance = pixels[..., :3] @ np.array([0.2126, 0.7152, 0.0722])
    block = max(1, width // 64)
    rows, columns = height // block, width // block
    if rows == 0 or columns == 0:
        return None
    blocks = luminance[: rows * block, : columns * block].reshape(rows, block, columns, block).mean(axis=(1, 3))
    if not blocks.max() >= SUN_CONTRAST * max(float(np.median(blocks)), 1e-6):
        return None
    row, column = np.unravel_index(np.argmax(blocks), blocks.shape)
    window = luminance[row * block:(row + 1) * block, column * block:(column + 1) * block]
    y, x = np.unravel_index(np.argmax(window), window.shape)
    u, v = (column * block + x + 0.5) / width, (row * block + y + 0.5) / height
    phi, theta = (u - 0.5) * 2.0 * np.pi, v * np.pi
    seen = np.array([np.sin(theta) * np.sin(phi), np.cos(theta), -np.sin(theta) * np.cos(phi)])
    direction = rotation_matrix(rotation_degrees).T @ seen  # environment direction = R @ world direction
    return direction / np.linalg.norm(direction) if direction[1] > 0.02 else None


def environment_sun(options, cache: dict):
    """The direction towards the sun of ``options.environment`` (an .hdr file: sun_direction,
    turned as the environment is), or None (a built-in environment, or no sun in the picture);
    found once per file and turn (``cache``: the renderer's)."""
    from ..hdr import read_hdr
    from ..look import BUILT_IN_ENVIRONMENTS

    if options.environment in BUILT_IN_ENVIRONMENTS:
        return None
    key = (options.environment, float(options.environment_rotation))
    if key not in cache:
        cache[key] = sun_direction(read_hdr(options.environment), options.environment_rotation)
    return cache[key]


def shadow_light(options, environment, scene_lights, simple: int, suns: dict):
    """Which light casts: ((unit direction towards it, its index in the frame's lights or -1 for
    the environment's), spot or None), or (None, None). The simple light's key with no
    environment; else the file's first directional light, else its first spot light (spot:
    (position, direction it shines along, outer cone angle)), else the .hdr's sun unless
    ``options.key_light`` was moved from its default, else the key light placed for the
    environment. ``simple``: how many simple lights come before ``scene_lights``."""
    from ..options import RenderOptions

    key = np.asarray(options.key_light, np.float64)
    if environment is None and np.linalg.norm(key) > 0:
        return (key / np.linalg.norm(key), 0), None
    for kind in ("directional", "spot"):
        for index, light in enumerate(scene_lights):
            if light.kind == kind:
                shines = np.asarray(light.world_direction(), np.float64)
                spot = None if kind == "directional" else (np.asarray(light.world_position(), np.float64), shines,
                                                           float(light.outer_cone_angle))
                return (-shines / np.linalg.norm(shines), simple + index), spot
    if environment is None:
        return None, None
    sun = environment_sun(options, suns) if tuple(options.key_light) == RenderOptions.key_light else None
    towards = key if sun is None else np.asarray(sun, np.float64)
    return ((towards / np.linalg.norm(towards), -1), None) if np.linalg.norm(towards) > 0 else (None, None)


def prepare_frame(renderer, scene, options, light, crowd=None):
    """Which light casts (shadow_light, from ``light.casters``) and this frame's shadow maps for
    ``scene`` (or a Crowd, ``crowd`` its GpuCrowd) on the renderer's ShadowPass (made on first
    use), its defines and maps added to ``light`` (a FrameLight); the ShadowFrame, or None. The
    ground is the grid's: the rest pose's lowest point, or the crowd's first copy's."""
    if renderer._shadow_pass is None:
        renderer._shadow_pass = ShadowPass(renderer)
    shadows = renderer._shadow_pass
    simple, scene_lights = light.casters
    light.shadow_direction, light.shadow_spot = shadow_light(options, light.environment, scene_lights, simple,
                                                             shadows.suns)
    if crowd is None:
        if not hasattr(scene, "meshes"):
            return None
        frame = shadows.prepare(scene, options, light, float(scene.rest_bounds[0][1]), options.contact_shadow)
    else:
        frame = shadows.prepare(scene, options, light, float(crowd.ground_bounds()[0][1]), options.contact_shadow,
                                crowd=(scene, crowd))
    light.shadow, light.shadow_pass = frame, shadows
    if frame is not None:
        light.defines = light.defines + frame.defines
    return frame


def light_basis(towards) -> np.ndarray:
    """(3, 3) rows: the light's right, up and back (``towards`` the light) axes, right-handed."""
    x, y, z = np.asarray(towards, np.float64) / np.linalg.norm(towards)
    # right = helper x back, up = back x right (written out: numpy's cross costs more than the rest)
    right = np.array([-y, x, 0.0]) if abs(y) > 0.99 else np.array([z, 0.0, -x])  # helper +z, else +y
    right /= np.sqrt(right @ right)
    up = np.array([y * right[2] - z * right[1], z * right[0] - x * right[2], x * right[1] - y * right[0]])
    return np.array([right, up, [x, y, z]])


def ortho(left, right, bottom, top, near, far) -> np.ndarray:
    """An orthographic projection, row-vector layout (p @ M), GL clip space."""
    matrix = np.eye(4)
    matrix[0, 0], matrix[1, 1], matrix[2, 2] = 2.0 / (right - left), 2.0 / (top - bottom), -2.0 / (far - near)
    matrix[3, 0] = -(right + left) / (right - left)
    matrix[3, 1] = -(top + bottom) / (top - bottom)
    matrix[3, 2] = -(far + near) / (far - near)
    return matrix


def perspective(fov_y: float, near: float, far: float) -> np.ndarray:
    """A square perspective projection (``fov_y`` radians), row-vector layout, GL clip space."""
    f = 1.0 / np.tan(fov_y / 2.0)
    matrix = np.zeros((4, 4))
    matrix[0, 0] = matrix[1, 1] = f
    matrix[2, 2] = (far + near) / (near - far)
    matrix[3, 2] = 2.0 * far * near / (near - far)
    matrix[2, 3] = -1.0
    return matrix


def look_matrix(basis, origin) -> np.ndarray:
    """World -> the frame of ``basis`` rows (x, y, z; the camera looks down -z) at ``origin``."""
    view = np.eye(4)
    view[:3, :3] = np.asarray(basis).T
    view[3, :3] = -np.asarray(origin, np.float64) @ np.asarray(basis).T
    return view


class _MeshBoxes:
    """A mesh's vertices bounded per joint in mesh (bind) space: every vertex a joint moves lies
    in that joint's box, so the posed mesh (a weighted mean of the vertex moved by each of its
    joints) lies in the box around every joint's box moved by its final matrix."""

    def __init__(self, mesh):
        positions = np.asarray(mesh.positions, np.float64)
        self.morph_reach = 0.0
        morph = mesh.morph_targets
        if morph is not None and len(morph):
            self.morph_reach = np.linalg.norm(np.asarray(morph.positions, np.float64), axis=2).max(axis=1)
        if mesh.skeleton is None or len(positions) == 0:
            self.joints, self.corners = None, _corners(*_box(positions))[None]
            return
        joints, weights = np.asarray(mesh.joints), np.asarray(mesh.weights)
        used, corners = [], []
        for joint in np.unique(joints[weights > 0]):
            points = positions[((joints == joint) & (weights > 0)).any(axis=1)]
            used.append(int(joint))
            corners.append(_corners(*_box(points)))
        self.joints, self.corners = np.array(used, int), np.array(corners)
        self.homogeneous = np.concatenate([self.corners, np.ones(self.corners.shape[:2] + (1,))], 2)  # (J, 8, 4)

    def world_box(self, mesh, matrices=None, world=None):
        """(low, high) of the mesh posed by its skeleton's final ``matrices`` (default: its own)
        and placed by ``world`` (default: its world matrix): a crowd's copy passes its own."""
        corners = self.corners
        if self.joints is not None:
            matrices = (mesh.skeleton.get_transform_matrices() if matrices is None else matrices)[self.joints]
            corners = (self.homogeneous @ matrices)[..., :3]
        world = np.asarray(mesh.world_matrix if world is None else world, np.float64)
        points = corners.reshape(-1, 3) @ world[:3, :3] + world[3, :3]
        low, high = points.min(axis=0), points.max(axis=0)
        if np.ndim(self.morph_reach):  # morph deltas move a vertex at most this far (then skinned; scaled by the world)
            reach = float(np.abs(mesh.morph_weights) @ self.morph_reach) * _largest_scale(mesh)
            low, high = low - reach, high + reach
        return low, high


def _box(points):
    if len(points) == 0:
        return np.zeros(3), np.zeros(3)
    return points.min(axis=0), points.max(axis=0)


def _corners(low, high) -> np.ndarray:
    return np.array([[x, y, z] for x in (low[0], high[0]) for y in (low[1], high[1]) for z in (low[2], high[2])])


def _largest_scale(mesh) -> float:
    scale = np.linalg.norm(np.asarray(mesh.world_matrix, np.float64)[:3, :3], axis=1).max()
    if mesh.skeleton is not None:
        matrices = mesh.skeleton.get_transform_matrices()
        scale *= max(1.0, float(np.linalg.norm(matrices[:, :3, :3], axis=2).max()))
    return float(scale)


_TO_TEXTURE = np.array([[0.5, 0, 0, 0], [0, 0.5, 0, 0], [0, 0, 0.5, 0], [0.5, 0.5, 0.5, 1.0]])  # clip -> [0, 1]


class ShadowFrame:
    """One frame's shadows, as the colour pass and the ground read them."""

    def __init__(self, options, ground_y, cast_matrix, cast_light, contact_matrix, texel_world, extent, size):
        self.intensity = float(options.shadow_intensity)
        self.softness = float(options.shadow_softness)
        self.ground_y = ground_y
        self.cast_matrix = cast_matrix        # world -> the shadow map's [0, 1]^3 (row-vector), or None
        self.cast_light = cast_light          # the light index whose light it blocks (-1: the environment's)
        self.contact_matrix = contact_matrix  # world -> the contact map's [0, 1]^2, or None
        self.texel_world = texel_world        # a shadow map texel's size in world units
        self.extent = extent                  # (x0, z0, x1, z1): the ground quad
        self.size = size                      # the posed character's largest extent
        self.quad = extent                    # the part of the extent drawn on screen (where it darkens; None: nowhere)

    @property
    def defines(self) -> tuple:
        if self.cast_matrix is None:
            return ()
        return (("SHADOWS", 1), ("SHADOW_LIGHT", self.cast_light))


def _state(scene, options, light, ground_y, contact, override) -> list:
    """What this frame's maps depend on: when it equals the last frame's, they are reused (a
    paused pose seen from an orbiting camera draws no shadow pass)."""
    state = [ground_y, contact, override, float(options.shadow_softness), float(options.shadow_intensity),
             None if light.shadow_direction is None else (tuple(light.shadow_direction[0]), light.shadow_direction[1]),
             None if light.shadow_spot is None else (tuple(light.shadow_spot[0]), tuple(light.shadow_spot[1]),
                                                     float(light.shadow_spot[2]))]
    for mesh in getattr(scene, "meshes", ()):  # a Crowd's copies are added by the caller
        skeleton = mesh.skeleton
        state.append((id(mesh), mesh.skinning, np.array(mesh.world_matrix, copy=True),
                      None if skeleton is None else np.array(skeleton.get_transform_matrices(), copy=True),
                      None if mesh.morph_targets is None else np.array(mesh.morph_weights, copy=True)))
    return state


def _same(a, b) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return a.shape == b.shape and np.array_equal(a, b)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


class _Captured:
    """A mesh's world positions captured this frame, drawn into a shadow map as a GpuCrowd is:
    a single-sided material's back faces (seen from the light) culled, as Babylon.js's shadow
    generator does. A closed surface's nearest face towards the light is a front face, so the
    map is the same; llvmpipe rasterises half the triangles (its cost is per triangle here)."""

    def __init__(self, program, vao, runs, world_matrix):
        self.program, self.vao, self.runs, self.world_matrix = program, vao, runs, world_matrix

    def draw_shadow(self, view, projection) -> None:
        import moderngl

        self.program["u_view"].write(view.astype(np.float32).tobytes())
        self.program["u_projection"].write(projection.astype(np.float32).tobytes())
        ctx = self.program.ctx
        for double_sided, first, count in self.runs:
            cull(ctx, double_sided, self.world_matrix)
            self.vao.render(moderngl.TRIANGLES, vertices=count, first=first)
        ctx.disable(moderngl.CULL_FACE)
        ctx.front_face = "ccw"


def _runs(gpu) -> list:
    """(double-sided, first index, index count) of a GpuMesh's submeshes, neighbours with the
    same sidedness joined (one draw for most meshes)."""
    runs = []
    for submesh, material in zip(gpu.mesh.submeshes, gpu.materials):
        double_sided = bool(material.double_sided)
        if runs and runs[-1][0] == double_sided and runs[-1][1] + runs[-1][2] == submesh.first_index:
            runs[-1][2] += submesh.index_count
        else:
            runs.append([double_sided, submesh.first_index, submesh.index_count])
    return [tuple(run) for run in runs]


class ShadowPass:
    """One per renderer: the maps, their framebuffers and the ground's program."""

    def __init__(self, renderer):
        self.renderer = renderer
        ctx = renderer.ctx
        self.depth = ctx.depth_texture((SHADOW_MAP_SIZE,) * 2)
        self.depth.compare_func = "<="  # sampler2DShadow: lit where the point is no deeper than the map
        self.depth.filter = (ctx.LINEAR, ctx.LINEAR)  # a 2x2 compare per tap
        self.depth.repeat_x = self.depth.repeat_y = False
        self.cast_target = ctx.framebuffer(depth_attachment=self.depth)
        self.contact = ctx.texture((CONTACT_MAP_SIZE,) * 2, 1, dtype="f1")
        self.contact_depth = ctx.depth_renderbuffer((CONTACT_MAP_SIZE,) * 2)
        self.contact_target = ctx.framebuffer(color_attachments=[self.contact], depth_attachment=self.contact_depth)
        self.ground = load_program(ctx, "shadow_ground.vert", "shadow_ground.frag")
        self.ground_vao = ctx.vertex_array(self.ground, [])
        self.ground_map = ctx.texture((GROUND_MAP_SIZE,) * 2, 1, dtype="f1")
        self.ground_target = ctx.framebuffer(color_attachments=[self.ground_map])
        self.ground_target.clear(0.0, 0.0, 0.0, 0.0)
        for texture in (self.contact, self.ground_map):
            texture.filter = (ctx.LINEAR, ctx.LINEAR)
            texture.repeat_x = texture.repeat_y = False
        self.compose = load_program(ctx, "background.vert", "shadow_compose.frag")
        self.compose_vao = ctx.vertex_array(self.compose, [])
        self.world = load_program(ctx, "shadow_world.vert", "shadow.frag")
        renderer_name = str(ctx.info.get("GL_RENDERER", "")).lower()
        self.software = any(name in renderer_name for name in ("llvmpipe", "softpipe", "swiftshader"))
        # id(GpuMesh): (it, its captured positions, their vertex array, _runs); an entry goes with
        # its GpuMesh (forget, called by GpuMesh.release), so reloading models does not pile them up
        self._captures: dict = {}
        self._boxes: dict = {}
        self.suns: dict = {}  # (environment file, rotation): the direction towards its sun, or None
        self._last = None  # (the state the maps were drawn for, its ShadowFrame)

    def release(self) -> None:
        for resource in (self.cast_target, self.depth, self.contact_target, self.contact, self.contact_depth,
                         self.ground_vao, self.ground, self.ground_target, self.ground_map, self.compose_vao,
                         self.compose, *(entry[2] for entry in self._captures.values()), self.world):
            resource.release()

    def forget(self, gpu) -> None:
        """Drop what this pass keeps for a GpuMesh being released: its capture's vertex array and
        its mesh's bone boxes (the Mesh itself is no longer held)."""
        entry = self._captures.get(id(gpu))
        if entry is not None and entry[0] is gpu:
            del self._captures[id(gpu)]
            entry[2].release()
        boxes = self._boxes.get(id(gpu.mesh))
        if boxes is not None and boxes[0] is gpu.mesh:
            del self._boxes[id(gpu.mesh)]
        self._last = None  # its state names the forgotten meshes

    def _captured(self, gpu) -> "_Captured":
        """A GpuMesh skinned once for this frame's maps (GpuMesh.skin_for_shadow): the maps draw
        its captured world positions, not the skinning shader again (llvmpipe skins on one core)."""
        positions = gpu.skin_for_shadow()
        entry = self._captures.get(id(gpu))
        if entry is None or entry[0] is not gpu or entry[1] is not positions:
            if entry is not None:
                entry[2].release()
            vao = self.renderer.ctx.vertex_array(self.world, [(positions, "3f", "in_position")],
                                                 index_buffer=gpu.index_buffer, index_element_size=4)
            entry = self._captures[id(gpu)] = (gpu, positions, vao, _runs(gpu))
        return _Captured(self.world, entry[2], entry[3], gpu.mesh.world_matrix)

    # --- fitting ---------------------------------------------------------------------------------
    def _mesh_boxes(self, mesh) -> _MeshBoxes:
        boxes = self._boxes.get(id(mesh))
        if boxes is None or boxes[0] is not mesh:
            boxes = self._boxes[id(mesh)] = (mesh, _MeshBoxes(mesh))
        return boxes[1]

    def posed_bounds(self, scene):
        """World (low, high) around every mesh as posed now (bones' boxes, no skinning)."""
        boxes = [self._mesh_boxes(mesh).world_box(mesh) for mesh in scene.meshes]
        if not boxes:
            return None
        return np.min([low for low, _ in boxes], axis=0), np.max([high for _, high in boxes], axis=0)

    def crowd_bounds(self, crowd):
        """World (low, high) around every copy of a Crowd as posed now (each copy's bones' boxes)."""
        mesh, boxes = crowd.mesh, self._mesh_boxes(crowd.mesh)
        matrices, offsets = crowd.group.get_transform_matrices(), crowd.group.offsets
        found = [boxes.world_box(mesh, matrices[offsets[k]:offsets[k + 1]], world)
                 for k, world in enumerate(crowd.world_matrices)]
        if not found:
            return None
        return np.min([low for low, _ in found], axis=0), np.max([high for _, high in found], axis=0)

    # --- the pass --------------------------------------------------------------------------------
    def prepare(self, scene, options, light, ground_y: float, contact: bool = True, crowd=None) -> ShadowFrame | None:
        """Draw this frame's maps (the bound framebuffer and viewport are bound again after);
        None when there is nothing to shadow. ``crowd``: (Crowd, its GpuCrowd) drawn instead of
        ``scene``'s meshes."""
        import moderngl

        if crowd is None:
            state = _state(scene, options, light, ground_y, contact, self.renderer.skinning_override)
        else:
            state = _state(scene, options, light, ground_y, contact, None)
            state.append((id(crowd[0]), crowd[0].mesh.skinning, np.array(crowd[0].group.get_transform_matrices(), copy=True),
                          np.array(crowd[0].world_matrices, copy=True)))
        if self._last is not None and _same(self._last[0], state):
            return self._last[1]
        self._last = None
        bounds = self.posed_bounds(scene) if crowd is None else self.crowd_bounds(crowd[0])
        if bounds is None:
            return None
        low, high = bounds
        size = max(float(np.max(high - low)), 1e-4)
        ctx = self.renderer.ctx
        previous, viewport = ctx.fbo, ctx.viewport
        if previous is None or isinstance(previous.mglo, moderngl.InvalidObject):
            previous = ctx.detect_framebuffer()
        corners = _corners(low, high)
        extent_points = [corners[:, [0, 2]]]
        cast_matrix = contact_matrix = None
        texel_world = 0.0
        if crowd is None:
            meshes = [self._captured(self.renderer.gpu_mesh(mesh)) for mesh in scene.meshes]
        else:
            meshes = [crowd[1]]
        try:
            ctx.disable(moderngl.BLEND | moderngl.CULL_FACE)
            ctx.enable(moderngl.DEPTH_TEST)
            ctx.depth_func = "<"
            if light.shadow_direction is not None and light.shadow_spot is not None:
                # A spot light: a perspective map from where it is, along where it shines,
                # as wide as its cone (and the character's reach).
                position, shines, outer = light.shadow_spot
                basis = light_basis(-np.asarray(shines))
                local = (corners - position) @ basis.T
                depth = -local[:, 2]
                ground_points = corners
                below = corners[:, 1] < position[1] - 1e-6
                if below.all():
                    t = (position[1] - ground_y) / (position[1] - corners[:, 1])
                    ground_points = position + (corners - position) * t[:, None]
                    extent_points.append(ground_points[:, [0, 2]])
                reach = -((ground_points - position) @ basis.T)[:, 2]
                near = max(0.5 * float(depth.min()), 1e-3 * size) if depth.min() > 0 else 1e-2 * size
                far = max(float(reach.max()), float(depth.max())) * 1.05 + 0.02 * size
                spread = np.abs(local[:, :2]) / np.maximum(depth, near)[:, None]
                fov = min(2.0 * float(outer), 2.0 * np.arctan(float(spread.max()) * 1.05), np.radians(160.0))
                view = look_matrix(basis, position)
                projection = perspective(fov, near, far)
                texel_world = 2.0 * np.tan(fov / 2.0) * float(np.median(depth)) / SHADOW_MAP_SIZE
                self._draw_cast(meshes, view, projection)
                cast_matrix = view @ projection @ _TO_TEXTURE
            elif light.shadow_direction is not None:
                towards, cast_light = light.shadow_direction
                basis = light_basis(towards)
                # The map's box in the light's frame: the character, and in depth down to the ground
                # under it (where its shadow falls), so every receiver has a depth inside it.
                if towards[1] > 1e-3:
                    drop = (corners[:, 1] - ground_y) / towards[1]
                    ground_points = corners - drop[:, None] * towards
                    extent_points.append(ground_points[:, [0, 2]])
                else:
                    ground_points = corners
                local = corners @ basis.T
                reach = np.concatenate([local, ground_points @ basis.T])
                margin = 0.02 * size
                x0, y0 = local[:, :2].min(axis=0) - margin
                x1, y1 = local[:, :2].max(axis=0) + margin
                near, far = -reach[:, 2].max() - margin, -reach[:, 2].min() + margin
                view = look_matrix(basis, np.zeros(3))
                projection = ortho(x0, x1, y0, y1, near, far)
                texel_world = max(x1 - x0, y1 - y0) / SHADOW_MAP_SIZE
                self._draw_cast(meshes, view, projection)
                cast_matrix = view @ projection @ _TO_TEXTURE
            if contact:
                contact_matrix = self._contact(meshes, low, high, size, ground_y, options)
            points = np.concatenate(extent_points)
            pad = 0.02 * size + 3.0 * max(options.shadow_softness, 0.02) * BLUR * size  # the blur's reach
            extent = (*(points.min(axis=0) - pad), *(points.max(axis=0) + pad))
            frame = ShadowFrame(options, ground_y, cast_matrix,
                                light.shadow_direction[1] if cast_matrix is not None else 0, contact_matrix,
                                texel_world, extent, size)
            self._compose(frame)
            if self.software:
                frame.quad = self._darkened(frame)
            self._last = (state, frame)
        finally:
            previous.use()
            ctx.viewport = viewport
            ctx.polygon_offset = (0.0, 0.0)
        return frame

    def _compose(self, frame: ShadowFrame) -> None:
        """The ground's darkness over its quad, into ground_map (shadow_compose.frag)."""
        import moderngl

        ctx = self.renderer.ctx
        ctx.disable(moderngl.DEPTH_TEST | moderngl.BLEND)
        program = self.compose
        program["u_extent"].value = tuple(float(v) for v in frame.extent)
        program["u_ground_y"].value = float(frame.ground_y)
        program["u_has_contact"].value = frame.contact_matrix is not None
        program["u_has_cast"].value = frame.cast_matrix is not None
        program["u_contact_map"].value = CONTACT_UNIT
        program["u_shadow_map"].value = SHADOW_UNIT
        self.contact.use(location=CONTACT_UNIT)
        self.depth.use(location=SHADOW_UNIT)
        identity = np.eye(4)
        for name, matrix in (("u_contact_matrix", frame.contact_matrix), ("u_shadow_matrix", frame.cast_matrix)):
            program[name].write((identity if matrix is None else matrix).astype(np.float32).tobytes())
        # Soft edges: the taps spread by the softness (contact and cast shadow together).
        x0, z0, x1, z1 = frame.extent
        spread = max(frame.softness * BLUR * frame.size, 0.5 * max(x1 - x0, z1 - z0) / GROUND_MAP_SIZE)
        program["u_spread"].value = (spread, spread)
        self.ground_target.use()
        ctx.viewport = (0, 0, GROUND_MAP_SIZE, GROUND_MAP_SIZE)
        self.compose_vao.render(moderngl.TRIANGLES, vertices=3)
        ctx.enable(moderngl.DEPTH_TEST)

    def _darkened(self, frame: ShadowFrame):
        """On a software rasteriser, the part of the ground's square its map darkens (the ground
        drawn on screen covers only that: llvmpipe pays per pixel of it), or None where nothing
        is. Reading the small map back also waits for it here, where only the shadow passes are
        queued: else llvmpipe waits for it when the ground reads it, flushing the picture's
        scene half drawn (two scenes of the whole picture, the main thread idle between)."""
        size = GROUND_MAP_SIZE
        dark = np.frombuffer(self.ground_map.read(), np.uint8).reshape(size, size) > 0  # rows: z, columns: x
        rows, columns = np.flatnonzero(dark.any(axis=1)), np.flatnonzero(dark.any(axis=0))
        if len(rows) == 0:
            return None
        # A bilinear read mixes a texel with its neighbour: a texel more on each side.
        u0, u1 = max(int(columns[0]) - 1, 0) / size, min(int(columns[-1]) + 2, size) / size
        v0, v1 = max(int(rows[0]) - 1, 0) / size, min(int(rows[-1]) + 2, size) / size
        x0, z0, x1, z1 = frame.extent
        return (x0 + u0 * (x1 - x0), z0 + v0 * (z1 - z0), x0 + u1 * (x1 - x0), z0 + v1 * (z1 - z0))

    def _draw_cast(self, meshes, view, projection) -> None:
        ctx = self.renderer.ctx
        self.cast_target.use()
        self.cast_target.clear(depth=1.0)
        ctx.polygon_offset = (2.0, 4.0)  # slope-scaled bias against acne on the lit body
        for gpu in meshes:
            gpu.draw_shadow(view, projection)
        ctx.polygon_offset = (0.0, 0.0)

    def _contact(self, meshes, low, high, size, ground_y, options):
        """The contact map: drawn from below (the compose pass blurs it by the softness)."""
        pad = 3.0 * max(options.shadow_softness, 0.02) * BLUR * size + 0.02 * size  # the blur's reach
        x0, z0, x1, z1 = low[0] - pad, low[2] - pad, high[0] + pad, high[2] + pad
        half = max(x1 - x0, z1 - z0) / 2.0
        cx, cz = (x0 + x1) / 2.0, (z0 + z1) / 2.0
        # Looking up (+y) from the ground: x right, z up on the map (a right-handed frame).
        basis = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])
        view = look_matrix(basis, (cx, ground_y, cz))
        fade = max(CONTACT_FADE * (high[1] - ground_y), 1e-4)
        projection = ortho(-half, half, -half, half, 0.0, fade)
        target = self.contact_target
        target.use()
        target.clear(0.0, 0.0, 0.0, 0.0, depth=1.0)
        for gpu in meshes:
            gpu.draw_shadow(view, projection)
        to_map = np.zeros((4, 4))  # world (x, z) -> the map's (u, v) in 0..1, row-vector
        to_map[0, 0] = to_map[2, 1] = 1.0 / (2.0 * half)
        to_map[3, 0], to_map[3, 1], to_map[3, 3] = 0.5 - cx / (2.0 * half), 0.5 - cz / (2.0 * half), 1.0
        return to_map

    def use(self, program, frame: ShadowFrame) -> None:
        """The cast map into a colour-pass program built with SHADOWS."""
        if frame is None or frame.cast_matrix is None or "u_shadow_map" not in program:
            return
        self.depth.use(location=SHADOW_UNIT)
        program["u_shadow_map"].value = SHADOW_UNIT
        program["u_shadow_matrix"].write(frame.cast_matrix.astype(np.float32).tobytes())
        program["u_shadow_intensity"].value = frame.intensity
        if "u_shadow_offset" in program:  # about two texels: the lit body never shadows itself
            program["u_shadow_offset"].value = 1.5 * frame.texel_world

    def draw_ground(self, frame: ShadowFrame, view, projection) -> None:
        """The shadow catcher: the ground darkened by both maps (depth-tested, not written)."""
        import moderngl

        if frame is None or frame.quad is None:
            return
        ctx = self.renderer.ctx
        program = self.ground
        program["u_view"].write(view.astype(np.float32).tobytes())
        program["u_projection"].write(projection.astype(np.float32).tobytes())
        program["u_extent"].value = tuple(float(v) for v in frame.extent)
        program["u_quad"].value = tuple(float(v) for v in frame.quad)
        program["u_ground_y"].value = float(frame.ground_y)
        program["u_intensity"].value = frame.intensity
        program["u_ground_map"].value = GROUND_UNIT
        self.ground_map.use(location=GROUND_UNIT)
        ctx.enable(moderngl.BLEND | moderngl.DEPTH_TEST)
        ctx.disable(moderngl.CULL_FACE)
        ctx.blend_func = (0x0302, 0x0303, 0x0001, 0x0303)  # over
        with no_depth_writes(ctx):  # the grid drawn next stays seen
            self.ground_vao.render(moderngl.TRIANGLES, vertices=6)
        ctx.disable(moderngl.BLEND)
