"""The interactive window: glfw (OpenGL 3.3 core) + a ViewerSession.

Input goes to ImGui first; what ImGui does not want moves the camera: left drag orbits, right
or middle drag pans, the wheel zooms, F frames the model. Files dropped on the window open
(a bad one shows its error in the panel). HiDPI: ImGui works in window coordinates and draws
at the framebuffer's scale.
"""

from __future__ import annotations

import time

from imgui_bundle import imgui  # before glfw: imgui_bundle picks the GLFW library (PLATFORM.md)

from ..errors import ViewerError

import glfw  # noqa: E402  (import order matters, see above)


def _key_map():
    keys = {glfw.KEY_TAB: imgui.Key.tab, glfw.KEY_LEFT: imgui.Key.left_arrow, glfw.KEY_RIGHT: imgui.Key.right_arrow,
            glfw.KEY_UP: imgui.Key.up_arrow, glfw.KEY_DOWN: imgui.Key.down_arrow, glfw.KEY_PAGE_UP: imgui.Key.page_up,
            glfw.KEY_PAGE_DOWN: imgui.Key.page_down, glfw.KEY_HOME: imgui.Key.home, glfw.KEY_END: imgui.Key.end,
            glfw.KEY_DELETE: imgui.Key.delete, glfw.KEY_BACKSPACE: imgui.Key.backspace,
            glfw.KEY_ENTER: imgui.Key.enter, glfw.KEY_KP_ENTER: imgui.Key.keypad_enter,
            glfw.KEY_ESCAPE: imgui.Key.escape, glfw.KEY_SPACE: imgui.Key.space, glfw.KEY_F: imgui.Key.f,
            glfw.KEY_LEFT_CONTROL: imgui.Key.left_ctrl, glfw.KEY_RIGHT_CONTROL: imgui.Key.right_ctrl,
            glfw.KEY_LEFT_SHIFT: imgui.Key.left_shift, glfw.KEY_RIGHT_SHIFT: imgui.Key.right_shift,
            glfw.KEY_LEFT_ALT: imgui.Key.left_alt, glfw.KEY_RIGHT_ALT: imgui.Key.right_alt,
            glfw.KEY_LEFT_SUPER: imgui.Key.left_super, glfw.KEY_RIGHT_SUPER: imgui.Key.right_super}
    for offset in range(26):
        keys[glfw.KEY_A + offset] = getattr(imgui.Key, chr(ord("a") + offset))
    for offset in range(10):
        keys[glfw.KEY_0 + offset] = getattr(imgui.Key, f"_{offset}")
    return keys


class WindowUnavailable(ViewerError):
    """No window can be opened here (no usable display, or no OpenGL 3.3 on it)."""


