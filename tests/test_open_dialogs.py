"""Open... dialogs in the panel (issue 37 item 12), with a stand-in dialog: a chosen file opens as
a dropped one does; a cancelled dialog changes nothing."""

from panel_driver import click
from samples import FOX


class StandInDialog:
    """What portable-file-dialogs' open_file gives: ready() once the user is done, result() paths."""

    def __init__(self, paths, frames=2):
        self.paths, self.frames = paths, frames

    def ready(self):
        self.frames -= 1
        return self.frames < 0

    def result(self):
        return self.paths


def open_files_section(session):
    for section in ("Bones", "Selected bone", "Files"):  # make room, open Files
        click(session, section)


def test_a_chosen_model_opens_as_a_dropped_one_and_cancel_changes_nothing(panel_session, monkeypatch):
    session = panel_session
    panel = session.panel
    panel.dialog_missing = None
    asked, opened = [], []
    real_open = session.open_model
    monkeypatch.setattr(session, "open_model", lambda path, *a: opened.append(path) or real_open(path, *a))
    answers = [[], [str(FOX)]]
    panel.open_dialog = lambda title, filters: asked.append(filters) or StandInDialog(answers.pop(0))
    open_files_section(session)
    scene, status = session.scene, session.editor.status
    click(session, "Open model...")                  # cancelled
    session.run(4)
    assert session.scene is scene and session.editor.status == status and not opened
    assert "*.glb" in asked[0][1] and "*.usdz" in asked[0][1]
    click(session, "Open model...")                  # Fox.glb chosen
    session.run(4)
    assert opened == [str(FOX)] and session.model_name == "Fox.glb"   # ViewerSession.open_model, as a drop


def test_without_a_dialog_tool_the_panel_says_so_and_the_path_field_works(panel_session):
    session = panel_session
    session.panel.dialog_missing = "Open... needs zenity or kdialog installed: type a path"
    open_files_section(session)
    assert "Open model... missing" in session.panel.rects
    session.panel.model_path = str(FOX)
    click(session, "Open model")
    assert session.model_name == "Fox.glb"


def test_portable_file_dialogs_is_importable():
    from imgui_bundle import portable_file_dialogs as pfd

    assert callable(pfd.open_file) and hasattr(pfd.open_file, "ready")
