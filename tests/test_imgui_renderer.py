"""The moderngl ImGui renderer, headless on EGL: pixels, clicks, clipping, textures, GL state.

Set BONEVIEWER_IMGUI_PNG=/tmp/imgui_panel.png to keep the rendered panel for a look.
"""

import ctypes
import os

import moderngl
import numpy as np
import pytest
from imgui_bundle import imgui  # imported before any glfw, as everywhere (shared/PLATFORM.md)

from viewer.render.headless import OffscreenTarget, create_headless_context, release_egl_current
from viewer.ui.imgui_renderer import ImGuiRenderer

SIZE = (480, 320)
CLEAR = (25, 51, 76)  # the clear color in bytes
GL_BLEND, GL_CULL_FACE, GL_DEPTH_TEST, GL_SCISSOR_TEST = 0x0BE2, 0x0B44, 0x0B71, 0x0C11
GL_VIEWPORT, GL_SCISSOR_BOX, GL_DELETE_STATUS = 0x0BA2, 0x0C10, 0x8B80


class RawGL:
    """Asks the driver itself (not moderngl's bookkeeping) what is enabled and what exists."""

    def __init__(self):
        egl = ctypes.CDLL("libEGL.so.1")
        egl.eglGetProcAddress.restype = ctypes.c_void_p
        egl.eglGetProcAddress.argtypes = [ctypes.c_char_p]

        def function(name, restype, *argtypes):
            return ctypes.CFUNCTYPE(restype, *argtypes)(egl.eglGetProcAddress(name.encode()))

        self.is_enabled = function("glIsEnabled", ctypes.c_ubyte, ctypes.c_uint)
        self._get_integers = function("glGetIntegerv", None, ctypes.c_uint, ctypes.POINTER(ctypes.c_int))
        self.exists = {kind: function(f"glIs{kind}", ctypes.c_ubyte, ctypes.c_uint)
                       for kind in ("Texture", "Buffer", "Program", "VertexArray")}
        is_program = self.exists["Program"]
        get_program = function("glGetProgramiv", None, ctypes.c_uint, ctypes.c_uint, ctypes.POINTER(ctypes.c_int))

        def program_alive(name):  # a deleted program stays until it is no longer the current one
            status = ctypes.c_int(0)
            if is_program(name):
                get_program(name, GL_DELETE_STATUS, ctypes.byref(status))
            return is_program(name) and not status.value

        self.exists["Program"] = program_alive

    def integers(self, name, count=4):
        values = (ctypes.c_int * count)()
        self._get_integers(name, values)
        return tuple(values)


@pytest.fixture(scope="module")
def gl():
    ctx = create_headless_context()
    target = OffscreenTarget(ctx, SIZE)
    yield ctx, target
    target.release()
    ctx.release()
    release_egl_current()  # a later glfw/GLX window in this process would die otherwise


@pytest.fixture
def ui(gl):
    """A fresh ImGui context and renderer per test, released in the right order."""
    ctx, target = gl
    imgui_context = imgui.create_context()
    io = imgui.get_io()
    io.set_ini_filename(None)
    io.display_size = SIZE
    io.delta_time = 1.0 / 60.0
    renderer = ImGuiRenderer(ctx)
    yield UI(ctx, target, renderer)
    renderer.release()
    imgui.destroy_context(imgui_context)


class UI:
    def __init__(self, ctx, target, renderer):
        self.ctx, self.target, self.renderer = ctx, target, renderer

    def frame(self, build):
        """One ImGui frame: ``build()`` makes the widgets; returns (its result, RGBA pixels top row first)."""
        imgui.new_frame()
        result = build()
        imgui.render()
        self.target.framebuffer.use()
        self.ctx.clear(*(c / 255 for c in CLEAR), 1.0)
        self.renderer.render(imgui.get_draw_data(), SIZE)
        return result, self.target.read()


