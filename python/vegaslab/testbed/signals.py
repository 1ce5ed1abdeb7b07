"""Tearing down what is live when the process ends: the networks and kernel sessions given to
:func:`watch` are torn down on SIGINT/SIGTERM (then the previous handler runs, or the signal is
re-raised so that the process dies of it as without the testbed) and at interpreter exit.

An owner has a ``tag`` and a ``_teardown()`` that is safe to call again. The handlers are
installed while anything is watched, and only from the main thread (Python allows no other);
elsewhere the owner's ``with`` block still cleans up."""
from __future__ import annotations

import atexit
import os
import signal
import threading

__all__ = ["registry_lock", "watch", "unwatch"]

#: What SIGINT/SIGTERM and exit tear down: live networks and kernel sessions, by tag.
_live: dict[str, object] = {}
_previous_handlers: dict[int, object] = {}
#: Held while the set of live owners changes, and by an owner around its own teardown.
registry_lock = threading.RLock()


def watch(owner) -> None:
    """Tear ``owner`` down on SIGINT/SIGTERM and at exit, until :func:`unwatch`."""
    with registry_lock:
        _install_handlers()
        _live[owner.tag] = owner


def unwatch(owner) -> None:
    """Stop watching ``owner``; the last one out restores the previous handlers."""
    with registry_lock:
        _live.pop(owner.tag, None)
        if not _live:
            _restore_handlers()


def _on_signal(signum, frame):
    for owner in reversed(list(_live.values())):  # newest first: networks before kernel sessions
        owner._teardown()
    previous = _previous_handlers.get(signum, signal.SIG_DFL)
    _restore_handlers()
    if callable(previous):
        previous(signum, frame)  # e.g. Python's SIGINT handler raises KeyboardInterrupt
    elif previous != signal.SIG_IGN:
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)  # die of the signal, as without the testbed


def _install_handlers() -> None:
    if _previous_handlers or threading.current_thread() is not threading.main_thread():
        return  # installed already, or not allowed here (the with block still cleans up)
    for sig in (signal.SIGINT, signal.SIGTERM):
        _previous_handlers[sig] = signal.signal(sig, _on_signal)


def _restore_handlers() -> None:
    if threading.current_thread() is not threading.main_thread():
        return
    for sig, previous in list(_previous_handlers.items()):
        if signal.getsignal(sig) is _on_signal:
            signal.signal(sig, previous if previous is not None else signal.SIG_DFL)
    _previous_handlers.clear()


@atexit.register
def _teardown_all() -> None:
    for owner in reversed(list(_live.values())):
        owner._teardown()
