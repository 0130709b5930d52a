"""What several subcommands share: the model they name, the sampling settings, the checks of
option values, streaming text, and the language the explanations are printed in. Their
shared options are added by ``lmscope.commands.parsers``."""

from __future__ import annotations

import math
import os
import shutil
import sys
import unicodedata
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import lmscope
from lmscope import i18n
from lmscope.errors import InvalidInputError, LmscopeError
from lmscope.i18n import Message

LANG_ENV = "LMSCOPE_LANG"
# the languages --lang offers: the catalog's, the pseudo-language included (it shows any text
# that does not come from the catalog)
LANGS = tuple(i18n.LANGUAGES)

if TYPE_CHECKING:
    from lmscope.engine.sampling import SamplingParams


# --- language --------------------------------------------------------------------------------
def use_lang(args) -> str:
    """The language asked for (--lang, else $LMSCOPE_LANG such as zh or zh_CN.UTF-8, else the
    system's locale where lmscope speaks it, else en), from now on the one ``say`` and the
    catalog's errors speak (``i18n.speak``)."""
    lang = getattr(args, "lang", None)
    if lang is None:
        env = os.environ.get(LANG_ENV, "").strip()
        try:
            lang = i18n.parse_language(env) if env else (i18n.system_language() or "en")
        except i18n.UnknownLanguageError:
            lang = None
        if lang not in LANGS:
            raise InvalidInputError(
                "error.cli.unknown-language", name=LANG_ENV, value=repr(env), known=", ".join(LANGS)
            )
    return i18n.speak(lang)


def current_lang() -> str:
    return i18n.language()


def say(message_id: str, **values) -> str:
    """The catalog's text ``message_id`` (``lmscope.i18n``) in the chosen language, filled in
    from ``values``; a whole number is written as it is, without separators (a caller that
    wants them formats it)."""
    plain = {k: str(v) if type(v) is int else v for k, v in values.items()}
    return i18n.text(message_id, **plain)


def listed(names) -> str:
    """Names as a list in a help text, joined as the chosen language joins them (", ", "、")."""
    return i18n.text("help.common.list-separator").join(names)


def terminal_width() -> int:
    """Columns to print in: the terminal's width, or $COLUMNS (80 when neither says)."""
    return shutil.get_terminal_size().columns


def abbreviate(token: str, limit: int) -> str:
    """A token as Python writes it (quotes, escapes), cut to ``limit`` characters with "…"."""
    text = repr(token)
    return text if len(text) <= limit else text[: max(1, limit - 2)] + "…" + text[-1]


def visible(text: str) -> str:
    """Text with its invisible characters drawn as the page draws them (``visible`` in
    static/js/draw.js): a space as "·", a newline as "↵", a tab as "→", other control
    characters as their Unicode pictures."""
    out = text.replace(" ", "·").replace("\n", "↵").replace("\t", "→").replace("\x7f", "␡")
    return "".join(_visible_char(c) for c in out.replace("\xa0", "⍽"))


def _visible_char(c: str) -> str:
    if ord(c) < 0x20:
        return chr(0x2400 + ord(c))
    # other spaces, zero-width and format characters, emoji variation selectors: they draw
    # nothing, so they are named
    unseen = unicodedata.category(c) in ("Zs", "Zl", "Zp", "Cf")
    selector = 0xFE00 <= ord(c) <= 0xFE0F or 0xE0100 <= ord(c) <= 0xE01EF
    return f"<U+{ord(c):04X}>" if unseen or selector else c


def signed_bar(value: float, largest: float, width: int) -> str:
    """A signed number drawn as a bar of "+" (above 0) or "-", ``width`` characters long for
    a number as large as ``largest``."""
    return ("+" if value > 0 else "-") * round(width * abs(value) / largest)


