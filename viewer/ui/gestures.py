"""Posing in the viewport: Blender-style operators driven by the mouse and keys.

The session calls ``Gestures.update(session)`` once a frame, after the panel: it reads ImGui's
io (mouse position and buttons, keys) and turns them into calls on viewer.editing.interaction (the
numpy maths) and on the model's public API through the Editor. Each gesture is an operator
with Blender's life cycle: start (one undo step opens), modal update (every frame while it
runs), confirm (the step is kept) or cancel (the touched bones get back their exact values
and the step is dropped).

Mouse: a left click (press and release without moving) picks the bone under the cursor (a
drawn bone segment near it, else the mesh under it: the renderer's ID pass); a left drag on
empty space orbits; a drag on a gizmo ring turns the selected bone about that ring's axis
(Ctrl snaps to 15 degrees), on an arrow moves it; a drag on an IK handle (or on the selected
bone's joint when it has two ancestors) moves the chain's end with IK.
Keys: R rotate, G move, X/Y/Z constrain (a second press: the bone's own axis), Enter or a
click confirms, Esc or a right click cancels; L toggles the gizmo's space (the panel's
Local/World); M mirrors the selected bone, Shift+M the whole pose.
"""

from __future__ import annotations

import math
import time

import numpy as np
from imgui_bundle import imgui

import viewer.editing.interaction as ix
from ..errors import ViewerError
from ..model.controllers import BoneIKController
from ..model.space import Space
from ..options import Marker, MarkerKind, Status
from ..render.geometry import skeleton_segments, world_per_pixel

IK_AIM_ROUNDS = 8               # IK solves a frame at most, each aiming again by the end's miss
CLICK_PIXELS = ix.CLICK_PIXELS  # a press that moves less than this before release is a click
HOVER_REST_SECONDS = 0.2        # the mesh is picked for hover once the mouse rests this long
AXIS_COLORS = {"X": (1.0, 0.3, 0.3, 1.0), "Y": (0.35, 1.0, 0.35, 1.0), "Z": (0.35, 0.55, 1.0, 1.0),
               "view": (0.9, 0.9, 0.9, 0.9)}
ACTIVE_COLOR = (1.0, 0.9, 0.2, 1.0)
HOVER_COLOR = (1.0, 1.0, 1.0, 1.0)
HANDLE_COLOR = (1.0, 0.45, 0.85, 1.0)
AXES = {"X": np.array([1.0, 0.0, 0.0]), "Y": np.array([0.0, 1.0, 0.0]), "Z": np.array([0.0, 0.0, 1.0])}


class View:
    """The frame's camera maths in window pixels (what the mouse sees)."""

    def __init__(self, camera, size):
        self.camera, self.size = camera, (float(size[0]), float(size[1]))
        self.view = camera.view_matrix()
        self.projection = camera.projection_matrix(self.size[0] / max(self.size[1], 1.0))
        self.matrix = self.view @ self.projection
        self.to_camera = camera.position - camera.target
        self.to_camera = self.to_camera / np.linalg.norm(self.to_camera)

    def project(self, point) -> np.ndarray:
        return ix.project(point, self.matrix, self.size)[0][0]

    def world_per_pixel(self, point) -> float:
        return float(world_per_pixel(point, self.view, self.projection, self.size[1])[0])

    def ray(self, pixel):
        return ix.pixel_ray(pixel, self.matrix, self.size)


class _Saved:
    """The exact local TRS of some bones' pose targets, to put back on cancel."""

    def __init__(self, bones):
        self.values = [(bone, bone.get_pose_target(), bone.get_pose_target().position.copy(),
                        bone.get_pose_target().rotation_quaternion.copy(), bone.get_pose_target().scaling.copy())
                       for bone in bones]

    def restore(self) -> None:
        for _bone, target, position, quaternion, scaling in self.values:
            target.position = position
            target.rotation_quaternion = quaternion
            target.scaling = scaling


