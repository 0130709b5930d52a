"""What several subcommands share: which model, the sampling controls, streaming text."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING

import lmscope
from lmscope.errors import InvalidInputError

if TYPE_CHECKING:
    from lmscope.engine.sampling import SamplingParams


def add_model_option(parser: argparse.ArgumentParser):
    parser.add_argument(
        "--model",
        "-m",
        default=None,
        help="shipped model name, GPT-2 hub id (gpt2, distilgpt2, openai-community/gpt2...), "
        "or a local model folder; default: the shipped model",
    )


def add_ablate_option(parser: argparse.ArgumentParser):
    parser.add_argument(
        "--ablate",
        action="append",
        default=None,
        metavar="SPEC",
        help="switch parts off first: L5H3, attn2, mlp*, ... (repeatable)",
    )


def add_sampling_options(parser: argparse.ArgumentParser):
    group = parser.add_argument_group("sampling")
    group.add_argument(
        "--temperature",
        "-t",
        type=float,
        default=1.0,
        help="divide logits by T before softmax; 0 means greedy (default 1.0)",
    )
    group.add_argument("--top-k", type=int, default=None, help="keep the k most likely tokens")
    group.add_argument(
        "--top-p",
        type=float,
        default=None,
        help="keep the smallest set of tokens whose probability reaches p",
    )
    group.add_argument(
        "--min-p",
        type=float,
        default=None,
        help="drop tokens below min_p times the best token's probability",
    )
    group.add_argument("--greedy", action="store_true", help="always take the most likely token")
    group.add_argument("--seed", type=int, default=None, help="seed for reproducible sampling")


def add_chat_option(parser: argparse.ArgumentParser):
    parser.add_argument(
        "--chat",
        action="store_true",
        help="wrap the prompt in the model's chat template, special tokens and all "
        "(instruction-tuned models such as smollm2); default: plain completion",
    )


def chat_prompt(model, text: str, chat: bool) -> str:
    """``text`` as typed, or with ``--chat`` wrapped in the model's own chat template (a model
    without one is refused in one line)."""
    if not chat:
        return text
    from lmscope.engine.chat import apply_chat_template  # lazy: see lmscope.commands

    return apply_chat_template(model, text)


def sampling_params(args) -> SamplingParams:
    from lmscope.engine.sampling import SamplingParams  # lazy: see lmscope.commands

    return SamplingParams(
        temperature=args.temperature,
        top_k=args.top_k,
        top_p=args.top_p,
        min_p=args.min_p,
        greedy=args.greedy,
    )


def load_model(args, *, any_family: bool = False):
    """The model --model names. Commands that look inside a GPT refuse other families
    (char-RNNs) in one line unless ``any_family``."""
    if args.model is None:
        from lmscope.engine.loading import default_model_note  # lazy: see lmscope.commands

        note = default_model_note()
        if note:
            print(f"lmscope: {note}", file=sys.stderr)
    model = lmscope.load(args.model)
    if not any_family and not model.capabilities.trace:
        raise InvalidInputError(
            f"{model.name} is a char-{model.capabilities.family.upper()}; 'lmscope "
            f"{getattr(args, 'command', '')}' needs a Transformer (char-RNNs work with "
            "generate, sample and compare)"
        )
    return model


def print_stream(model, tokens: Iterable, prefix: str) -> None:
    """Write ``prefix``, then the generated tokens' text as it comes. The whole continuation
    is decoded each time, so a character split over several tokens prints whole."""
    out = sys.stdout
    out.write(prefix)
    ids: list[int] = []
    shown = ""
    for token in tokens:
        ids.append(token.id)
        stable = model.decode(ids).rstrip("\ufffd")
        out.write(stable[len(shown) :])
        out.flush()
        shown = stable
    out.write(model.decode(ids)[len(shown) :] + "\n")
