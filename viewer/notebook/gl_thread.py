"""One thread for all of a notebook viewer's GL work.

An EGL context is current on one thread; drawn from another it gives noise (ipykernel 7 asks
jupyter_rfb for frames from a second thread during a drag). So each Viewer owns a GLThread: the
thread makes the context, and every call that touches GL (or the model the draw reads) is run
there in order, its caller blocking on the result.
"""

from __future__ import annotations

import queue
import threading
from concurrent.futures import Future

from ..errors import ViewerError

_STOP = object()


class GLThread:
    """A worker thread that makes ``make()``'s object (a HeadlessRenderer: the context and what
    draws in it) on itself and runs every ``call`` on it, one at a time."""

    def __init__(self, make, name: str = "boneviewer-gl"):
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._closed = False
        self._lock = threading.Lock()  # closing and queueing do not interleave
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()
        try:
            self.state = self.call(make)
        except BaseException:
            self.close()
            raise

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def thread(self) -> threading.Thread:
        return self._thread

    def call(self, function, *args, **kwargs):
        """``function(*args, **kwargs)`` run on the GL thread; its result or its exception here.
        Called on the GL thread itself (from within a call) it runs at once."""
        if threading.current_thread() is self._thread:
            return function(*args, **kwargs)
        future: Future = Future()
        with self._lock:
            if self._closed:
                raise ViewerError("this viewer is closed (its GL context is released)")
            self._jobs.put((future, function, args, kwargs))
        return future.result()

    def close(self, release=None) -> None:
        """Run ``release(state)`` on the thread (the GL objects and the context go), leave no
        context current there, and end the thread. Calls queued before run first; later ones
        are refused. Safe to call twice, and from a finalizer."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._jobs.put((None, release, (), {}))
            self._jobs.put(_STOP)
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout=10.0)

    def _run(self) -> None:
        from ..render.headless import release_egl_current

        while True:
            job = self._jobs.get()
            if job is _STOP:
                break
            future, function, args, kwargs = job
            if future is None:  # the release at close
                state = getattr(self, "state", None)
                try:
                    if function is not None and state is not None:
                        function(state)
                finally:
                    self.state = None
                continue
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(function(*args, **kwargs))
            except BaseException as error:  # handed to the caller, who raises it
                future.set_exception(error)
        release_egl_current()
