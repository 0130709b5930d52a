"""``lmscope serve``: the web app on a local port."""

from __future__ import annotations

import socket
import sys
import threading
import webbrowser

import lmscope
from lmscope.commands.common import add_model_option, load_model
from lmscope.errors import InvalidInputError, LmscopeError

LOOPBACK = {"127.0.0.1", "localhost", "::1"}


def register(sub):
    p = sub.add_parser(
        "serve",
        help="open the web app: every step of the model, with real numbers",
        description="Serve a local web page that walks through the model's 20 steps on your "
        "prompt, with the model's real numbers. The API is documented at /docs.",
    )
    add_model_option(p)
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    p.add_argument("--open", action="store_true", help="open the page in a browser")
    p.add_argument(
        "--compare",
        action="append",
        default=[],
        metavar="MODEL",
        help="a model the page may compare with, side by side (repeatable; loaded at start, "
        "and the only models a request can choose)",
    )
    p.add_argument(
        "--rnn",
        action="append",
        default=[],
        metavar="MODEL",
        help="a char RNN/LSTM/GRU for the neurons page at /rnn (repeatable; loaded at start; "
        "default: the shipped char-LSTMs, War and Peace first; 'none' for no page)",
    )
    p.add_argument(
        "--cache-mb",
        type=int,
        default=1024,
        help="memory for cached traces, in MiB (default 1024)",
    )
    p.add_argument(
        "--threads",
        type=int,
        default=None,
        help="CPU threads for the model (default: torch's choice); 1 is fastest when other "
        "programs keep the cores busy",
    )
    p.set_defaults(run=run)


def _check_free(host: str, port: int) -> None:
    """Say in one line that the port is taken, before spending time loading the model."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as err:
            raise InvalidInputError(
                f"cannot listen on {host}:{port} ({err.strerror}); pick another --port"
            ) from None


def run(args) -> int:
    import torch  # lazy, as uvicorn and the web app (FastAPI): see lmscope.commands
    import uvicorn

    from lmscope.web import create_app
    from lmscope.web.limits import limit_malloc_arenas

    if not 0 <= args.port <= 65535:
        raise InvalidInputError(f"port must be in 0..65535, got {args.port}")
    if args.cache_mb < 1:
        raise InvalidInputError(f"--cache-mb must be at least 1, got {args.cache_mb}")
    if args.threads is not None and args.threads < 1:
        raise InvalidInputError(f"--threads must be at least 1, got {args.threads}")
    if args.host not in LOOPBACK:
        print(
            f"lmscope: warning: binding {args.host} makes the app reachable from other "
            "machines; it has no authentication",
            file=sys.stderr,
        )
    _check_free(args.host, args.port)
    limit_malloc_arenas()  # before the worker threads exist: keeps resident memory flat
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    model = load_model(args)
    others = [lmscope.load(name) for name in args.compare]  # any family: char-RNNs compare too
    rnn = _rnn_models(args.rnn)
    app = create_app(model, cache_bytes=args.cache_mb << 20, compare=others, rnn=rnn)
    host = f"[{args.host}]" if ":" in args.host else args.host
    url = f"http://{host}:{args.port}/"
    print(f"lmscope: serving {model.name} at {url} (API manual at {url}docs)", file=sys.stderr)
    if others:
        names = ", ".join(app.state.compare)
        print(f"lmscope: the page can compare it with {names}", file=sys.stderr)
    if rnn:
        names = ", ".join(app.state.rnn)
        print(f"lmscope: char-RNN neurons of {names} at {url}rnn", file=sys.stderr)
    if args.open:
        threading.Timer(1.0, webbrowser.open, args=(url,)).start()
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0


def _rnn_models(names: list[str]) -> list:
    """The char models for /rnn: those named, else the shipped char models (the page can
    switch between them: War and Peace for prose, the stdlib LSTM for code)."""
    from lmscope.engine.loading import (  # lazy: see lmscope.commands
        load_char_model,
        shipped_char_models,
    )

    if [n.lower() for n in names] == ["none"]:
        return []
    if names:
        return [load_char_model(n) for n in names]
    models = []
    for name in shipped_char_models():
        try:
            models.append(load_char_model(name))
        except LmscopeError as err:  # the main page still works: say why a model is missing
            print(f"lmscope: warning: {name} is not on the char-RNN page: {err}", file=sys.stderr)
    return models
