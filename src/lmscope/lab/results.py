"""A result is a file: every lab experiment writes one ``result.json`` next to its plots.

The document is made of sections; each section is one table (named columns, rows as dicts),
optionally one plot (``<stem>.png`` and ``<stem>.svg`` in the same folder, and the same figure
in Chinese as ``<stem>.zh.png`` and ``<stem>.zh.svg``: see ``plot_name``), a fixed
explanation and a verdict computed from the measured numbers. The file keeps no sentences:
every text in it is a catalog id with its values (``say``), a list of such texts (sentences
that follow each other), or a name, and is rendered in the reader's language when shown
(``shown``). The CLI, the web page and the tests all read this same file.
"""

from __future__ import annotations

import datetime as _dt
import functools
import json
import os
import platform
import re
import sys
import tempfile
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from lmscope import i18n
from lmscope.engine import machine_memory
from lmscope.errors import InvalidInputError

# /2: texts are catalog ids with values; /1 (before the catalog): each text an {en, zh} pair
SCHEMA = "lmscope.lab.result/2"
SCHEMAS = ("lmscope.lab.result/1", SCHEMA)
RESULT_FILE = "result.json"
LANGS = ("en", "zh")
# How a column's numbers should be shown; the values themselves stay raw in the JSON.
KINDS = ("int", "float", "sci", "seconds", "bytes", "ratio", "text", "bool")


# --- the texts of a result: ids and values, said when shown ----------------------------------
Said = dict | list | str | None  # say(...), a list of them, a name, or nothing


def say(message_id: str, /, **values) -> dict:
    """A text of a result file: a catalog id and its values (numbers, names, other texts), kept
    as data and rendered in the reader's language when shown."""
    if not i18n.has(message_id):
        raise KeyError(f"no message {message_id!r} in the catalog")
    return {"id": message_id, "values": values}


def shown(text: Said, lang: str | None = None) -> str:
    """A result file's text in ``lang`` (default: the current language). A list is sentences
    one after another (a space between them in English, none in Chinese); a string is a name,
    or the English of a file written before the catalog; an ``{en, zh}`` pair is such a file's
    text (English where it lacks ``lang``)."""
    lang = lang or i18n.language()
    if text is None:
        return ""
    if isinstance(text, str):
        return text
    if isinstance(text, list):
        parts = [part for part in (shown(t, lang) for t in text) if part]
        if not parts:
            return ""
        out = parts[0]
        for part in parts[1:]:
            out = i18n.text("lab.then", lang, first=out, then=part)
        return out
    if "id" in text:
        values = {k: _value(v, lang) for k, v in (text.get("values") or {}).items()}
        return i18n.text(text["id"], lang, **values)
    return text.get(lang) or text.get("en") or ""


def _value(value, lang: str):
    return shown(value, lang) if isinstance(value, dict | list) else value


def sentences(*parts: Said) -> list:
    """Texts that follow each other (empty ones left out)."""
    return [p for p in parts if p]


def plot_name(file: str, lang: str) -> str:
    """The name of a plot file drawn in ``lang``: the English file's own name, or the language
    before its extension (race-speed.png -> race-speed.zh.png). A result names only its
    English files; their Chinese siblings are derived, so results written before there were
    Chinese figures read the same, and a reader falls back to English where one is missing."""
    if lang == "en":
        return file
    stem, dot, ext = file.rpartition(".")
    return f"{stem}.{lang}.{ext}" if dot else f"{file}.{lang}"


def format_seconds(v: float) -> str:
    if v >= 999.5:  # whole, grouped seconds: ".3g" would write 3.22e+03 s
        return f"{v:,.0f} s"
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns"), (1e-12, "ps")):
        if v >= scale:
            return f"{v / scale:.3g} {unit}"
    return f"{v:.1g} s"


