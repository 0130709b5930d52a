"""A page's JavaScript as one request: its entry modules and every module they import
(``static/js``), joined at serve time into one ES module, kept per process and sent with an
ETag (``/bundle/<entries>.js``; the page's address names its version, which the browser may
keep for good). Its style sheets likewise, one after another (``/bundle/<sheets>.css``).
The page had no build step and still has none: the files in ``static/`` are the source,
served as they are too (the notebook widget and the tests import them).

How modules become one without a bundler: each module's body goes into a block of its own (its
private names stay its own), in the order the browser would evaluate them (dependencies first,
each once); its imports become reads of the modules already run and its exports one record
at the block's end. That is the same program as long as the modules keep to the plain forms
they use: named imports of ``./x.js`` at the top, ``export`` in front of a function, class or
const, no import cycle, no ``export default``, no ``import()``. Anything else is refused with
the reason (``BundleError``), and a quick test joins every page's modules."""

from __future__ import annotations

import functools
import hashlib
import re
from importlib.resources import files
from pathlib import Path

from fastapi.responses import Response

from lmscope.web.errors import NotFound

STATIC = Path(str(files("lmscope.web") / "static"))
JS = STATIC / "js"
MODULES = "__lmscopeModules"  # the one name the joined module adds

IMPORT = re.compile(
    r"""^import\s*(?:\{(?P<names>[^}]*)\}\s*from\s*|\*\s*as\s+(?P<ns>[\w$]+)\s+from\s+)?"""
    r"""(?P<q>["'])\./(?P<dep>[\w.-]+\.js)(?P=q);?[ \t]*(?://.*)?$""",
    re.MULTILINE,
)
EXPORT = re.compile(
    r"^export\s+(?P<decl>(?:async\s+function\*?|function\*?|class|const)\s+(?P<name>[\w$]+))",
    re.MULTILINE,
)
# what the joining cannot keep the same: refused by name
REFUSED = (
    (re.compile(r"^export\s+(?!(?:async\s+function|function|class|const)\s)", re.M), "export"),
    (re.compile(r"^import\b(?!\.meta)", re.M), "import"),
    (re.compile(r"\bimport\s*\("), "import()"),
)
NAME = re.compile(r"^[a-z_][a-z0-9_]*$")


class BundleError(ValueError):
    """A module in a form the joining does not keep the same (the message says which)."""


def _imports(source: str) -> list[tuple[str, str, list[str]]]:
    """(dependency, the destructuring of its record, the names it takes) for each import."""
    found: list[tuple[str, str, list[str]]] = []
    for m in IMPORT.finditer(source):
        if m.group("ns"):
            found.append((m.group("dep"), m.group("ns"), []))
            continue
        names = [n.split() for n in (m.group("names") or "").split(",") if n.strip()]
        if any(len(n) not in (1, 3) or (len(n) == 3 and n[1] != "as") for n in names):
            raise BundleError(f"an import of ./{m.group('dep')} the page's bundle cannot read")
        pattern = ", ".join(n[0] if len(n) == 1 else f"{n[0]}: {n[2]}" for n in names)
        found.append((m.group("dep"), f"{{ {pattern} }}" if names else "", [n[0] for n in names]))
    return found


def _check(name: str, source: str) -> None:
    stripped = IMPORT.sub("", source)
    stripped = EXPORT.sub("", stripped)
    for pattern, what in REFUSED:
        hit = pattern.search(stripped)
        if hit:
            line = stripped[: hit.start()].count("\n") + 1
            raise BundleError(f"{name}: `{what}` in a form the page's bundle cannot join (~{line})")


def order(entries: tuple[str, ...], folder: Path = JS) -> list[tuple[str, str]]:
    """(name, source) of every module the entries reach, in evaluation order."""
    sources: dict[str, str] = {}
    done: list[str] = []
    visiting: list[str] = []

    def visit(name: str) -> None:
        if name in done:
            return
        if name in visiting:
            cycle = " -> ".join([*visiting[visiting.index(name) :], name])
            raise BundleError(f"an import cycle the page's bundle cannot join: {cycle}")
        path = folder / name
        if not path.is_file():
            raise BundleError(f"no module {name} in {folder}")
        sources[name] = path.read_text(encoding="utf-8")
        _check(name, sources[name])
        visiting.append(name)
        for dep, _, _ in _imports(sources[name]):
            visit(dep)
        visiting.pop()
        done.append(name)

    for entry in entries:
        visit(entry)
    return [(name, sources[name]) for name in done]


