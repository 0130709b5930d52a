"""``lmscope minrnn``: Karpathy's min-char-rnn in NumPy: train it, check its gradients, or
watch the four-letter "hello" example."""

from __future__ import annotations

import sys
import time

from rich.console import Console

from lmscope import i18n
from lmscope.commands.common import (
    current_lang,
    listed,
    not_empty,
    refuse_below,
    say,
    use_lang,
)
from lmscope.data.corpora import corpus_names
from lmscope.errors import InvalidInputError
from lmscope.i18n import Message
from lmscope.lab.progress import make_progress

DEFAULT_ITERS = 20_000
DEFAULT_HIDDEN = 100
HELLO_ITERS = 300
HELLO_HIDDEN = 8  # four letters need only a small state
# None in args means "not given": --hello refuses the options it has no use for
DEFAULTS = {"data": "shakespeare", "seq": 25, "sample_every": 1000, "sample_length": 200}
HELLO_IGNORES = (
    ("data", "--data"),
    ("seq", "--seq"),
    ("sample_every", "--sample-every"),
    ("sample_length", "--sample-length"),
)


def register(commands):
    p = commands.add("minrnn", run)
    p.switches("--hello", "--gradcheck")
    p.option("--data", default=None, values={"corpora": listed(corpus_names())})
    sizes = {"default": str(DEFAULT_ITERS), "hello": str(HELLO_ITERS)}
    p.option("--iters", type=int, default=None, values=sizes)
    sizes = {"default": str(DEFAULT_HIDDEN), "hello": str(HELLO_HIDDEN)}
    p.option("--hidden", type=int, default=None, values=sizes)
    p.option("--seq", type=int, default=None)
    p.option("--lr", type=float, default=0.1)
    p.option("--sample-every", type=int, default=None)
    p.option("--sample-length", type=int, default=None)
    p.option("--seed", type=int, default=0)
    p.option("--checks", type=int, default=30)
    p.flag("--no-progress")
    p.lang()


def run(args) -> int:
    use_lang(args)
    if args.hello:  # "hello" is its own four letters: a corpus or chunk length would be ignored
        given = [flag for name, flag in HELLO_IGNORES if getattr(args, name) is not None]
        if given:
            raise InvalidInputError("report.minrnn.hello-trains-on-word", flags=", ".join(given))
    for name, value in DEFAULTS.items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    not_empty(args.data, "--data", Message("error.option.advice.corpus-or-file"))
    refuse_below(args.hidden, 1, "--hidden", "error.option.whole-at-least")
    refuse_below(args.seq, 1, "--seq", "error.option.whole-at-least")
    if args.iters is not None and args.iters < 0:
        raise InvalidInputError("error.option.not-negative", flag="--iters", got=str(args.iters))
    if args.hello:
        args.hidden = HELLO_HIDDEN if args.hidden is None else args.hidden
        return _hello(args)
    args.hidden = DEFAULT_HIDDEN if args.hidden is None else args.hidden
    if args.gradcheck:
        return _gradcheck(args)
    return _train(args)


def _console():
    return Console(highlight=False)


def _progress(console, label: str, enabled: bool):
    return make_progress(
        console, label=f"[bold]{label}", note=True, transient=True, enabled=enabled
    )


def _show_bar(args, console) -> bool:
    return not args.no_progress and console.is_terminal


def _hello(args) -> int:
    import numpy as np  # lazy: see lmscope.commands

    from lmscope.models.numpy_rnn import hello_demo

    iters = HELLO_ITERS if args.iters is None else args.iters
    hidden = args.hidden
    steps, losses = hello_demo(iters=iters, hidden=hidden, lr=args.lr, seed=args.seed)
    # the loss of the trained model (losses[-1] was measured before the last update)
    after = float(-sum(np.log(s.probs[s.target]) for s in steps))
    out = _console()
    out.print(
        i18n.text(
            "report.minrnn.hello-header",
            current_lang(),
            hidden=str(hidden),
            iters=iters,  # a plural's count, written with separators
            first=f"{losses[0] if losses else after:.3f}",
            last=f"{after:.3f}",
        )
    )
    out.print("\n" + say("report.minrnn.step-input-target-p"))
    for t, step in enumerate(steps, 1):
        probs = "  ".join(f"{step.probs[c]:5.3f}" for c in "helo")
        mark = say("report.minrnn.ok" if step.predicted == step.target else "report.minrnn.wrong")
        out.print(
            f"{t:>4}    {step.input!r}     {step.target!r}   {probs}   {step.predicted!r} ({mark})"
        )
    first, second = steps[2], steps[3]
    learned = all(s.predicted == s.target for s in steps)
    if learned:  # the conclusion only when the numbers show it
        line = say(
            "report.minrnn.both-steps-3-and",
            p_l=f"{first.probs['l']:.2f}",
            p_o=f"{second.probs['o']:.2f}",
        )
    else:
        needed = _hello_iters_needed(hidden, args.lr, args.seed, iters)
        line = say(
            "report.minrnn.model-is-wrong-at",
            wrong=sum(s.predicted != s.target for s in steps),
            needed=needed,
            again=needed,
        )
    out.print("\n" + line)
    return 0 if learned else 1


