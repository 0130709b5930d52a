"""``lmscope sample DIR``: stream text from a trained checkpoint (or any model folder)."""

from __future__ import annotations

import lmscope
from lmscope.commands.common import (
    at_least,
    chat_prompt,
    current_lang,
    print_stream,
    sampling_params,
    use_lang,
)
from lmscope.errors import InvalidInputError
from lmscope.i18n import Message

DEFAULT_PROMPT, DEFAULT_LENGTH = "\n", 500  # None in args: --timeline refuses given ones


def register(commands):
    p = commands.add("sample", run)
    p.argument("dir", metavar="DIR")
    p.option("--prompt", "--prime", default=None)
    p.option("--length", "-n", type=at_least(0, "--length"), default=None)
    p.sampling()
    p.flag("--argmax")
    p.flag("--skip-unknown")
    p.flag("--timeline")
    p.chat()
    p.nonfinite()
    p.lang()


def _prompt_ids(model, text: str, skip_unknown: bool) -> list[int]:
    """The prompt as ids; a character vocabulary names the characters it lacks."""
    from lmscope.tokenizers import CharTokenizer  # lazy: regex and tiktoken cost --help 60 ms

    tokenizer = model.tokenizer
    if not isinstance(tokenizer, CharTokenizer):
        return model.to_ids(text, truncate=True)
    if not text:
        raise InvalidInputError("report.sample.prompt-is-empty-type")
    known = set(tokenizer.chars)
    unknown = [c for c in dict.fromkeys(text) if c not in known]
    if unknown and not skip_unknown:
        shown = ", ".join(repr(c) for c in unknown[:8])
        more = f" … (+{len(unknown) - 8})" if len(unknown) > 8 else ""
        raise InvalidInputError(
            "report.sample.prompt-has-character-s", n=len(unknown), shown=shown + more
        )
    kept = "".join(c for c in text if c in known)
    if not kept:
        raise InvalidInputError("report.sample.no-character-of-prompt")
    return model.to_ids(kept, truncate=True)


def print_timeline(name: str) -> int:
    """The samples a model kept over training, oldest first, as timeline.md lays them out."""
    from lmscope.train import timeline  # lazy: see lmscope.commands

    if not name.strip():  # Path("") is the current folder
        raise InvalidInputError("error.sample.empty-name")
    folder = timeline.folder_of(name)
    if folder is None:
        raise InvalidInputError("report.sample.no-model-folder-or", name=repr(name))
    data = timeline.read(folder)
    if data is None:
        raise InvalidInputError(_no_timeline(folder))
    info = {k: v for k, v in data.items() if k not in ("format", "samples")}
    # timeline.md is written in English; it is said again from the data in the user's language
    print(timeline.markdown(data["samples"], info, lang=current_lang()), end="")
    return 0


def _no_timeline(folder) -> Message:
    """Why a folder has no timeline: a run told to sample that stopped before its first sample
    point should not be told to pass --sample-at (trainer.json keeps what was asked)."""
    import json
    from pathlib import Path

    try:
        trainer = json.loads((Path(folder) / "trainer.json").read_text(encoding="utf-8"))
        points = sorted(int(i) for i in trainer["config"].get("sample_at") or [])
        reached = int(trainer["iteration"])
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        points, reached = [], None  # not a run of lmscope train (or unreadable): say it plainly
    if points and reached is not None and reached < points[0]:
        return Message(
            "report.sample.keeps-no-sample-timeline-training",
            folder=str(folder),
            reached=reached,
            first=points[0],
            needed=points[0],
        )
    return Message("report.sample.keeps-no-sample-timeline", folder=str(folder))


def run(args) -> int:
    from lmscope.engine.generation import generate  # lazy: see lmscope.commands

    use_lang(args)
    if args.timeline:
        # the timeline's samples were drawn in training: a length or prompt would be ignored
        given = [
            flag
            for flag, value in (("-n/--length", args.length), ("--prompt/--prime", args.prompt))
            if value is not None
        ]
        if given:
            raise InvalidInputError(
                "report.sample.timeline-prints-samples-kept", flags=", ".join(given)
            )
        return print_timeline(args.dir)
    args.length = DEFAULT_LENGTH if args.length is None else args.length
    args.prompt = DEFAULT_PROMPT if args.prompt is None else args.prompt
    if args.argmax:
        args.greedy = True
    params = sampling_params(args)  # validate before loading the model
    model = lmscope.load(args.dir, allow_nonfinite=args.allow_nonfinite)
    text = chat_prompt(model, args.prompt, args.chat)
    prompt = _prompt_ids(model, text, args.skip_unknown)
    # a chat answer ends with the end-of-turn token; plain sampling runs the full length
    stream = generate(model, prompt, args.length, params, seed=args.seed, stop_at_eot=args.chat)
    print_stream(model, stream, model.decode(prompt) if args.skip_unknown else text)
    return 0
