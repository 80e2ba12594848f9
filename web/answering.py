"""Answers generated in a worker thread, so that nothing the page does can cut one off.

Why: a Streamlit script run stops at its next element whenever the session reruns (a second
message, a click in the sidebar, a page switch). An answer streamed by the run itself was then
abandoned half way and never stored, leaving its question unanswered. Here a daemon thread drives
``Exchange.stream()`` to the end, so the answer is stored whatever the page does; the page only
*follows* the text (``Answering.follow``), and any later run of any page can pick it up again.

One answer at a time per conversation: while one is running the chat keeps its input disabled,
and a message that arrives anyway waits in the page's outbox until the answer is stored (so the
turns stay in question, answer order).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator

from assistant.errors import LagmemError
from assistant.service import Exchange

log = logging.getLogger(__name__)

FINISHED_KEEP_SECONDS = 600.0  # a finished answer nobody collected (tab closed) is dropped after this
# answers being written at once by this server process: each holds a thread and a model request
# open, so a crowd of tabs (or a script) cannot start threads without end; past it a message is
# stored and keeps its Retry
MAX_WORKERS = 32


class Full(RuntimeError):
    """The server is writing as many answers as it may at once; the message is stored, not answered."""


class Busy(RuntimeError):
    """The conversation already has an answer being written (another tab sent at the same moment)."""


class Answering:
    """One exchange being answered by a worker thread: its text so far, and how it ended."""

    def __init__(self, ex: Exchange):
        self.conv_id = ex.result.conversation_id
        self.user_turn = ex.result.user_turn
        self.result = ex.result
        self.parts: list[str] = []
        self.error: str | None = None  # a model error, in words for the user
        self.crash: BaseException | None = None  # anything else: re-raised by the page that collects it
        self.finished_at: float | None = None
        self.stopped_text: str | None = None  # set by ``stop``: what had been written when stopped
        self._cond = threading.Condition()
        self._ex = ex
        self._thread = threading.Thread(target=self._run, name=f"lagmem-answer-{self.conv_id}", daemon=True)

    @property
    def done(self) -> bool:
        return self.finished_at is not None

    def _run(self) -> None:
        try:
            for delta in self._ex.stream():
                with self._cond:
                    self.parts.append(delta)
                    self._cond.notify_all()
        except LagmemError as exc:  # a model error, a busy database, a deleted conversation: in words, with a Retry
            log.warning("conversation %d: the answer to turn %d failed: %s", self.conv_id, self.user_turn, exc.message)
            self.error = exc.message
        except BaseException as exc:  # kept for the page, which raises it where it can be seen
            self.crash = exc
        finally:
            with self._cond:
                self.finished_at = time.monotonic()
                self._cond.notify_all()

    def stop(self) -> None:
        """The Stop button: end the answer now; nothing of it is stored (its question keeps its
        Retry, and the text written so far is kept in ``stopped_text`` for the page to show)."""
        with self._cond:
            self.stopped_text = "".join(self.parts)
        self._ex.stop()

    def follow(self, poll: float = 0.5, *, idle: bool = False) -> Iterator[str]:
        """The answer's text from its start: what has arrived, then each delta until it ends.
        ``idle``: also yield "" after each ``poll`` seconds without text, so a page following a
        silent model still hands control back to Streamlit (a click on Stop then gets through)."""
        seen = 0
        while True:
            with self._cond:
                if seen >= len(self.parts) and not self.done:
                    self._cond.wait(poll)
                new, seen, ended = self.parts[seen:], len(self.parts), self.done
            if new:
                yield "".join(new)
            elif idle and not ended:
                yield ""
            if ended and seen >= len(self.parts):
                return

    def wait(self, timeout: float | None = None) -> bool:
        self._thread.join(timeout)
        return self.done


_lock = threading.Lock()
_running: dict[tuple[str, int], Answering] = {}


def start(db: str, ex: Exchange) -> Answering:
    """Answer ``ex`` in a worker thread. ``db`` names the database (conversation ids are per database)."""
    job = Answering(ex)
    with _lock:
        now = time.monotonic()
        for key in [k for k, j in _running.items() if j.done and now - j.finished_at > FINISHED_KEEP_SECONDS]:
            del _running[key]
        key = (db, job.conv_id)
        if key in _running and not _running[key].done:
            raise Busy(f"conversation {job.conv_id} is already being answered")
        writing = sum(not j.done for j in _running.values())
        if writing >= MAX_WORKERS:
            raise Full(
                f"The server is writing {writing} answers at once, as many as it may; your message is "
                "stored. Use its Retry in a moment."
            )
        _running[key] = job
    job._thread.start()
    return job


def current(db: str, conv_id: int) -> Answering | None:
    """The conversation's answer in progress, or finished and not yet collected."""
    with _lock:
        return _running.get((db, conv_id))


def collect(db: str, conv_id: int) -> Answering | None:
    """Forget a finished answer and return it (its error is for the page to show), else None."""
    with _lock:
        job = _running.get((db, conv_id))
        if job is None or not job.done:
            return None
        del _running[(db, conv_id)]
    return job