def join(entries: tuple[str, ...], folder: Path = JS) -> str:
    """The entries' modules as one ES module."""
    modules = order(entries, folder)
    exported = {name: [m.group("name") for m in EXPORT.finditer(src)] for name, src in modules}
    parts = [
        f"// lmscope: {', '.join(entries)} and the modules they import, joined into one module",
        "// (lmscope/web/bundle.py); each module's own file is in /static/js/.",
        f"const {MODULES} = new Map();",
    ]
    for name, source in modules:
        reads = []
        for dep, pattern, wanted in _imports(source):
            missing = [w for w in wanted if w not in exported[dep]]
            if missing:
                raise BundleError(
                    f"{name} imports {', '.join(missing)}, which {dep} does not export"
                )
            if pattern:
                reads.append(f'const {pattern} = {MODULES}.get("{dep}");')
        body = IMPORT.sub("", source)
        body = EXPORT.sub(lambda m: m.group("decl"), body)
        record = ", ".join(exported[name])
        parts += [
            f"{{ // ---- {name}",
            *reads,
            body.strip("\n"),
            f'{MODULES}.set("{name}", {{ {record} }});',
            "}",
        ]
    return "\n".join(parts) + "\n"


def _stamp(folder: Path) -> tuple:
    return tuple(
        (p.name, p.stat().st_mtime_ns, p.stat().st_size) for p in sorted(folder.glob("*.*"))
    )


def sheets(names: tuple[str, ...], folder: Path = STATIC) -> str:
    """The page's style sheets as one, in the order the page links them (none uses @import)."""
    return "".join(f"/* ---- {n} */\n{(folder / n).read_text(encoding='utf-8')}" for n in names)


# what each kind of address holds: its folder, how its files are joined, its media type
KINDS = {
    "js": (JS, join, "text/javascript"),
    "css": (STATIC, sheets, "text/css"),
}


@functools.lru_cache(maxsize=16)
def _built(kind: str, entries: tuple[str, ...], stamp: tuple) -> tuple[bytes, str]:
    body = KINDS[kind][1](entries).encode("utf-8")
    return body, hashlib.md5(body, usedforsecurity=False).hexdigest()[:12]


def entries_of(address: str, kind: str = "js") -> tuple[str, ...] | None:
    """``app+precision`` -> (app.js, precision.js); None for anything but existing files."""
    stems = address.split("+")
    if not 0 < len(stems) <= 6 or not all(NAME.match(s) for s in stems):
        return None
    entries = tuple(f"{s}.{kind}" for s in stems)
    return entries if all((KINDS[kind][0] / e).is_file() for e in entries) else None


def built(entries: tuple[str, ...], kind: str = "js") -> tuple[bytes, str]:
    """The joined files and their version, joined again when one of them changed."""
    return _built(kind, entries, _stamp(KINDS[kind][0]))


def address(files: list[str], kind: str = "js") -> str:
    """The page's one address for its scripts (or its sheets), with its version."""
    entries = tuple(files)
    _, version = built(entries, kind)
    return f"/bundle/{'+'.join(e.removesuffix('.' + kind) for e in entries)}.{kind}?v={version}"


def response(name: str, kind: str, version: str | None, if_none_match: str | None) -> Response:
    """``/bundle/<entries>.js`` (or ``.css``): 304 when the browser has it; kept for good when
    the address names the current version (the pages do), else checked again each time."""
    entries = entries_of(name, kind) if kind in KINDS else None
    if entries is None:
        raise NotFound("error.page.no-such-script", name=f"{name}.{kind}")
    body, current = built(entries, kind)
    etag = f'"{current}"'
    cache = "public, max-age=31536000, immutable" if version == current else "no-cache"
    headers = {"etag": etag, "cache-control": cache}
    if if_none_match is not None and etag in {tag.strip() for tag in if_none_match.split(",")}:
        return Response(status_code=304, headers=headers)
    return Response(body, media_type=KINDS[kind][2], headers=headers)