class Operator:
    """A gesture: ``update(pixel, ctrl)`` every frame, then ``confirm()`` or ``cancel()``."""

    modal_keys = False   # R and G: X/Y/Z constrain, the mouse moves without a button held
    turns = False        # it turns its bones itself: the editor puts their rotations in its layer at the end

    def __init__(self, editor, bones):
        self.editor = editor
        self.saved = _Saved(bones)
        editor.begin_edit(bones if self.turns else ())
        # a spring joint dragged keeps the drag's rotation; the joints below swing after it
        editor.scene.springs.grab([bone.get_pose_target() for bone in bones])

    def confirm(self) -> None:
        self.editor.scene.springs.let_go()
        self.editor.end_edit()

    def cancel(self) -> None:
        self.editor.scene.springs.let_go()
        self.saved.restore()
        self.editor.drop_edit()
        self.editor.status = Status("cancelled")

    def constrain(self, name: str) -> None:
        pass


class RotateOperator(Operator):
    """Turn a bone about a world axis through its position by the angle swept on screen
    around it (the gizmo's rings, or R). ``axis`` None is the view axis (towards the camera)."""

    turns = True

    def __init__(self, editor, bone, view, start_pixel, axis=None, name="view", modal_keys=False):
        super().__init__(editor, [bone])
        self.bone, self.mesh = bone, editor.mesh_of(bone)
        self.view, self.modal_keys = view, modal_keys
        self.center = np.asarray(bone.get_absolute_position(self.mesh), float)
        self.center_pixel = view.project(self.center)
        self.start_pixel = np.asarray(start_pixel, float)
        self.axis, self.name = axis, name
        self.constraint = None   # R: (letter, local?) of the X/Y/Z key pressed
        self.swept = 0.0
        self.angle = 0.0

    def world_axis(self) -> np.ndarray:
        if self.axis is None:
            return self.view.to_camera
        return self.axis

    def constrain(self, letter: str) -> None:
        """X/Y/Z: the world axis; the same key again: the bone's own axis; a third time: free."""
        if self.constraint is not None and self.constraint[0] == letter:
            self.constraint = (letter, True) if not self.constraint[1] else None
        else:
            self.constraint = (letter, False)
        if self.constraint is None:
            self.axis, self.name = None, "view"
        else:
            letter, local = self.constraint
            self.saved.restore()  # the bone's own axes as they were when the gesture began
            self.axis = (np.asarray(self.bone.get_direction(AXES[letter], self.mesh), float) if local
                         else AXES[letter])
            self.name = f"{letter} (local)" if local else letter

    def update(self, pixel, ctrl: bool) -> None:
        self.swept = ix.unwrap(self.swept, ix.screen_angle(self.center_pixel, self.start_pixel, pixel))
        axis = self.world_axis()
        angle = self.swept * ix.facing_sign(axis, self.view.to_camera)
        if ctrl:
            angle = ix.snapped(angle)
        self.angle = angle
        self.saved.restore()
        scaling = np.array(self.bone.get_scale())
        self.bone.rotate(axis, angle, Space.WORLD, self.mesh)
        if not np.array_equal(self.bone.get_scale(), scaling):
            self.bone.set_scale(scaling)
        self.editor.status = Status(f"rotate {self.bone.name} about {self.name}: {math.degrees(angle):.1f} deg"
                                    + (" (snap 15)" if ctrl else ""))


