"""A stand-in for llama-cpp-python's server module, run by ``assistant.models.local_model`` in
the child process exactly as the real one is (``python -m ... --child``, ``uvicorn.run``).

It reads the same arguments (``--model``, ``--model_alias``, ``--host``, ``--port``) and answers
``GET /v1/models`` the way llama-cpp-python does, listing the alias, unless the model file's name
contains ``impostor`` (then it lists another model, as a foreign server on the port would).
``GET /env`` answers the names of the environment variables the child was given.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import uvicorn


def make_app(alias: str):
    async def app(scope, receive, send) -> None:
        if scope["type"] != "http":
            return
        if scope["path"] == "/v1/models":
            body = {"object": "list", "data": [{"id": alias, "object": "model", "owned_by": "me"}]}
        elif scope["path"] == "/env":
            body = {"names": sorted(os.environ)}
        else:
            body = {"error": "not found"}
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": json.dumps(body).encode()})

    return app


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model")
    parser.add_argument("--model_alias")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args, _ = parser.parse_known_args()
    alias = "someone-else" if "impostor" in Path(args.model).name else args.model_alias
    uvicorn.run(make_app(alias), host=args.host, port=args.port, lifespan="off", log_level="warning")


if __name__ == "__main__":
    main()
