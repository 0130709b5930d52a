"""``lmscope generate "text"``: stream tokens from a model."""

from __future__ import annotations

import json

from lmscope.commands.common import (
    at_least,
    chat_prompt,
    load_model,
    print_stream,
    sampling_params,
    use_lang,
)


def register(commands):
    p = commands.add("generate", run)
    p.argument("prompt")
    p.model()
    p.option("--tokens", "-n", type=at_least(0, "--tokens"), default=50)
    p.flag("--no-stop")
    p.flag("--truncate")
    p.flag("--json")
    p.chat()
    p.sampling()
    p.lang()


def run(args) -> int:
    from lmscope.engine.generation import generate  # lazy: see lmscope.commands

    use_lang(args)  # the language its errors are said in
    params = sampling_params(args)  # validate before the (slow) model load
    model = load_model(args, any_family=True)  # char-RNNs generate too
    prompt = chat_prompt(model, args.prompt, args.chat)
    stream = generate(
        model,
        prompt,
        args.tokens,
        params,
        seed=args.seed,
        stop_at_eot=not args.no_stop,
        truncate=args.truncate,
    )
    if args.json:
        for token in stream:
            print(json.dumps(token.to_dict()), flush=True)
        return 0
    print_stream(model, stream, prompt)
    return 0
