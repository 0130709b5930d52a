"""``lmscope explain "text"``: the 20 Transformer Explainer steps, with the model's real numbers."""

from __future__ import annotations

import json

from rich.cells import cell_len
from rich.console import Console, Group
from rich.panel import Panel
from rich.text import Text

from lmscope import i18n
from lmscope.commands.common import (
    chat_prompt,
    load_model,
    sampling_params,
    say,
    terminal_width,
    use_lang,
)
from lmscope.engine.steps import STEPS, find_step  # plain data: no torch for --help
from lmscope.errors import InvalidInputError


def register(commands):
    p = commands.add("explain", run)
    p.argument("text")
    p.model()
    p.option("--layer", "-l", type=int, default=0)
    p.option("--head", type=int, default=0)
    p.option("--position", type=int, default=None)
    keys = ", ".join(s.key for s in STEPS)
    p.option("--step", action="append", default=None, metavar="N|KEY", values={"keys": keys})
    p.flag("--json")
    p.chat()
    p.ablate()
    p.sampling(seed=False)  # explain shows the pool it would draw from, draws none
    p.lang()


def run(args) -> int:
    from lmscope.commands import explain_render  # lazy: see lmscope.commands
    from lmscope.explain.catalogue import step_text, tokenizer_kind
    from lmscope.explain.report import report

    lang = use_lang(args)
    params = sampling_params(args)
    steps = [_step(s) for s in args.step] if args.step else None  # before the (slow) load
    model = load_model(args)
    result = report(
        model,
        chat_prompt(model, args.text, args.chat),
        layer=args.layer,
        head=args.head,
        position=args.position,
        params=params,
        steps=steps,
        ablate=args.ablate,
    )
    if args.json:
        print(json.dumps(result.model_dump(mode="json"), ensure_ascii=False, indent=1))
        return 0
    width = terminal_width()
    explain_render.width.set(width)
    console = Console(width=width)
    header = i18n.text(
        "report.explain.header",
        lang,
        model=result.model,
        n=str(result.n_tokens),  # a plural's count, as it was: no separators
        layer=str(result.layer),
        head=str(result.head),
        position=str(result.position),
    )
    header = f"{header} · {model.precision}"  # the numbers' precision
    if result.ablated:  # else every step reads as the untouched model's
        ablated = say(
            "report.explain.ablated",
            parts=", ".join(result.ablated),
            mode=say("report.explain.zero"),
        )
        # on a line of its own rather than wrapped mid-phrase
        joined = f"{header} · {ablated}"
        header = joined if cell_len(joined) <= width else f"{header}\n{ablated}"
    console.print(Text(header, style="bold"))
    family, kind = model.capabilities.family, tokenizer_kind(model)
    for step in result.steps:
        body = explain_render.render_step(step)  # with what the family adds
        said = step_text(step.key, family, kind)
        title = said.title.say(lang)
        probes = ", ".join(step.probes[:3]) or None
        parts = [Text(said.summary.say(lang), style="italic"), body]
        # a footer longer than the box's border is cut ("blocks.0.ln1.hook_normali─╯"): then
        # the probes are the box's last line, which wraps
        if probes and cell_len(probes) + 6 > width:
            parts.append(Text(probes, style="dim", justify="right", overflow="fold"))
            probes = None
        console.print(
            Panel(
                Group(*parts),
                title=say("report.explain.step-title", number=step.number, title=title),
                title_align="left",
                subtitle=probes,
                subtitle_align="right",
            )
        )
    return 0


def _step(text: str) -> int:
    """The number of the step ``--step`` names by number or key (any case)."""
    try:
        return find_step(text).number
    except KeyError:
        keys = ", ".join(s.key for s in STEPS)
        raise InvalidInputError("error.explain.step", text=repr(text), keys=keys) from None


def __getattr__(name: str):
    """The renderers (``RENDER``, ``render``, ...) as they were before they moved to
    ``explain_render``, imported only when asked for, so this module stays light."""
    if name.startswith("__"):
        raise AttributeError(name)
    from lmscope.commands import explain_render

    try:
        return getattr(explain_render, name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