def panel(label="Click me", position=(40, 30), size=(300, 200)):
    """A window with text and a button; returns (window rect (x0, y0, x1, y1), button clicked)."""
    imgui.set_next_window_pos(position)
    imgui.set_next_window_size(size)
    imgui.begin("Bones")
    imgui.text("Hello, boneviewer! 0123456789")
    clicked = imgui.button(label)
    button = imgui.get_item_rect_min(), imgui.get_item_rect_max()
    (x, y), (w, h) = imgui.get_window_pos(), imgui.get_window_size()
    imgui.end()
    return (x, y, x + w, y + h), clicked, button


def outside(image, rect, margin=1):
    """Pixels outside ``rect`` grown by ``margin`` (anti-aliased borders may touch one more pixel)."""
    x0, y0, x1, y1 = rect
    mask = np.ones(image.shape[:2], bool)
    mask[max(int(y0) - margin, 0):int(y1) + margin, max(int(x0) - margin, 0):int(x1) + margin] = False
    return image[mask][:, :3]


def inside(image, rect):
    x0, y0, x1, y1 = (int(v) for v in rect)
    return image[y0:y1, x0:x1, :3]


def test_panel_draws_text_and_button_inside_its_window(ui):
    for _ in range(2):  # a new window may skip its first frame while it measures itself
        (rect, _, _), image = ui.frame(panel)
    assert rect == (40, 30, 340, 230)
    window = inside(image, rect)
    assert (window != CLEAR).any(axis=-1).mean() > 0.95        # the window background covers it
    assert (window.min(axis=-1) > 200).sum() > 100             # white-ish text pixels
    assert (outside(image, rect) == CLEAR).all()               # and nothing leaks out
    if os.environ.get("BONEVIEWER_IMGUI_PNG"):
        from PIL import Image
        Image.fromarray(image).save(os.environ["BONEVIEWER_IMGUI_PNG"])


def test_text_is_upright(ui):
    """The title bar (a top strip, darker window body below) must be at the top of the image."""
    for _ in range(2):
        (rect, _, _), image = ui.frame(panel)
    x0, y0, x1, y1 = (int(v) for v in rect)
    title_blue = image[y0 + 3, x0 + 40:x1 - 10, :3].astype(int)
    body = image[y1 - 20, x0 + 40:x1 - 10, :3].astype(int)
    assert (title_blue[:, 2] - title_blue[:, 0]).mean() > 40       # ImGui's dark theme: blue title bar
    assert abs(body[:, 2] - body[:, 0]).mean() < 10                # grey body


def test_click_takes_move_press_release(ui):
    io = imgui.get_io()
    (_, _, (low, high)), _ = ui.frame(panel)
    center = ((low.x + high.x) / 2, (low.y + high.y) / 2)
    clicks = []
    for event in (lambda: io.add_mouse_pos_event(*center),
                  lambda: io.add_mouse_button_event(0, True),
                  lambda: io.add_mouse_button_event(0, False),
                  lambda: None):
        event()
        (_, clicked, _), _ = ui.frame(panel)
        clicks.append(clicked)
    assert clicks == [False, False, True, False]


@pytest.mark.parametrize("scale", [1.0, 2.0])
def test_child_window_scissors_its_content(ui, scale):
    """A button far bigger than its child window shows only inside the child, at any HiDPI scale."""
    io = imgui.get_io()
    io.display_size = (SIZE[0] / scale, SIZE[1] / scale)
    io.display_framebuffer_scale = (scale, scale)

    def build():
        imgui.set_next_window_pos((20, 20))
        imgui.set_next_window_size((200, 120))
        imgui.begin("Clipper")
        imgui.begin_child("clip", (120, 40), window_flags=imgui.WindowFlags_.no_scrollbar)
        imgui.set_scroll_x(30.0)  # scrolled, so the button also sticks out left and above
        imgui.set_scroll_y(30.0)
        (x, y), (w, h) = imgui.get_window_pos(), imgui.get_window_size()
        imgui.push_style_color(imgui.Col_.button, (1.0, 0.0, 0.0, 1.0))
        imgui.button("huge", (400, 300))
        imgui.pop_style_color()
        imgui.end_child()
        imgui.end()
        return tuple(scale * v for v in (x, y, x + w, y + h))  # in framebuffer pixels

    for _ in range(2):
        child, image = ui.frame(build)
    pixels = image[..., :3].astype(int)
    is_red = (pixels[..., 0] > 200) & (pixels[..., 1] < 60) & (pixels[..., 2] < 60)
    rows, columns = np.nonzero(is_red)
    assert (columns.min(), rows.min(), columns.max() + 1, rows.max() + 1) == child
    assert is_red.sum() > 0.9 * (child[2] - child[0]) * (child[3] - child[1])


