"""A local HTTP server run on a daemon thread, started and stopped by ``with`` (or ``start``/``stop``):
the lifecycle both fakes of the OpenAI API share (``openai_http.FakeOpenAI``, the scriptable one the
tests use, and ``loadtest_server.FakeOpenAIServer``, the fast one ``lagmem loadtest`` runs)."""

from __future__ import annotations

import threading
from http.server import HTTPServer
from typing import Self


class Served:
    """Call ``_serve(httpd)`` in ``__init__``; ``stop`` shuts the server down and joins its thread."""

    def _serve(self, httpd: HTTPServer) -> None:
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, name="fake-openai", kwargs={"poll_interval": 0.05}, daemon=True
        )

    def start(self) -> Self:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