def format_bytes(v: float) -> str:
    for scale, unit in ((1 << 40, "TiB"), (1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
        if v >= scale:
            return f"{v / scale:.3g} {unit}"
    return f"{v:.0f} B"


def format_cell(value, kind: str) -> str:
    """One table cell as a reader sees it, by its column's kind (the JSON keeps the raw value)."""
    if value is None:
        return "—"
    if kind == "int":
        return f"{value:,}"
    if kind == "seconds":
        return format_seconds(value)
    if kind == "bytes":
        return format_bytes(value)
    if kind == "ratio":
        # three significant digits, so one column reads alike: 0.183×, 7.45×, 10.7×, 102×
        if value >= 100:
            return f"{value:,.0f}×"
        return f"{value:.1f}×" if value >= 10 else f"{value:.3g}×" if value < 1 else f"{value:.2f}×"
    if kind == "sci":
        return f"{value:.1e}"
    if kind == "bool":
        return "yes" if value else "NO"
    if kind == "float":
        return f"{value:,.4g}"
    text = str(value)
    return text if len(text) <= 60 else text[:57] + "..."


@dataclass
class Column:
    key: str
    label: Said  # a catalog text (say), or a name shown as it is in every language (N, k=4)
    kind: str = "float"
    cells: str | None = None  # text cells are codes, each said by the id cells.format(code)

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"unknown column kind {self.kind!r}")


@dataclass
class Section:
    key: str
    title: Said
    explain: Said
    columns: list[Column]
    rows: list[dict] = field(default_factory=list)
    verdict: Said = None
    plot: str | None = None  # file stem: <plot>.png and <plot>.svg beside result.json
    data: dict | None = None  # derived numbers the texts quote (fits, limits), for pages

    def to_dict(self) -> dict:
        said = {key: getattr(self, key) for key in ("key", "title", "explain", "verdict")}
        return said | {
            "columns": [_column(c) for c in self.columns],
            "rows": self.rows,
            "plot": {"png": f"{self.plot}.png", "svg": f"{self.plot}.svg"} if self.plot else None,
            "data": self.data,
        }


def _column(c: Column) -> dict:
    out = {"key": c.key, "label": c.label, "kind": c.kind}
    return out | {"cells": c.cells} if c.cells else out


def table(key: str, rows: list[dict], texts: dict, **extra) -> Section:
    """Section ``key`` with its plot and columns from tables.json (what a table shows is data,
    like its texts) and ``texts``' title, explain and verdict."""
    return Section(
        key=key, plot=plot_stem(key), columns=columns_of(key), rows=rows, **texts, **extra
    )


def plot_stem(key: str) -> str | None:
    """The file stem of section ``key``'s plot, from tables.json (None: it has none)."""
    return package_json("tables.json")[key].get("plot")


def columns_of(key: str) -> list[Column]:
    """The columns of section ``key``'s table, from tables.json: [key, kind, header, cells],
    the header a catalog id (``lab.column.…``) or a name (N, a), ``cells`` the ids that say a
    text column's codes (optional: ``lab.method.{}``)."""
    return [_spec_column(*column) for column in package_json("tables.json")[key]["columns"]]


def _spec_column(key: str, kind: str, header: str, cells: str | None = None) -> Column:
    return Column(key, say(header) if i18n.has(header) else header, kind, cells)


def table_ids() -> list[str]:
    """The column headers tables.json names by catalog id."""
    return [
        header
        for spec in package_json("tables.json").values()
        for _, _, header, *_ in spec["columns"]
        if i18n.has(header)
    ]


def column_label(section_key: str, column: dict) -> Said:
    """A column's header as a result file keeps it; a plain string from a file written before
    the catalog (its English) is said by the table's catalog id where tables.json has one."""
    label = column.get("label")
    if isinstance(label, str):
        spec = package_json("tables.json").get(section_key, {"columns": []})["columns"]
        for key, _, header, *_ in spec:
            if key == column.get("key") and i18n.has(header):
                return say(header)
    return label


def cell_text(value, column: dict) -> Said:
    """A text cell: a code said by its column's ids (``cells``), a text, or a name."""
    cells = column.get("cells")  # "lab.method.{}": the id of each code
    if cells and isinstance(value, str) and i18n.has(cells.format(value)):
        return say(cells.format(value))
    return value


@functools.cache
def package_json(name: str) -> dict:
    """A JSON file shipped beside this module (package data); read once."""
    return json.loads(resources.files(__package__).joinpath(name).read_text("utf-8"))


@dataclass
class Result:
    experiment: str
    title: Said
    params: dict
    hardware: dict
    sections: list[Section] = field(default_factory=list)
    created: str = field(
        default_factory=lambda: _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    )

    def to_dict(self) -> dict:
        return {
            "schema": SCHEMA,
            "experiment": self.experiment,
            "title": self.title,
            "created": self.created,
            "hardware": self.hardware,
            "params": self.params,
            "sections": [s.to_dict() for s in self.sections],
        }

    def write(self, out_dir: Path) -> Path:
        """Write result.json atomically, so a reader never sees half a file."""
        out_dir = Path(out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        text = json.dumps(self.to_dict(), ensure_ascii=False, indent=1, allow_nan=False)
        fd, tmp = tempfile.mkstemp(dir=out_dir, prefix=".result-", suffix=".json")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
        os.chmod(tmp, 0o644)  # mkstemp makes it private; results are meant to be read
        path = out_dir / RESULT_FILE
        os.replace(tmp, path)
        return path


def read_result(path: str | os.PathLike) -> dict:
    """Load and sanity-check a result.json (a folder holding one is accepted too)."""
    if not isinstance(path, str | os.PathLike):
        raise InvalidInputError("error.lab.result.not-a-path", got=type(path).__name__)
    path = Path(path)
    if path.is_dir():
        path = path / RESULT_FILE
    if not path.is_file():
        raise InvalidInputError("error.lab.result.none", path=str(path))
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise InvalidInputError(
            "error.lab.result.unreadable", path=str(path), reason=str(err.strerror or err)
        ) from None
    except (UnicodeDecodeError, json.JSONDecodeError):  # the parser's words mean nothing here
        raise InvalidInputError("error.lab.result.not-json", path=str(path)) from None
    if not isinstance(doc, dict) or doc.get("schema") not in SCHEMAS:
        raise InvalidInputError("error.lab.result.no-schema", path=str(path), schema=SCHEMA)
    return doc


def shipped_dir(experiment: str) -> Path:
    """Folder of the example results measured when lmscope was built (package data)."""
    folder = Path(str(resources.files("lmscope") / "assets" / "lab" / experiment))
    if not (folder / RESULT_FILE).is_file():
        known = ", ".join(shipped_experiments()) or "none"
        raise InvalidInputError("error.lab.result.no-shipped", name=experiment, known=known)
    return folder


def shipped_experiments() -> list[str]:
    root = Path(str(resources.files("lmscope") / "assets" / "lab"))
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if (p / RESULT_FILE).is_file())


def _cpuinfo() -> dict[str, str]:
    """The first processor's fields from /proc/cpuinfo (empty where there is none)."""
    fields: dict[str, str] = {}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if not line.strip():
                break
            key, _, value = line.partition(":")
            fields[key.strip()] = value.strip()
    except OSError:
        pass
    return fields


def _cpu_model(info: dict[str, str]) -> str:
    return info.get("model name") or platform.processor() or platform.machine() or "unknown"


def _cpu_detail(info: dict[str, str]) -> str | None:
    """Virtual machines often hide the marketing name; family/model and the vector units
    still say what generation the numbers come from."""
    if "cpu family" not in info:
        return None
    flags = set(info.get("flags", "").split())
    units = [name for name, flag in (("AVX-512", "avx512f"), ("AMX", "amx_tile")) if flag in flags]
    if not units and "avx2" in flags:
        units = ["AVX2"]
    detail = f"family {info['cpu family']} model {info.get('model', '?')}"
    return detail + (f", {', '.join(units)}" if units else "")


def _load_average() -> float | None:
    try:
        return round(os.getloadavg()[0], 2)
    except (OSError, AttributeError):
        return None


def hardware_info(devices: list[str] | tuple[str, ...] = ("cpu",)) -> dict:
    """What the numbers were measured on: they mean little without it."""
    import numpy  # here, not at the top: reading a result (lmscope lab show) needs neither
    import torch

    cpuinfo = _cpuinfo()
    info = {
        "cpu": _cpu_model(cpuinfo),
        "cpu_detail": _cpu_detail(cpuinfo),
        "cpu_cores": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "ram_bytes": machine_memory.physical_bytes(),
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "torch": torch.__version__,
        "numpy": numpy.__version__,
        "date": _dt.date.today().isoformat(),
        # other work on the machine slows timings: say how busy it was at the start
        "load_average_1m": _load_average(),
        "devices": list(devices),
    }
    if any(d.startswith("cuda") for d in devices) and torch.cuda.is_available():
        props = torch.cuda.get_device_properties(0)
        info["gpu"] = props.name
        info["gpu_memory_bytes"] = props.total_memory
        info["cuda"] = torch.version.cuda
    return info


def machine_line(hw: dict) -> Said:
    """The machine, for plot footnotes and terminal headers: a text (``shown`` says it)."""
    cpu = hw["cpu"]
    detail = hw.get("cpu_detail")
    if detail:  # "family 6 model 207, AVX2", as _cpu_detail writes it
        found = re.fullmatch(r"family (\S+) model (\S+)(?:, (.+))?", detail)
        if found is None:
            cpu = f"{cpu} ({detail})"
        elif found.group(3):
            family, model, units = found.groups()
            cpu = say("lab.machine.cpu-units", cpu=cpu, family=family, model=model, units=units)
        else:
            family, model = found.group(1), found.group(2)
            cpu = say("lab.machine.cpu", cpu=cpu, family=family, model=model)
    threads = hw.get("torch_threads")
    torch = f"torch {hw['torch']}"
    if threads:
        torch = say("lab.machine.torch", version=hw["torch"], threads=threads)
    parts = [cpu, say("lab.machine.cores", n=hw["cpu_cores"]), torch]
    if hw.get("gpu"):
        parts.append(hw["gpu"])
    parts.append(hw["date"])
    line = parts[0]
    for part in parts[1:]:
        line = say("lab.machine.then", first=line, then=part)
    return line


def resolve_devices(spec: str) -> list[str]:
    """'auto' (CPU, plus CUDA when present), 'cpu', 'cuda', or a comma list of those."""
    import torch  # only when an experiment runs (see hardware_info)

    spec = (spec or "auto").strip().lower()
    if spec == "auto":
        return ["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"]
    devices = [d.strip() for d in spec.split(",") if d.strip()]
    for d in devices:
        if d == "cpu":
            continue
        if d == "cuda" or d.startswith("cuda:"):
            if not torch.cuda.is_available():
                raise InvalidInputError("error.lab.device.no-cuda")
            continue
        raise InvalidInputError("error.lab.device.unknown", device=d)
    if not devices:
        raise InvalidInputError("error.lab.device.empty")
    return list(dict.fromkeys(devices))


def resolve_device(spec: str, refusal) -> str:
    """One device for an experiment that measures on one: cpu, cuda (or cuda:K), or auto (CUDA
    when present); a list of several is refused with ``refusal``."""
    devices = resolve_devices(spec)
    if len(devices) > 1 and (spec or "").strip().lower() != "auto":
        raise InvalidInputError(refusal)
    return devices[-1]