def test_hidpi_framebuffer_scale_maps_display_to_pixels(ui):
    io = imgui.get_io()
    io.display_size = (SIZE[0] / 2, SIZE[1] / 2)
    io.display_framebuffer_scale = (2.0, 2.0)
    for _ in range(2):
        (rect, _, _), image = ui.frame(lambda: panel(position=(20, 15), size=(150, 100)))
    pixels = tuple(2 * v for v in rect)  # the window in framebuffer pixels
    assert (inside(image, pixels) != CLEAR).any(axis=-1).mean() > 0.95
    assert (outside(image, pixels, margin=2) == CLEAR).all()


def test_font_texture_follows_the_192_protocol_and_is_released(ui):
    raw = RawGL()
    ui.frame(panel)
    assert ui.renderer.textures, "the font atlas was not created through platform_io.textures"
    for tex in imgui.get_platform_io().textures:
        assert tex.status == imgui.ImTextureStatus.ok and tex.tex_id in ui.renderer.textures

    first_atlas = {tex.unique_id for tex in imgui.get_platform_io().textures}

    def big_text(size):
        panel()
        imgui.begin("Big")
        imgui.push_font(None, size)  # new glyphs at a new size: ImGui updates or grows the atlas
        imgui.text("ABCDEFGHIJKLMNOPQRSTUVWXYZ abcdefghijklmnopqrstuvwxyz")
        imgui.pop_font()
        imgui.end()

    for size in (41, 41, 120, 120, 120, 120):  # 120 px outgrows 512x128: a new texture replaces it
        ui.frame(lambda: big_text(size))
    textures = list(imgui.get_platform_io().textures)
    assert not {tex.unique_id for tex in textures} & first_atlas  # grown: ImGui made a new texture...
    assert set(ui.renderer.textures) == {tex.tex_id for tex in textures}  # ... and ours for the old one went
    for tex in imgui.get_platform_io().textures:  # the GL copy matches ImGui's pixels after updates
        assert tex.status == imgui.ImTextureStatus.ok
        texture = ui.renderer.textures[tex.tex_id]
        assert texture.size == (tex.width, tex.height)
        assert np.array_equal(np.frombuffer(texture.read(), np.uint8), tex.get_pixels_array())

    names = [(kind, obj.glo) for kind, obj in [("Texture", t) for t in ui.renderer.textures.values()]
             + [("Buffer", ui.renderer._vertices), ("Buffer", ui.renderer._indices),
                ("Program", ui.renderer._program), ("VertexArray", ui.renderer._vao)]]
    assert all(raw.exists[kind](name) for kind, name in names)
    ui.renderer.release()
    assert [(k, n) for k, n in names if raw.exists[k](n)] == []
    assert not ui.renderer.textures
    for tex in imgui.get_platform_io().textures:
        assert tex.status == imgui.ImTextureStatus.destroyed and tex.tex_id == 0
    assert not imgui.get_io().backend_flags & imgui.BackendFlags_.renderer_has_textures
    ui.renderer = ImGuiRenderer(ui.ctx)  # the fixture releases a renderer; give it a live one
    ui.frame(panel)                       # ... which recreates the atlas texture on request
    assert ui.renderer.textures


