"""``lmscope sample DIR``: stream text from a trained checkpoint (or any model folder)."""

from __future__ import annotations

import sys

from lmscope.commands.common import add_sampling_options, sampling_params


def register(sub):
    p = sub.add_parser(
        "sample",
        help="stream text from a model folder written by 'lmscope train'",
        description="Load the model in DIR and continue --prompt for --length tokens, "
        "printing text as it is generated.",
    )
    p.add_argument("dir", metavar="DIR", help="checkpoint or model folder")
    p.add_argument("--prompt", default="\n", help="text to start from (default: a newline)")
    p.add_argument("--length", "-n", type=int, default=500, help="tokens to generate (default 500)")
    add_sampling_options(p)
    p.set_defaults(run=run)


def run(args) -> int:
    import lmscope
    from lmscope.errors import InvalidInputError
    from lmscope.generate import generate

    if args.length < 0:
        raise InvalidInputError(f"--length must be 0 or more, got {args.length}")
    params = sampling_params(args)  # validate before loading the model
    model = lmscope.load(args.dir)
    stream = generate(
        model, args.prompt, args.length, params, seed=args.seed, stop_at_eot=False, truncate=True
    )
    out = sys.stdout
    out.write(args.prompt)
    ids: list[int] = []
    shown = ""
    for token in stream:
        # Decode the whole continuation so a character split over several tokens prints whole.
        ids.append(token.id)
        stable = model.decode(ids).rstrip("\ufffd")
        out.write(stable[len(shown) :])
        out.flush()
        shown = stable
    out.write(model.decode(ids)[len(shown) :] + "\n")
    return 0
