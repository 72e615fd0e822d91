"""Driving the viewer's panel headless: a ViewerSession on an offscreen EGL target, and clicks
and drags made of synthetic ImGui input (a plain module the test modules share, and the scripts
that draw the docs' panel pictures)."""

from contextlib import contextmanager

from imgui_bundle import imgui

from viewer.character import build_character
from viewer.render.headless import OffscreenTarget, create_headless_context, release_egl_current
from viewer.ui.session import ViewerSession

PANEL_SIZE = (1024, 640)


@contextmanager
def headless_session(size=PANEL_SIZE, scene=None, model_name=None):
    """A session showing ``scene`` (the built-in character) with ``session.run(frames)`` to draw
    frames into ``session.target`` and two frames already drawn; ``model_name``: what the panel
    calls the model (ViewerSession's)."""
    ctx = create_headless_context()
    target = OffscreenTarget(ctx, size)
    session = ViewerSession(ctx, scene or build_character(), **({} if model_name is None else {"model_name": model_name}))
    session.target = target
    session.run = lambda frames=1, **kw: [session.frame(size, 1 / 60, target.framebuffer, **kw) for _ in range(frames)]
    session.run(2)
    try:
        yield session
    finally:
        session.release()
        target.release()
        ctx.release()
        release_egl_current()


def centre(rect, fraction=0.5):
    x0, y0, x1, y1 = rect
    return x0 + (x1 - x0) * fraction, (y0 + y1) / 2


def click(session, label, near_left=False):
    """A click on the widget last drawn with ``label`` (a move, a press, a release: three frames);
    ``near_left`` for radio buttons and checkboxes, whose rect spans their label too."""
    x0, y0, x1, y1 = session.panel.rects[label]
    click_at(session, (x0 + min(8.0, (x1 - x0) / 2), (y0 + y1) / 2) if near_left else centre((x0, y0, x1, y1)))


def move(session, pixel, frames=1):
    """The mouse to ``pixel`` (ImGui floors mouse positions to whole pixels, as a real mouse)."""
    imgui.get_io().add_mouse_pos_event(float(pixel[0]), float(pixel[1]))
    session.run(frames)


def press(session, button=0, down=True):
    imgui.get_io().add_mouse_button_event(button, down)
    session.run()


def click_at(session, pixel, button=0):
    move(session, pixel)
    press(session, button, True)
    press(session, button, False)


def key(session, name, ctrl=False, shift=False):
    """A key pressed and released (two frames), with Ctrl and/or Shift held."""
    io = imgui.get_io()
    if ctrl:
        io.add_key_event(imgui.Key.mod_ctrl, True)
    if shift:
        io.add_key_event(imgui.Key.mod_shift, True)
    io.add_key_event(name, True)
    session.run()
    io.add_key_event(name, False)
    if ctrl:
        io.add_key_event(imgui.Key.mod_ctrl, False)
    if shift:
        io.add_key_event(imgui.Key.mod_shift, False)
    session.run()