def _hello_iters_needed(hidden: int, lr: float, seed: int, tried: int) -> int:
    """Iterations (doubling from ``tried``) after which the same run predicts all 4 steps;
    a few milliseconds each: the network is 4 letters by ``hidden`` units."""
    from lmscope.models.numpy_rnn import hello_demo

    n = max(HELLO_ITERS // 4, tried * 2)
    while n < 100_000:
        steps, _ = hello_demo(iters=n, hidden=hidden, lr=lr, seed=seed)
        if all(s.predicted == s.target for s in steps):
            return n
        n *= 2
    return n


def _pad(text: str, width: int, right: bool = False) -> str:
    """``text`` padded to ``width`` terminal cells (a Chinese character takes two)."""
    from rich.cells import cell_len

    space = " " * max(0, width - cell_len(text))
    return space + text if right else text + space


def _load_text(name: str) -> str:
    from lmscope.data import load_corpus  # lazy: see lmscope.commands

    return load_corpus(name).text


def _gradcheck(args) -> int:
    import numpy as np  # lazy: see lmscope.commands

    from lmscope.models.numpy_rnn import MinCharRNN, Vocab, gradient_check

    if args.checks < 0:
        raise InvalidInputError("error.option.not-negative", flag="--checks", got=str(args.checks))
    text = _load_text(args.data)
    if len(text) < args.seq + 1:
        raise InvalidInputError(
            "error.minrnn.data-too-short", n=len(text), seq=args.seq, need=args.seq + 1
        )
    vocab = Vocab.from_text(text)
    ids = vocab.encode(text[: args.seq + 1])
    model = MinCharRNN(len(vocab), args.hidden, seed=args.seed, dtype=np.float64)
    # A non-zero starting state, as in the middle of training, so every term of BPTT is used.
    h0 = np.tanh(np.random.default_rng(args.seed).standard_normal(args.hidden))
    per_param = args.checks or None
    total = sum(
        p.size if per_param is None else min(per_param, p.size) for p in model.params.values()
    )
    out = _console()
    out.print(
        say(
            "report.minrnn.gradient-check-vanilla-rnn",
            hidden=args.hidden,
            vocab=len(vocab),
            seq=args.seq,
        )
    )
    started = time.perf_counter()
    with _progress(out, "gradcheck", _show_bar(args, out)) as bar:
        task = bar.add_task("check", total=total, note="")
        results = gradient_check(
            model, ids[:-1], ids[1:], h0, per_param=per_param, on_entry=lambda: bar.advance(task)
        )
    out.print(
        "\n"
        + _pad(say("report.minrnn.parameter"), 10)
        + "".join(
            _pad(say(name), width, right=True)
            for name, width in (
                ("report.minrnn.shape", 12),
                ("report.minrnn.checked", 10),
                ("report.minrnn.rel-error", 14),
            )
        )
        + _pad(say("report.minrnn.max-diff"), 13, right=True)
    )
    ok = True
    for name, result in results.items():
        shape = "x".join(map(str, model.params[name].shape))
        passed = result.rel_error < 1e-5
        mark = "report.minrnn.ok" if passed else "report.minrnn.fail"
        ok &= passed
        out.print(
            f"{name:<10}{shape:>12}{result.checked:>10}{result.rel_error:>14.2e}"
            f"{result.max_abs_diff:>13.2e}  {say(mark)}"
        )
    seconds = time.perf_counter() - started
    verdict = say("report.minrnn.all-below-1e-5" if ok else "report.minrnn.some-at-or-above")
    out.print(
        "\n"
        + say(
            "report.minrnn.relative-error-analytic-numeric",
            verdict=verdict,
            seconds=f"{seconds:.1f}",
        )
    )
    return 0 if ok else 1


def _train(args) -> int:
    from lmscope.models.numpy_rnn import train  # lazy: see lmscope.commands

    iters = DEFAULT_ITERS if args.iters is None else args.iters
    if args.sample_length < 1:
        raise InvalidInputError(
            "error.option.at-least-number",
            flag="--sample-length",
            low="1",
            got=str(args.sample_length),
        )
    text = _load_text(args.data)
    events = train(
        text,
        iters=iters,
        hidden=args.hidden,
        seq=args.seq,
        lr=args.lr,
        sample_every=args.sample_every,
        sample_length=args.sample_length,
        seed=args.seed,
    )
    out = _console()
    out.print(
        say(
            "report.minrnn.min-char-rnn-on",
            data=args.data,
            chars=f"{len(text):,}",
            vocab=len(set(text)),
            hidden=args.hidden,
            seq=args.seq,
            lr=args.lr,
            iters=f"{iters:,}",
        )
    )
    started = time.perf_counter()
    event = None
    show_bar = _show_bar(args, out)
    every = max(1, iters // 20)  # loss lines when there is no bar to show it
    with _progress(out, "minrnn", show_bar) as bar:
        task = bar.add_task("train", total=iters, note="")
        for event in events:
            loss = say(
                "report.minrnn.loss-char",
                loss=f"{event.smooth_loss:.2f}",
                per_char=f"{event.smooth_per_char:.3f}",
            )
            at = f"{event.iteration:,}"
            if event.sample is not None:
                head = say("report.minrnn.iter-sample-head", iteration=at, loss=loss)
                out.print(f"{head}\n{event.sample}\n-----", markup=False)
            elif not show_bar and event.iteration % every == 0:
                out.print(say("report.minrnn.iter-line", iteration=at, loss=loss))
            if event.iteration % 100 == 0 or event.iteration == iters:
                bar.update(task, completed=event.iteration, note=loss)
    seconds = time.perf_counter() - started
    if event is not None:
        chars = event.iteration * args.seq
        out.print(
            say(
                "report.minrnn.done-iterations-smoothed-loss",
                iterations=f"{event.iteration:,}",
                loss=f"{event.smooth_loss:.2f}",
                per_char=f"{event.smooth_per_char:.3f}",
                speed=f"{chars / max(seconds, 1e-9):,.0f}",
            )
        )
    sys.stdout.flush()
    return 0