class TranslateOperator(Operator):
    """Move a bone in the plane facing the camera (G), or along a world axis (an arrow, or
    G then X/Y/Z; again: the bone's own axis)."""

    def __init__(self, editor, bone, view, start_pixel, axis=None, name="view", modal_keys=False):
        super().__init__(editor, [bone])
        self.bone, self.mesh, self.view, self.modal_keys = bone, editor.mesh_of(bone), view, modal_keys
        self.start = np.asarray(bone.get_absolute_position(self.mesh), float)
        self.start_pixel = np.asarray(start_pixel, float)
        self.axis, self.name, self.constraint = axis, name, None
        self.scale = view.world_per_pixel(self.start)

    def constrain(self, letter: str) -> None:
        RotateOperator.constrain(self, letter)

    def update(self, pixel, ctrl: bool) -> None:
        if self.axis is None:
            hit = ix.ray_plane(*self.view.ray(pixel), self.start, self.view.to_camera)
            first = ix.ray_plane(*self.view.ray(self.start_pixel), self.start, self.view.to_camera)
            if hit is None or first is None:
                return
            point = self.start + (hit - first)
        else:
            distance = ix.axis_drag(self.start_pixel, pixel, self.start, self.axis, self.view.matrix, self.view.size,
                                    self.scale)
            point = self.start + self.axis * distance
        self.saved.restore()
        aim = point
        for _ in range(3):   # aim again by the miss (a root under a transformed node lands off)
            self.editor.set_position(self.bone, aim, Space.WORLD)
            miss = point - np.asarray(self.bone.get_absolute_position(self.mesh), float)
            if np.linalg.norm(miss) < 1e-9 * max(1.0, float(np.linalg.norm(point))):
                break
            aim = aim + miss
        moved = point - self.start
        self.editor.status = Status(f"move {self.bone.name} along {self.name}: "
                                    + " ".join(f"{v:+.3f}" for v in moved))


class IKDragOperator(Operator):
    """Drag a chain's end in the plane facing the camera; its parent and grandparent follow
    through BoneIKController, the pole taken from the chain's current bend."""

    turns = True

    def __init__(self, editor, end, view, start_pixel):
        lower = end.get_parent()
        upper = lower.get_parent()
        super().__init__(editor, [upper, lower])
        self.end, self.lower, self.upper = end, lower, upper
        self.mesh, self.view = editor.mesh_of(end), view
        self.start = np.asarray(end.get_absolute_position(self.mesh), float)
        self.start_pixel = np.asarray(start_pixel, float)
        shoulder = np.asarray(upper.get_absolute_position(self.mesh), float)
        elbow = np.asarray(lower.get_absolute_position(self.mesh), float)
        self.reach = float(np.linalg.norm(elbow - shoulder) + np.linalg.norm(self.start - elbow))
        fallback = shoulder - view.to_camera * np.linalg.norm(elbow - shoulder)
        self.controller = BoneIKController(self.mesh, lower)
        self.controller.pole_target_bone = None
        self.controller.pole_target_position = ix.pole_from_bend(shoulder, elbow, self.start, fallback)
        # Babylon bends some rigs away from the pole at angle 0: keep whichever reproduces the bend.
        best = None
        for angle in (0.0, math.pi):
            self.controller.pole_angle = angle
            self._solve(self.start)
            error = float(np.linalg.norm(np.asarray(lower.get_absolute_position(self.mesh)) - elbow))
            if best is None or error < best[0]:
                best = (error, angle)
            self.saved.restore()
        self.controller.pole_angle = best[1]
        self.target = self.start

    def _solve(self, target) -> None:
        """IK toward ``target``; then aim again by the end's miss (its joint need not lie on the
        lower bone's axis, where the controller puts the tip), so the end itself arrives."""
        aim = np.asarray(target, float)
        best = None
        for _ in range(IK_AIM_ROUNDS):
            self.controller.target_position = aim
            self.controller.update()
            miss = np.asarray(target) - np.asarray(self.end.get_absolute_position(self.mesh))
            error = float(np.linalg.norm(miss))
            if best is None or error < best[0]:
                best = (error, aim)
            if error < 1e-6 * self.reach:
                return
            aim = aim + miss
        if best[1] is not aim:   # the last round was not the best: go back to the best aim
            self.controller.target_position = best[1]
            self.controller.update()

    def update(self, pixel, ctrl: bool) -> None:
        hit = ix.ray_plane(*self.view.ray(pixel), self.start, self.view.to_camera)
        first = ix.ray_plane(*self.view.ray(self.start_pixel), self.start, self.view.to_camera)
        if hit is None or first is None:
            return
        self.target = self.start + (hit - first)
        self._solve(self.target)
        self.editor.status = Status(f"IK: {self.end.name} to " + " ".join(f"{v:.3f}" for v in self.target))