def columns_that_fit(width: int, label: int, cell: int, count: int) -> int:
    """How many columns ``cell`` characters wide, one space apart, fit beside a label
    column ``label`` wide in ``width`` (at least one, at most ``count``)."""
    return max(1, min(count, (width - label) // (cell + 1)))


# --- option values ---------------------------------------------------------------------------
class OptionError(LmscopeError):
    """An option's value that its type function refuses. Not a ValueError, so argparse lets it
    through (it would print its usage block): ``cli.main`` prints it as one line."""


def _whole_number(text: str, flag: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise OptionError("error.option.whole-number", flag=flag, got=repr(text)) from None


def at_least(low: int, flag: str):
    """An argparse type: a whole number of ``low`` or more, refused naming ``flag``."""

    def parse(text: str) -> int:
        value = _whole_number(text, flag)
        if value < low:
            raise OptionError("error.option.at-least", flag=flag, low=str(low), got=str(value))
        return value

    return parse


def seed_value(text: str) -> int:
    """An argparse type: a seed torch's generator takes (0 <= seed < 2**64)."""
    value = _whole_number(text, "--seed")
    if not 0 <= value < 2**64:
        raise OptionError(
            "error.option.between", flag="--seed", low="0", high="2**64-1", got=str(value)
        )
    return value


def run_seed_value(text: str) -> int:
    """An argparse type: the seed of a training run or an experiment (0 <= seed < 2**63). They
    seed torch with seed + a step or a rank, and torch's generator takes at most 2**64-1."""
    value = _whole_number(text, "--seed")
    if not 0 <= value < 2**63:
        raise OptionError(
            "error.option.between", flag="--seed", low="0", high="2**63-1", got=str(value)
        )
    return value


def not_empty(value: str, flag: str, advice: Message | str) -> str:
    """``value`` of ``flag``, refused when empty or blank: an empty path is the current folder
    (``Path("")`` is "."), which no one means. ``advice`` says what to give instead."""
    if not value.strip():
        raise InvalidInputError("error.option.empty", flag=flag, advice=advice)
    return value


def refuse_below(value, low: int, flag: str, message_id: str = "error.option.at-least") -> None:
    """Refuse in one line the value of ``flag`` (None: not given) when it is below ``low``;
    ``message_id`` says so with ``flag``, ``low`` and the value ``got``."""
    if value is not None and value < low:
        raise InvalidInputError(message_id, flag=flag, low=str(low), got=str(value))


def read_stdin() -> str:
    """Standard input as text ('-' for a text file), refused in one line when it is not UTF-8."""
    try:
        return sys.stdin.read()
    except UnicodeDecodeError:
        raise InvalidInputError("error.cli.stdin-not-utf8") from None


def read_text_file(path: str | os.PathLike, max_chars: int | None = None) -> str:
    """The UTF-8 text of the file ``--text`` names ('-': standard input), its first
    ``max_chars`` characters when given; what is not such a file is refused in one line."""
    if str(path) == "-":
        text = read_stdin()
        if not text.strip():
            raise InvalidInputError("error.cli.stdin-empty")
        return text[:max_chars]
    file = Path(path)
    # a device (/dev/zero, /dev/urandom) never ends: refused before reading; a pipe
    # (--text <(command)) is read
    if file.exists() and not (file.is_file() or file.is_dir() or file.is_fifo()):
        raise InvalidInputError("error.cli.not-regular-file", path=str(path))
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        # a sentence typed where a file's name goes: say how to give text itself
        typed = " " in str(path) and not any(sep in str(path) for sep in ("/", os.sep))
        said = "error.cli.no-such-text-file-typed" if typed else "error.cli.no-such-text-file"
        raise InvalidInputError(said, path=str(path)) from None
    except IsADirectoryError:
        raise InvalidInputError("error.cli.folder-not-text-file", path=str(path)) from None
    except UnicodeDecodeError:
        raise InvalidInputError("error.cli.not-utf8-file", path=str(path)) from None
    except OSError as err:
        why = err.strerror or err
        raise InvalidInputError("error.cannot-read", file=str(path), why=why) from None
    if not text.strip():
        raise InvalidInputError("error.cli.empty-file", path=str(path))
    return text[:max_chars]


def _number(text: str, flag: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise OptionError("error.option.number", flag=flag, got=repr(text)) from None


def temperature_value(text: str) -> float:
    value = _number(text, "--temperature")
    if not math.isfinite(value) or value < 0:
        raise OptionError("error.option.finite-at-least", flag="--temperature", low="0", got=text)
    return value


def top_p_value(text: str) -> float:
    value = _number(text, "--top-p")
    if not 0 < value <= 1:  # NaN fails too
        raise OptionError("error.option.top-p", flag="--top-p", got=text)
    return value


def min_p_value(text: str) -> float:
    value = _number(text, "--min-p")
    if not 0 <= value <= 1:
        raise OptionError("error.option.min-p", flag="--min-p", got=text)
    return value


def top_k_value(text: str) -> int:
    value = _whole_number(text, "--top-k")
    if value < 0:
        raise OptionError("error.option.top-k", flag="--top-k", got=str(value))
    return value


# --- models and sampling ---------------------------------------------------------------------
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
            print(i18n.text("report.cli.note", note=note), file=sys.stderr)
    model = lmscope.load(args.model, allow_nonfinite=getattr(args, "allow_nonfinite", False))
    if not any_family and not model.capabilities.trace:
        raise InvalidInputError(
            "error.cli.needs-transformer",
            name=model.name,
            arch=model.capabilities.family.upper(),
            command=getattr(args, "command", ""),
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
