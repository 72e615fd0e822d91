"""Poses from another process: a connection to a running viewer, or to a render server.

``from viewer.remote import connect`` gives the client (client.py); the server (server.py)
runs in ``boneviewer view --listen`` and ``boneviewer serve``; protocol.py is the message
format, the only code that knows the bytes.
"""

from ..errors import ViewerError
from .client import Client, connect

__all__ = ["Client", "ViewerError", "connect"]
