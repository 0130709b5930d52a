"""``lmscope generate "text"``: stream tokens from a model."""

from __future__ import annotations

import json

from lmscope import i18n
from lmscope.commands.common import (
    add_chat_option,
    add_lang_option,
    add_model_option,
    add_nonfinite_option,
    add_sampling_options,
    at_least,
    chat_prompt,
    load_model,
    print_stream,
    sampling_params,
    use_lang,
)


def register(sub):
    p = sub.add_parser(
        "generate",
        help=i18n.text("help.generate.summary"),
        description=i18n.text("help.generate.description"),
    )
    p.add_argument("prompt", help=i18n.text("help.generate.argument.prompt"))
    add_model_option(p)
    add_nonfinite_option(p)
    p.add_argument(
        "--tokens",
        "-n",
        type=at_least(0, "--tokens"),
        default=50,
        help=i18n.text("help.generate.option.tokens"),
    )
    p.add_argument("--no-stop", action="store_true", help=i18n.text("help.generate.option.no-stop"))
    p.add_argument(
        "--truncate",
        action="store_true",
        help=i18n.text("help.generate.option.truncate"),
    )
    p.add_argument("--json", action="store_true", help=i18n.text("help.generate.option.json"))
    add_chat_option(p)
    add_sampling_options(p)
    add_lang_option(p)
    p.set_defaults(run=run)


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