class Gestures:
    """The viewport's mouse and keys (see the module docstring)."""

    def __init__(self):
        self.hovered = None          # the Bone under the cursor
        self.operator = None         # the running Operator
        self._press = None           # (pixel, what) of a left press not yet a click or a drag
        self._orbiting = False
        self._mouse = None
        self._moved_at = 0.0
        self._mesh_hover_done = True
        self.handles = []            # this frame's gizmo handles
        self._ik_handles = (None, [])  # (the scene and skeleton layouts they were found in, bones)
        self.gpu_picking = True      # a mesh click is resolved by the renderer's ID pass (with a GL context)

    @property
    def busy(self) -> bool:
        """A gesture (or an orbit) holds the mouse."""
        return self.operator is not None or self._orbiting or self._press is not None

    # --- the frame ---------------------------------------------------------------------------------
    def update(self, session) -> list:
        """Handle this frame's input; return the markers to draw (gizmo, hover, handles)."""
        io = imgui.get_io()
        editor = session.editor
        view = View(session.camera, session.window_size)
        pixel = np.array([io.mouse_pos.x, io.mouse_pos.y], float)
        mouse_ok = bool(np.all(np.isfinite(pixel))) and abs(pixel[0]) < 1e7
        over_ui = io.want_capture_mouse and self.operator is None and self._press is None and not self._orbiting
        try:
            self._keys(session, view, pixel if mouse_ok else None)
            if mouse_ok:
                self._mouse_input(session, view, pixel, over_ui)
        except ViewerError as error:
            if self.operator is not None:
                self.operator.cancel()
                self.operator = None
            editor.status = Status.error(error)
        return self.markers(session, view)

    def _keys(self, session, view, pixel) -> None:
        from .panel import keyboard_is_free

        editor = session.editor
        if not keyboard_is_free():
            return
        io = imgui.get_io()
        pressed = lambda key: imgui.is_key_pressed(key, False)  # noqa: E731
        plain = not (io.key_ctrl or io.key_alt or io.key_super)
        if self.operator is not None:
            if pressed(imgui.Key.escape):
                self._cancel()
            elif pressed(imgui.Key.enter) or pressed(imgui.Key.keypad_enter):
                self._confirm()
            elif self.operator.modal_keys and plain:
                for letter, key in (("X", imgui.Key.x), ("Y", imgui.Key.y), ("Z", imgui.Key.z)):
                    if pressed(key):
                        self.operator.constrain(letter)
                        if pixel is not None:
                            self.operator.update(pixel, io.key_ctrl)
            return
        if not plain:
            return
        bone = editor.selected
        if pressed(imgui.Key.l):
            editor.set_space(Space.WORLD if editor.space is Space.LOCAL else Space.LOCAL)
            editor.status = Status(f"gizmo space: {'world' if editor.space is Space.WORLD else 'local'}")
        elif pressed(imgui.Key.m):
            if io.key_shift:
                editor.mirror_pose()
            elif bone is not None:
                editor.mirror_bone(bone)
        elif bone is not None and pixel is not None and pressed(imgui.Key.r):
            self.operator = RotateOperator(editor, bone, view, pixel, modal_keys=True)
        elif bone is not None and pixel is not None and pressed(imgui.Key.g):
            self.operator = TranslateOperator(editor, bone, view, pixel, modal_keys=True)

    def _confirm(self) -> None:
        self.operator.confirm()
        self.operator = None

    def _cancel(self) -> None:
        self.operator.cancel()
        self.operator = None

    def _mouse_input(self, session, view, pixel, over_ui) -> None:
        io = imgui.get_io()
        editor = session.editor
        if self._mouse is None or np.any(self._mouse != pixel):
            self._moved_at, self._mesh_hover_done = time.perf_counter(), False
        self._mouse = pixel
        operator = self.operator
        if operator is not None:
            if operator.modal_keys:   # R / G: the mouse moves it, a click confirms, right click cancels
                if imgui.is_mouse_clicked(1):
                    self._cancel()
                    return
                operator.update(pixel, io.key_ctrl)
                if imgui.is_mouse_clicked(0):
                    self._confirm()
                return
            if imgui.is_mouse_clicked(1):
                self._cancel()
                return
            if imgui.is_mouse_down(0):
                operator.update(pixel, io.key_ctrl)
            else:
                self._confirm()
            return
        if self._orbiting:
            if imgui.is_mouse_down(0):
                delta = io.mouse_delta
                session.mouse_drag(0, delta.x, delta.y, int(view.size[1]))
            else:
                self._orbiting = False
            return
        if self._press is not None:
            start, what = self._press
            if not imgui.is_mouse_down(0):
                self._press = None
                self._pick(session, view, pixel)
            elif np.linalg.norm(pixel - start) > CLICK_PIXELS:
                self._press = None
                if what is not None:  # an IK handle: drag it
                    self.operator = IKDragOperator(editor, what, view, start)
                    self.operator.update(pixel, io.key_ctrl)
                else:
                    self._orbiting = True
                    session.mouse_drag(0, pixel[0] - start[0], pixel[1] - start[1], int(view.size[1]))
            return
        if over_ui:
            self.hovered = None
            return
        self._hover(session, view, pixel)
        if imgui.is_mouse_clicked(0):
            end = self._ik_handle_at(session, view, pixel)   # a chain end's dot wins over a ring behind it
            handle = None if end is not None else ix.pick_handle(pixel, self.handles, view.matrix, view.size)
            bone = editor.selected
            if handle is not None and bone is not None:
                if handle.kind == "ring":
                    axis = None if handle.name == "view" else handle.axis
                    self.operator = RotateOperator(editor, bone, view, pixel, axis, self._axis_name(editor, handle))
                else:
                    self.operator = TranslateOperator(editor, bone, view, pixel, handle.axis,
                                                      self._axis_name(editor, handle))
                return
            self._press = (pixel.copy(), end)

    @staticmethod
    def _axis_name(editor, handle) -> str:
        if handle.name == "view":
            return "view"
        return handle.name + (" (local)" if editor.space is Space.LOCAL else "")

    # --- picking -----------------------------------------------------------------------------------
    def bone_at(self, session, view, pixel, mesh: bool = True):
        """The bone under ``pixel`` (viewer.editing.interaction.bone_at: a drawn segment near
        it, else the mesh under it), else None."""
        display = session.editor.display
        segments = skeleton_segments(session.scene) if display.show_skeleton else []
        return ix.bone_at(session.scene, display, pixel, view.matrix, view.size, segments,
                          self._gpu_pick(session, view), mesh)

    def mesh_bone_at(self, session, view, pixel):
        """The bone with the largest skin weight on the mesh triangle under ``pixel`` (or the
        bone a mesh without a skin hangs from), else None: the renderer's GPU ID pass when the
        session has a GL context (``gpu_picking``), else the numpy ray cast."""
        return ix.picked_mesh_bone(session.scene, pixel, view.matrix, view.size, self._gpu_pick(session, view))

    def _gpu_pick(self, session, view):
        if not self.gpu_picking or getattr(session, "ctx", None) is None:
            return None
        return lambda x, y: session.renderer().pick_bone(session.scene, session.camera, view.size, x, y)

    def _pick(self, session, view, pixel) -> None:
        bone = self.bone_at(session, view, pixel)
        if bone is not None:   # empty space keeps the selection
            session.editor.select(bone)
            session.editor.status = Status(f"selected {bone.name}")

    def _hover(self, session, view, pixel) -> None:
        still = time.perf_counter() - self._moved_at >= HOVER_REST_SECONDS
        if not self._mesh_hover_done and still:
            self.hovered = self.bone_at(session, view, pixel)
            self._mesh_hover_done = True
        elif not self._mesh_hover_done:
            self.hovered = self.bone_at(session, view, pixel, mesh=False)

    def ik_handles(self, editor) -> list:
        """The bones marked as IK handles (hands, feet), found once per model and skeleton layout:
        the name test and ancestor walk stay out of the per-frame path."""
        key = (id(editor.scene), tuple(s.batch.layout_version for s in editor.scene.skeletons))
        if self._ik_handles[0] != key:
            self._ik_handles = (key, [bone for bone in editor.bones() if ix.is_ik_handle(bone)])
        return self._ik_handles[1]

    def _ik_handle_at(self, session, view, pixel):
        """The chain end whose joint is under ``pixel``: an IK handle, or the selected bone
        when it has two ancestors."""
        candidates = list(self.ik_handles(session.editor))
        selected = session.editor.selected
        if selected is not None and ix.can_ik_drag(selected):
            candidates.append(selected)
        best = None
        for bone in candidates:
            point = view.project(bone.get_absolute_position(session.editor.mesh_of(bone)))
            distance = float(np.linalg.norm(point - pixel))
            if distance <= ix.PICK_PIXELS + 2 and (best is None or distance < best[0]):
                best = (distance, bone)
        return None if best is None else best[1]

    # --- what to draw ------------------------------------------------------------------------------
    def gizmo(self, session, view) -> list:
        """The selected bone's gizmo handles: rings, and arrows for a root bone (or any bone
        when the panel's "Move arrows on every bone" is on)."""
        editor = session.editor
        bone = editor.selected
        if bone is None or not editor.display.show_gizmo or not editor.selection_chosen:
            return []  # on open the first bone is the panel's, without a gizmo over the model
        mesh = editor.mesh_of(bone)
        center = np.asarray(bone.get_absolute_position(mesh), float)
        if editor.space is Space.WORLD:
            axes = np.eye(3)
        else:
            axes = np.array([bone.get_direction(axis, mesh) for axis in AXES.values()], float)
        arrows = bone.get_parent() is None or editor.display.move_arrows_all_bones
        scale = max(1.0, view.size[1] / 600.0)
        return ix.gizmo_handles(center, axes, view.to_camera, view.world_per_pixel(center), arrows=arrows, scale=scale)

    def markers(self, session, view) -> list:
        editor = session.editor
        markers = []
        if self.hovered is not None and self.hovered is not editor.selected and editor.display.show_skeleton:
            markers += self._bone_markers(session, self.hovered, HOVER_COLOR)
        if editor.display.show_skeleton:
            handles = self.ik_handles(editor)
            if handles:
                points = tuple(tuple(float(v) for v in bone.get_absolute_position(editor.mesh_of(bone)))
                               for bone in handles)
                markers.append(Marker(MarkerKind.POINT, points, HANDLE_COLOR))
        operator = self.operator
        if isinstance(operator, (RotateOperator, TranslateOperator)) and operator.modal_keys:
            self.handles = []
            if operator.axis is not None:   # R/G constrained: the axis through the bone
                center = operator.center if isinstance(operator, RotateOperator) else operator.start
                reach = view.world_per_pixel(center) * 4000.0
                color = AXIS_COLORS[operator.name[0]]
                markers.append(Marker(MarkerKind.LINE, (tuple(center - operator.axis * reach),
                                                        tuple(center + operator.axis * reach)), color))
            return markers
        self.handles = self.gizmo(session, view)
        active = getattr(operator, "name", None)
        for handle in self.handles:
            color = AXIS_COLORS[handle.name]
            if operator is not None and active is not None and active.split(" ")[0] == handle.name:
                color = ACTIVE_COLOR
            points = tuple(tuple(float(v) for v in p) for p in handle.points)
            markers.append(Marker(MarkerKind.PATH, points, color))
            if handle.kind == "arrow":
                markers.append(Marker(MarkerKind.POINT, (points[1],), color))
        return markers

    @staticmethod
    def _bone_markers(session, bone, color) -> list:
        markers = []
        for entry in skeleton_segments(session.scene):
            if entry.skeleton is not bone.get_skeleton():
                continue
            index = list(entry.skeleton.bones).index(bone)
            for i in np.flatnonzero(entry.owners == index):
                markers.append(Marker(MarkerKind.PATH, (tuple(entry.starts[i]), tuple(entry.ends[i])), color))
        return markers
