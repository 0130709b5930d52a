"""``lmscope export RUN OUT``: a training run's checkpoint as a lean model folder to share.

Keeps what inference needs (weights, config, tokenizer) and the samples the run kept over
training (its timeline), and drops the optimizer and trainer state; float16 halves the size.
The result loads with ``lmscope.load(OUT)``.

Export never destroys: OUT must be new, an empty folder, or (with ``--overwrite``) an lmscope
model that export or train wrote, holding nothing else; it is replaced atomically. A folder
of anything else, a file, the model's own folder, a folder inside it or one containing it is
refused in one line before anything is written.
"""

from __future__ import annotations

import json
from pathlib import Path

import lmscope
from lmscope.commands.common import not_empty, say
from lmscope.errors import InvalidInputError
from lmscope.formats.atomic import LMSCOPE_FILES, cannot_write
from lmscope.i18n import Message

DTYPES = ("bfloat16", "float16", "float32")


def register(commands):
    p = commands.add("export", run)
    p.argument("run_dir", metavar="RUN")
    p.argument("out", metavar="OUT")
    p.flag("--overwrite")
    p.option("--dtype", choices=DTYPES, default="float32")
    p.option("--name", default=None)


# What export and train write into a model folder; anything else there is someone's file.
WRITTEN = LMSCOPE_FILES


def _listing(names: list[str], limit: int = 4) -> str | Message:
    shown = ", ".join(names[:limit])
    if len(names) > limit:
        return Message("error.export.listing-more", names=shown, more=len(names) - limit)
    return shown


def _lmscope_model_name(folder: Path) -> str | None:
    """The name in ``folder/lmscope.json`` when export or train wrote it, else None."""
    from lmscope.formats.layout import LMSCOPE_CONFIG  # lazy: see lmscope.commands

    try:
        meta = json.loads((folder / LMSCOPE_CONFIG).read_text("utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(meta, dict) or meta.get("format") != "lmscope":
        return None
    return str(meta.get("name") or folder.name)


def check_destination(run_dir, out: Path, overwrite: bool = False) -> None:
    """Refuse, in one line, any OUT that writing could destroy or cannot be written."""
    source = Path(run_dir)
    if source.exists():
        src, dst = source.resolve(), out.resolve()
        if dst == src:
            raise InvalidInputError("error.export.same-folder")
        if src in dst.parents:
            raise InvalidInputError("error.export.inside-model", out=str(out), run=str(run_dir))
        if dst in src.parents:
            raise InvalidInputError("error.export.contains-model", out=str(out), run=str(run_dir))
    if out.exists() and not out.is_dir():
        raise InvalidInputError("error.export.out-is-file", path=str(out))
    problem = cannot_write(out)  # tried with a real file: root passes os.access everywhere
    if problem:
        raise InvalidInputError("error.export.cannot-export", out=str(out), problem=problem)
    names = sorted(p.name for p in out.iterdir()) if out.is_dir() else []
    if not names:
        return
    model = _lmscope_model_name(out)
    if model is None:
        raise InvalidInputError("error.export.not-empty", out=str(out), names=_listing(names))
    foreign = [n for n in names if n not in WRITTEN]
    if foreign:
        raise InvalidInputError(
            "error.export.foreign-files", out=str(out), model=repr(model), names=_listing(foreign)
        )
    if not overwrite:
        raise InvalidInputError("error.export.holds-model", out=str(out), model=repr(model))


def export_model(
    run_dir, out_dir, dtype: str = "float32", name: str | None = None, overwrite: bool = False
) -> Path:
    from lmscope.engine.chat import chat_template_of  # lazy: see lmscope.commands
    from lmscope.engine.loading import parse_dtype, save_model
    from lmscope.formats.layout import LMSCOPE_CONFIG

    weights = parse_dtype(dtype)
    out = Path(out_dir)
    check_destination(run_dir, out, overwrite)
    model = lmscope.load(run_dir)
    meta = {}
    source_meta = Path(run_dir) / LMSCOPE_CONFIG
    if source_meta.is_file():
        meta = {
            k: v
            for k, v in json.loads(source_meta.read_text()).items()
            if k not in ("format", "arch", "model")
        }
    meta["name"] = name or meta.get("name") or out.name
    template = chat_template_of(model)  # a GGUF's or a folder's: the copy keeps --chat
    if template:
        meta["chat_template"] = template
    extra = _timeline_files(run_dir)
    check_destination(run_dir, out, overwrite)  # again: loading took a while
    try:
        save_model(
            model.net, out, tokenizer=model.tokenizer, meta=meta, dtype=weights, extra_files=extra
        )
    except OSError as err:  # the folder as it was is kept (an atomic write)
        raise InvalidInputError(
            "error.write.cannot-write", file=str(out), why=err.strerror or err
        ) from None
    return out


def _timeline_files(run_dir) -> dict[str, bytes]:
    """The samples the run kept over training (timeline.json and .md), copied as they are: the
    char-RNN page and ``lmscope sample --timeline`` show them from the exported folder too. A
    timeline that cannot be read is refused in one line before anything is written."""
    from lmscope.train import timeline  # lazy: see lmscope.commands

    folder = timeline.folder_of(str(run_dir))
    if folder is None or timeline.read(folder) is None:
        return {}
    names = (timeline.TIMELINE_JSON, timeline.TIMELINE_MD)
    return {name: (folder / name).read_bytes() for name in names if (folder / name).is_file()}


def run(args) -> int:
    not_empty(args.run_dir, "RUN", Message("error.export.advice.run"))
    not_empty(args.out, "OUT", Message("error.export.advice.out", example="my-model"))
    out = export_model(args.run_dir, args.out, args.dtype, args.name, args.overwrite)
    size = sum(p.stat().st_size for p in out.iterdir()) / 1e6
    print(say("report.export.wrote", path=str(out), size=f"{size:.1f}"))
    return 0
