"""``lmscope serve``: the web app on a local port."""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import socket
import sys
import threading
import webbrowser

from lmscope.commands.common import load_model, not_empty, refuse_below, say
from lmscope.errors import InvalidInputError
from lmscope.i18n import Message

LOOPBACK = {"127.0.0.1", "localhost", "::1"}
EVERY_INTERFACE = {"0.0.0.0", "::"}


def register(commands):
    p = commands.add("serve", run)
    # repeatable: the page switches between the models named (the first is the default)
    p.option("--model", "-m", action="append", default=[], metavar="MODEL")
    p.option("--host", default="127.0.0.1")
    p.option("--port", type=int, default=8000)
    p.flag("--open")
    p.option("--compare", action="append", default=[], metavar="MODEL")
    p.option("--rnn", action="append", default=[], metavar="MODEL")
    p.option("--cache-mb", type=int, default=1024)
    p.option("--dtype", choices=("float32", "bfloat16", "float16"), default="float32")
    p.option("--threads", type=int, default=None)
    p.option("--workers", type=int, default=1)
    p.option("--max-wait", type=float, default=60.0, metavar="SECONDS")


def network_addresses() -> list[str]:
    """This machine's IPv4 address that others on its network can reach: the one its default
    route leaves from, found without sending anything (a UDP socket's connect only picks the
    route; TEST-NET-1, RFC 5737, is never answered). Empty without a route; no host name
    lookup, which can wait seconds on a resolver where there is no network."""
    import ipaddress

    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("192.0.2.1", 9))
        address = probe.getsockname()[0]
        ip = ipaddress.ip_address(address)
        if not (ip.is_loopback or ip.is_link_local or ip.is_unspecified):
            return [address]
    return []


# the two hosts people mean, said wherever a --host cannot be used
HOSTS = Message("error.serve.hosts")


