"""Which characters a character-level mixture of experts sends to which expert, measured.

    python scripts/moe_routing.py [MODEL] [--chars N]

MODEL is a model folder or a shipped model's name (default: the shipped ``shakespeare-moe``).
It runs the model over the first N characters (default: all) of the validation split of the
corpus it was trained on (the last 10%), in windows of its context length, reads each sparse
block's chosen experts from the probe ``blocks.L.mlp.hook_expert_indices`` and prints, per
layer, a Markdown table: for each kind of character, the share of its tokens whose first
choice is each expert, and how many tokens of that kind there were. The shipped model's card
quotes these tables.
"""

from __future__ import annotations

import argparse
from collections import Counter

import torch

import lmscope
from lmscope.data import load_corpus

KINDS = ("lower-case vowel", "lower-case consonant", "capital", "space", "newline", "punctuation")


def kind_of(char: str) -> str:
    if char == " ":
        return "space"
    if char == "\n":
        return "newline"
    if char.isupper():
        return "capital"
    if char.islower():
        return "lower-case vowel" if char in "aeiou" else "lower-case consonant"
    return "punctuation"


def first_choices(model, text: str) -> list[tuple[str, list[int]]]:
    """For each character of ``text``: (the character, its first-choice expert per sparse
    layer), run in windows of the model's context length."""
    net, n_ctx = model.net, model.config.n_ctx
    sparse = [i for i in range(model.config.n_layer) if model.config.is_sparse(i)]
    names = {f"blocks.{i}.mlp.hook_expert_indices": i for i in sparse}
    out: list[tuple[str, list[int]]] = []
    for start in range(0, len(text), n_ctx):
        window = text[start : start + n_ctx]
        ids = torch.tensor([model.tokenizer.encode(window)])
        seen: dict[int, torch.Tensor] = {}

        def hook(name, tensor, seen=seen):
            if name in names:
                seen[names[name]] = tensor[0, :, 0]
            return tensor

        with torch.no_grad():
            net(ids, hook=hook)
        for pos, char in enumerate(window):
            out.append((char, [int(seen[i][pos]) for i in sparse]))
    return out


def tables(model, text: str) -> dict[int, dict[str, tuple[int, list[float]]]]:
    """layer -> kind -> (tokens of that kind, share of them with each expert first)."""
    choices = first_choices(model, text)
    sparse = [i for i in range(model.config.n_layer) if model.config.is_sparse(i)]
    n_expert = model.config.n_expert
    result = {}
    for j, layer in enumerate(sparse):
        counts: dict[str, Counter] = {kind: Counter() for kind in KINDS}
        for char, experts in choices:
            counts[kind_of(char)][experts[j]] += 1
        result[layer] = {
            kind: (sum(c.values()), [c[e] / max(1, sum(c.values())) for e in range(n_expert)])
            for kind, c in counts.items()
        }
    return result


def markdown(found: dict, n_expert: int) -> str:
    lines = []
    for layer, rows in found.items():
        head = " | ".join(f"expert {e}" for e in range(n_expert))
        lines += [f"Layer {layer}:", "", f"| characters | tokens | {head} |"]
        lines.append("| --- | ---: |" + " ---: |" * n_expert)
        for kind, (n, shares) in rows.items():
            cells = " | ".join(f"**{s:.0%}**" if s == max(shares) else f"{s:.0%}" for s in shares)
            lines.append(f"| {kind} | {n:,} | {cells} |")
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", nargs="?", default="shakespeare-moe")
    parser.add_argument("--chars", type=int, default=None)
    args = parser.parse_args()
    model = lmscope.load(args.model)
    corpus = model.meta.get("training", {}).get("corpus", "shakespeare")
    text = load_corpus(corpus).text
    val = text[int(len(text) * 0.9) :][: args.chars]
    print(f"{len(val):,} characters of {corpus}'s validation split\n")
    print(markdown(tables(model, val), model.config.n_expert))


if __name__ == "__main__":
    main()
