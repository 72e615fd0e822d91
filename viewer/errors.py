"""The one error type for a user's mistakes: bad files, bad values, bad calls."""


class ViewerError(ValueError):
    """A problem with the user's input, worded to be shown as one line.

    The CLI prints ``str(error)`` and exits with status 2; anything else escaping is a bug.
    It subclasses ValueError so scripts that already catch ValueError keep working.
    """


def why_missing(path, what: str = "file") -> str:
    """Why ``path``, which is no file or folder that can be used, is not there, in words: "no such
    file" (``what``), a symlink's fault (``symlink_fault``), or what the system says (a part that
    is not a folder, no permission)."""
    import os

    try:
        os.stat(path)
    except OSError as error:
        return symlink_fault(path) or (f"no such {what}" if isinstance(error, FileNotFoundError) else
                                       f"cannot reach it: {error.strerror}")
    return f"not a regular {what}"  # there, but a device, a FIFO or a socket


def symlink_fault(path) -> str | None:
    """"a symlink loop: it cannot be resolved" (on the way to ``path`` or at it), "a broken
    symlink to TARGET", or None: the system's "no such file" hides both."""
    import errno
    import os

    try:
        os.stat(path)
    except OSError as error:
        if error.errno == errno.ELOOP:
            return "a symlink loop: it cannot be resolved"
        if os.path.islink(path):
            return f"a broken symlink to {os.readlink(path)}"
    return None
