"""The one error type for a user's mistakes: bad files, bad values, bad calls."""


class ViewerError(ValueError):
    """A problem with the user's input, worded to be shown as one line.

    The CLI prints ``str(error)`` and exits with status 2; anything else escaping is a bug.
    It subclasses ValueError so scripts that already catch ValueError keep working.
    """