def _check_free(host: str, port: int) -> None:
    """Say in one line that the port is taken, before spending time loading the model."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except (TypeError, ValueError) as err:  # a NUL character, an empty label ("a..b")
            raise InvalidInputError(
                "error.serve.bad-host", host=repr(host), why=str(err), advice=HOSTS
            ) from None
        except OSError as err:
            raise InvalidInputError(
                "error.serve.cannot-listen",
                where=f"{host}:{port}",
                why=err.strerror or err,
                advice=_bind_advice(host, err),
            ) from None


def _bind_advice(host: str, err: OSError) -> Message:
    """What to change when binding failed: the host when it is no address of this machine (a
    name that does not resolve, an address no interface has), else the port."""
    if isinstance(err, socket.gaierror) or err.errno == errno.EADDRNOTAVAIL:
        return Message("error.serve.not-an-address", host=host, advice=HOSTS)
    return Message("error.serve.another-port")


def _check_options(args) -> None:
    not_empty(args.host, "--host", HOSTS)  # bind("") would listen on every interface, unasked
    if not 0 <= args.port <= 65535:
        raise InvalidInputError("error.serve.port", got=str(args.port))
    refuse_below(args.cache_mb, 1, "--cache-mb")
    refuse_below(args.threads, 1, "--threads")
    refuse_below(args.workers, 1, "--workers")
    if not args.max_wait > 0:
        raise InvalidInputError(
            "error.option.more-than-seconds", flag="--max-wait", low="0", got=str(args.max_wait)
        )


def run(args) -> int:
    import torch  # lazy, as uvicorn and the web app (FastAPI): see lmscope.commands
    import uvicorn

    from lmscope.web.factory import (
        ENV,
        ServeSettings,
        build_app,
        explainable,
        explained,
        settle,
    )
    from lmscope.web.limits import keep_freed_memory, limit_malloc_arenas
    from lmscope.web.served import named

    _check_options(args)
    from lmscope.engine.transformer import max_trace_tokens  # lazy: torch

    max_trace_tokens()  # a limit set wrong is said now, not by every page request
    _check_free(args.host, args.port)  # first: no warning about a host that cannot be bound
    if args.host not in LOOPBACK:
        print(say("report.serve.reachable", host=args.host), file=sys.stderr)
    threads = args.threads
    if threads is None and args.workers > 1:  # the cores shared out, not each worker all
        threads = max(1, (os.cpu_count() or 1) // args.workers)
    names = list(args.model)
    settings = ServeSettings(
        names[0] if names else None,
        args.compare,
        args.rnn,
        args.cache_mb,
        threads,
        args.max_wait,
        args.dtype,
        more=names[1:],
    )
    limit_malloc_arenas()  # before the worker threads exist: keeps resident memory flat
    keep_freed_memory()  # the next trace reuses the last one's pages
    if threads is not None:
        torch.set_num_threads(threads)
    first = argparse.Namespace(model=settings.model)
    model = load_model(first, any_family=True)  # with --workers too: one line, said once
    model = explainable(model, settings.model, args.dtype)  # a char-RNN: its page's command
    host = f"[{args.host}]" if ":" in args.host else args.host
    url = f"http://{host}:{args.port}/"
    shown = model.name
    if args.dtype != "float32":
        shown = say("report.serve.model-in-dtype", model=model.name, dtype=args.dtype)
    more = [explained(name, args.dtype) for name in settings.more]  # refused now, in one line
    if args.workers > 1:
        served_names = list(named([model, *more]))
        del model, more  # each worker loads its own
        # the other models too, once here: a name that cannot load is one line now, not a
        # traceback in every worker that uvicorn then starts again
        compare, rnn = _names_that_load(args)
        os.environ[ENV] = settings.to_env()
        said = say(
            "report.serve.serving-workers",
            model=shown,
            url=url,
            workers=args.workers,
            threads=threads,
            docs=f"{url}docs",
        )
        print(said, file=sys.stderr)
        _say_switch(url, served_names)
        _say_other_pages(url, compare, rnn)
        _say_addresses(args)
        _open_later(args, url)
        target = "lmscope.web.factory:app_from_env"
        uvicorn.run(
            target,
            factory=True,
            workers=args.workers,
            host=args.host,
            port=args.port,
            log_level="warning",
        )
        return 0
    app = build_app(settings, model, more=more)
    print(say("report.serve.serving", model=shown, url=url, docs=f"{url}docs"), file=sys.stderr)
    _say_switch(url, list(app.state.served.models))
    _say_other_pages(url, list(app.state.compare), list(app.state.rnn))
    _say_addresses(args)
    _open_later(args, url)
    app.state.served.on_disk.start()  # the model menu's listing of this machine's models
    settle()
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0


def _names_that_load(args) -> tuple[list[str], list[str]]:
    """The names of the --compare and --rnn models, each loaded once (and let go) so that one
    that cannot load is refused before the workers start; the /rnn warnings are said here."""
    import lmscope
    from lmscope.web.factory import rnn_models

    compare = [lmscope.load(name).name for name in args.compare]
    rnn = [model.name for model in rnn_models(args.rnn)]
    return compare, rnn


def _say_switch(url: str, names: list[str]) -> None:
    """The models the page switches between, when there are several."""
    if len(names) > 1:
        shown = ", ".join(names)
        print(say("report.serve.switch", names=shown, url=url), file=sys.stderr)


def _say_other_pages(url: str, compare: list[str], rnn: list[str]) -> None:
    """What the page can compare with, /rnn's models, and /why (served whatever the model)."""
    if compare:
        print(say("report.serve.compare-with", names=", ".join(compare)), file=sys.stderr)
    if rnn:
        print(say("report.serve.rnn-page", names=", ".join(rnn), url=f"{url}rnn"), file=sys.stderr)
    print(say("report.serve.why-page", url=f"{url}why"), file=sys.stderr)


def _say_addresses(args) -> None:
    """Listening on every interface: the addresses learners on this machine's networks open
    (http://0.0.0.0:8000/ is none)."""
    if args.host not in EVERY_INTERFACE:
        return
    urls = [f"http://{address}:{args.port}/" for address in network_addresses()]
    if urls:
        print(say("report.serve.on-this-network", urls=", ".join(urls)), file=sys.stderr)


def _open_later(args, url: str) -> None:
    if args.host in EVERY_INTERFACE:  # not an address a browser opens everywhere: this machine
        url = f"http://{'[::1]' if args.host == '::' else '127.0.0.1'}:{args.port}/"
    if args.open:
        threading.Timer(1.0, webbrowser.open, args=(url,)).start()