@pytest.mark.parametrize("enable, scissor", [
    (moderngl.DEPTH_TEST | moderngl.CULL_FACE, None),
    (moderngl.BLEND, (5, 7, 50, 60)),
])
def test_gl_state_is_left_as_found(ui, enable, scissor):
    raw, ctx = RawGL(), ui.ctx

    def frame_with_state():
        imgui.new_frame()
        panel()
        imgui.render()
        ui.target.framebuffer.use()
        ctx.enable_only(enable)
        ctx.viewport = (0, 0, 200, 100)
        ctx.scissor = scissor
        before = {flag: raw.is_enabled(flag) for flag in (GL_BLEND, GL_CULL_FACE, GL_DEPTH_TEST, GL_SCISSOR_TEST)}
        boxes = raw.integers(GL_VIEWPORT), raw.integers(GL_SCISSOR_BOX)
        ui.renderer.render(imgui.get_draw_data(), SIZE)
        after = {flag: raw.is_enabled(flag) for flag in before}
        return before, after, boxes, (raw.integers(GL_VIEWPORT), raw.integers(GL_SCISSOR_BOX))

    for _ in range(2):
        before, after, boxes_before, boxes_after = frame_with_state()
    assert before[GL_DEPTH_TEST] == bool(enable & moderngl.DEPTH_TEST)  # the setup took effect
    assert before[GL_SCISSOR_TEST] == (scissor is not None)
    assert after == before
    assert boxes_after == boxes_before
    ctx.enable_only(moderngl.NOTHING)
    ctx.scissor = None


def test_scene_drawn_after_the_panel_is_unchanged(ui):
    from viewer.character import build_character
    from viewer.camera import framed_camera
    from viewer.render.renderer import Renderer

    scene, renderer = build_character(), Renderer(ui.ctx)
    camera = framed_camera(scene)
    try:
        ui.target.framebuffer.use()
        renderer.render(scene, camera, SIZE)
        alone = ui.target.read()
        for _ in range(2):
            _, with_panel = ui.frame(panel)
        renderer.render(scene, camera, SIZE)   # after the panel, the 3D renderer must see its own state
        assert np.array_equal(ui.target.read(), alone)
        renderer.render(scene, camera, SIZE)
        ui.renderer.render(imgui.get_draw_data(), SIZE)  # and the panel over a scene still shows
        over = ui.target.read()
        assert not np.array_equal(over, alone)
        assert np.array_equal(outside(over, (40, 30, 340, 230)), outside(alone, (40, 30, 340, 230)))
    finally:
        renderer.release()


def test_vtx_offset_is_honoured(ui):
    """ImGui only sets vtx_offset with 16-bit indices, so fake it: rebase each command's indices
    into vtx_offset by hand and the picture must not change."""
    for _ in range(2):
        _, expected = ui.frame(panel)
    draw_data = imgui.get_draw_data()
    rebased = 0
    for draw_list in draw_data.cmd_lists:
        indices = np.ctypeslib.as_array((ctypes.c_uint32 * draw_list.idx_buffer.size()).from_address(
            draw_list.idx_buffer.data_address()))
        for i in range(draw_list.cmd_buffer.size()):
            cmd = draw_list.cmd_buffer[i]  # indexing gives a reference; iterating gives copies
            commanded = indices[cmd.idx_offset:cmd.idx_offset + cmd.elem_count]
            if cmd.elem_count and commanded.min() > 0:
                base = int(commanded.min())
                commanded -= np.uint32(base)
                cmd.vtx_offset += base
                rebased += 1
    assert rebased
    ui.target.framebuffer.use()
    ui.ctx.clear(*(c / 255 for c in CLEAR), 1.0)
    ui.renderer.render(draw_data, SIZE)
    assert np.array_equal(ui.target.read(), expected)
