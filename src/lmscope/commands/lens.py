"""``lmscope lens "text"``: the logit lens as a layers x positions table."""

from __future__ import annotations

import json

from rich.console import Console
from rich.table import Table
from rich.text import Text

from lmscope.commands.common import add_ablate_option, add_model_option, load_model
from lmscope.errors import InvalidInputError


def register(sub):
    p = sub.add_parser(
        "lens",
        help="what each layer would predict (logit lens)",
        description="Pass the residual stream after every layer through the final LayerNorm "
        "and unembedding, and show each layer's top prediction at each position. "
        "The last row is the model's real output.",
    )
    p.add_argument("text", help="the prompt")
    add_model_option(p)
    p.add_argument("--top", "-k", type=int, default=3, help="predictions kept per cell (JSON)")
    p.add_argument(
        "--positions",
        type=str,
        default=None,
        help="comma-separated positions (default: the last 12)",
    )
    add_ablate_option(p)
    p.add_argument("--json", action="store_true", help="print the lens as JSON")
    p.set_defaults(run=run)


def _positions(spec: str | None, n: int) -> list[int]:
    if spec is None:
        return list(range(max(0, n - 12), n))
    try:
        return [int(p) for p in spec.split(",") if p.strip()]
    except ValueError:
        raise InvalidInputError(
            f"--positions must be comma-separated integers, got {spec!r}"
        ) from None


def run(args) -> int:
    model = load_model(args)
    trace = model.trace(args.text, ablate=args.ablate)
    lens = trace.logit_lens(k=args.top, positions=_positions(args.positions, len(trace)))

    def piece(i: int) -> str:
        return model.tokenizer.piece(i).text if model.tokenizer is not None else str(i)

    if args.json:
        print(json.dumps(lens.to_dict(pieces=piece), ensure_ascii=False))
        return 0
    table = Table(
        title=f"logit lens · {model.name}" + (f" · ablated {args.ablate}" if args.ablate else "")
    )
    table.add_column("layer", style="cyan")
    for p in lens.positions:
        label = trace.pieces[p].text if trace.pieces else str(trace.ids[p])
        table.add_column(f"{p}: {label!r}", justify="center")
    for s, stage in enumerate(lens.stages):
        cells = []
        for j in range(len(lens.positions)):
            prob = float(lens.top_probs[s, j, 0])
            shade = int(232 + min(1.0, prob) * 23)
            cell = Text(
                f"{piece(int(lens.top_ids[s, j, 0]))!r}\n{prob:.2f}",
                style=f"on color({shade})" + (" black" if prob > 0.5 else ""),
            )
            cells.append(cell)
        table.add_row(stage, *cells)
    console = Console()
    console.print(table)
    console.print(
        "cell: the top prediction after that layer and its probability; the last row "
        "is the model's output"
    )
    return 0