class ViewerWindow:
    def __init__(self, scene, model_name: str, size=(1280, 720), title="boneviewer", play: bool = True,
                 script=None, watch: bool = False, pose_path=None, debug: bool = False, camera=None,
                 look: dict | None = None, frame: dict | None = None, companions=()):
        """``play``: an animated model starts playing its first clip (else paused, as posed).
        ``script``: a .py path or an object with setup/update (see viewer.editing.script_app.App), set up
        once the window is open; ``watch``: reload it, and ``pose_path``, when saved. ``camera``: a
        viewer.camera.CameraDescription of where the view starts (what it leaves out is framed).
        ``look``: the look it starts with (RenderOptions.look()'s names, checked); ``frame``: what the
        frame shows besides the model (viewer.look.apply_frame's names: skeleton, grid, background,
        show_environment), where the panel's Display toggles start. ``companions``: models shown
        beside it (ViewerSession's)."""
        import moderngl

        from .session import ViewerSession

        # GLFW's errors would print as raw Python warnings: keep them for our own messages.
        self.glfw_errors: list[str] = []
        glfw.set_error_callback(self._on_glfw_error)
        if not glfw.init():
            raise WindowUnavailable(f"cannot open a window: {self._last_glfw_error('glfw failed to initialise')}")
        glfw.window_hint(glfw.CONTEXT_VERSION_MAJOR, 3)
        glfw.window_hint(glfw.CONTEXT_VERSION_MINOR, 3)
        glfw.window_hint(glfw.OPENGL_PROFILE, glfw.OPENGL_CORE_PROFILE)
        glfw.window_hint(glfw.OPENGL_FORWARD_COMPAT, True)
        glfw.window_hint(glfw.SCALE_TO_MONITOR, True)
        self.window = glfw.create_window(size[0], size[1], f"{title} - {model_name}", None, None)
        if not self.window:
            glfw.terminate()
            raise WindowUnavailable("cannot open an OpenGL 3.3 core window on this display: "
                                    f"{self._last_glfw_error('no reason given')}")
        glfw.make_context_current(self.window)
        glfw.swap_interval(1)
        self.ctx = moderngl.create_context(require=330)
        self.session = ViewerSession(self.ctx, scene, model_name, play=play, camera=camera, look=look, recovery=True,
                                     companions=companions)
        if frame:
            from ..look import apply_frame

            apply_frame(self.session.editor.display, **frame)
        self.session.clipboard = lambda text: glfw.set_clipboard_string(self.window, text)
        if script is not None or (watch and pose_path is not None):
            self.session.attach_script(script, watch=watch,
                                       pose_path=pose_path, debug=debug, size=glfw.get_window_size(self.window))
        self.remote = None  # a viewer.remote RemoteServer (attach_remote)
        self.keys = _key_map()
        self._mouse = None
        self._buttons = set()
        glfw.set_cursor_pos_callback(self.window, self._on_cursor)
        glfw.set_mouse_button_callback(self.window, self._on_button)
        glfw.set_scroll_callback(self.window, self._on_scroll)
        glfw.set_key_callback(self.window, self._on_key)
        glfw.set_char_callback(self.window, self._on_char)
        glfw.set_drop_callback(self.window, self._on_drop)
        glfw.set_window_focus_callback(self.window, lambda _w, focused: imgui.get_io().add_focus_event(bool(focused)))

    def attach_remote(self, server) -> None:
        """Poll a started viewer.remote RemoteServer once a frame: its messages act on the
        session on this thread (``boneviewer view --listen``); it closes with the window."""
        from .remote import SessionTarget

        self.remote, self.remote_target = server, SessionTarget(self.session)

    def _on_glfw_error(self, code, description) -> None:
        text = description.decode(errors="replace") if isinstance(description, bytes) else str(description)
        self.glfw_errors.append(f"{text} (GLFW error {code:#x})")

    def _last_glfw_error(self, default: str) -> str:
        return self.glfw_errors[-1] if self.glfw_errors else default

    # --- input ---------------------------------------------------------------------------------
    def _on_cursor(self, _window, x, y):
        imgui.get_io().add_mouse_pos_event(x, y)
        # A left drag (orbit, gizmo, IK) is the session's Gestures' (it reads ImGui's io);
        # right or middle drags pan here, unless a gesture holds the mouse.
        if (self._mouse is not None and self._buttons - {0} and not self.session.ui_wants_mouse
                and not self.session.gestures.busy):
            _, height = glfw.get_window_size(self.window)
            self.session.mouse_drag(1, x - self._mouse[0], y - self._mouse[1], height)
        self._mouse = (x, y)

    def _on_button(self, _window, button, action, _mods):
        if button > 2:
            return
        imgui.get_io().add_mouse_button_event(button, action == glfw.PRESS)
        if action == glfw.PRESS and not self.session.ui_wants_mouse:
            self._buttons.add(button)
        elif action == glfw.RELEASE:
            self._buttons.discard(button)

    def _on_scroll(self, _window, dx, dy):
        imgui.get_io().add_mouse_wheel_event(dx, dy)
        if not self.session.ui_wants_mouse:
            self.session.scroll(dy)

    def _on_key(self, _window, key, _scancode, action, mods):
        io = imgui.get_io()
        io.add_key_event(imgui.Key.mod_ctrl, bool(mods & glfw.MOD_CONTROL))
        io.add_key_event(imgui.Key.mod_shift, bool(mods & glfw.MOD_SHIFT))
        io.add_key_event(imgui.Key.mod_alt, bool(mods & glfw.MOD_ALT))
        io.add_key_event(imgui.Key.mod_super, bool(mods & glfw.MOD_SUPER))
        if key in self.keys and action in (glfw.PRESS, glfw.RELEASE):
            io.add_key_event(self.keys[key], action == glfw.PRESS)

    def _on_char(self, _window, char):
        imgui.get_io().add_input_character(char)

    def _on_drop(self, _window, paths):
        if paths:
            self.session.open_model(paths[0])

    # --- loop ------------------------------------------------------------------------------------
    def run(self, frames: int | None = None, screenshot: str | None = None) -> int:
        """Run until closed, or for ``frames`` frames; save the last frame to ``screenshot``."""
        count, last = 0, time.perf_counter()
        try:
            while not glfw.window_should_close(self.window):
                glfw.poll_events()
                if self.remote is not None:
                    self.remote.poll(self.remote_target)  # remote messages, applied on this thread
                now = time.perf_counter()
                dt, last = now - last, now
                width, height = glfw.get_framebuffer_size(self.window)
                if width == 0 or height == 0:  # minimised
                    time.sleep(0.05)
                    continue
                window_width, window_height = glfw.get_window_size(self.window)
                scale = (width / max(window_width, 1), height / max(window_height, 1))
                self.ctx.screen.use()
                self.session.frame((width, height), dt, framebuffer_scale=scale)
                count += 1
                if self.session.close_requested or (frames is not None and count >= frames):
                    if screenshot:
                        self.session.save_screenshot(screenshot, (width, height))
                    break
                glfw.swap_buffers(self.window)
        finally:
            self.close()
        return 0

    def close(self) -> None:
        if self.remote is not None:
            self.remote.close()
            self.remote_target.release()
            self.remote = None
        if self.window is not None:
            self.session.release()
            glfw.destroy_window(self.window)
            glfw.terminate()
            self.window = None
