"""The editing session without GL: what the panel, scripts and the remote server share.

- ``editor``: selection, undo, the pose edits the panel and gestures make;
- ``interaction``: picking, gizmo and mirror maths (numpy over the model's API);
- ``pose``: pose files (read, validate, apply, write);
- ``qa``: the motion checks on the current clip (the panel's QA list, timeline marks, feet in contact);
- ``script``: running a user's script (setup/update) and watching it for saves;
- ``script_app``: the ``app`` object a script receives (``App``, ``HeadlessApp``).
"""
