"""``lmscope export RUN OUT``: a training run's checkpoint as a lean model folder to share.

Keeps what inference needs (weights, config, tokenizer) and drops the optimizer and trainer
state; float16 halves the size. The result loads with ``lmscope.load(OUT)``.
"""

from __future__ import annotations

import json
from pathlib import Path

import lmscope
from lmscope.errors import InvalidInputError

DTYPES = ("bfloat16", "float16", "float32")


def register(sub):
    p = sub.add_parser(
        "export",
        help="write a checkpoint as a lean model folder (weights, config, tokenizer)",
        description="Copy a trained model without optimizer or trainer state, "
        "optionally in float16, into a folder lmscope.load reads.",
    )
    p.add_argument(
        "run_dir", metavar="RUN", help="a folder written by 'lmscope train' (or any model folder)"
    )
    p.add_argument("out", help="the folder to write (replaced atomically)")
    p.add_argument(
        "--dtype",
        choices=DTYPES,
        default="float32",
        help="weights on disk (default float32)",
    )
    p.add_argument("--name", default=None, help="display name stored with the model")
    p.set_defaults(run=run)


def export_model(run_dir, out_dir, dtype: str = "float32", name: str | None = None) -> Path:
    from lmscope.engine.loading import parse_dtype, save_model  # lazy: see lmscope.commands
    from lmscope.formats.weights import LMSCOPE_CONFIG

    weights = parse_dtype(dtype)
    if Path(out_dir).resolve() == Path(run_dir).resolve():
        raise InvalidInputError("export needs a different output folder than the run folder")
    model = lmscope.load(run_dir)
    meta = {}
    source_meta = Path(run_dir) / LMSCOPE_CONFIG
    if source_meta.is_file():
        meta = {
            k: v
            for k, v in json.loads(source_meta.read_text()).items()
            if k not in ("format", "arch", "model")
        }
    meta["name"] = name or meta.get("name") or Path(out_dir).name
    save_model(model.net, out_dir, tokenizer=model.tokenizer, meta=meta, dtype=weights)
    return Path(out_dir)


def run(args) -> int:
    out = export_model(args.run_dir, args.out, args.dtype, args.name)
    size = sum(p.stat().st_size for p in out.iterdir()) / 1e6
    print(f"wrote {out} ({size:.1f} MB)")
    return 0
