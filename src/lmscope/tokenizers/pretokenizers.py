"""Pre-tokenizers: how text is cut into the chunks that byte-level BPE merges separately.

A pre-tokenizer is a short list of regexes applied in turn, each one cutting every piece so far
into its matches and the text between them (Hugging Face's "Isolated" split). GPT-2 has one
regex; Llama-3 and Qwen2 have one each; SmolLM first isolates every digit and then applies
GPT-2's. An optional Unicode normalization (NFC, as Qwen2's files ask for) runs first.

`PreTokenizer.single_pattern` is one regex that cuts text the same way, for tiktoken, which
takes exactly one; sequences with a known single-regex equivalent have one written out here.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal, cast

import regex

from lmscope.errors import TokenizerError

# GPT-2's: English contractions, letter runs, digit runs, other symbols, and whitespace (a run
# keeps its last space for the word after it). Also what Hugging Face's ByteLevel(use_regex)
# applies.
GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""

# Llama-3's: contractions in any case, a word may take one leading symbol, numbers in groups of
# up to three digits, punctuation keeps the line breaks after it, line breaks with the spaces
# before them.
LLAMA3_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)

# Qwen2's: Llama-3's with every digit on its own.
QWEN2_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)

# Qwen3.5's: Qwen2's, with combining marks kept on the letters they follow.
QWEN35_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}"
    r"| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)

# GPT-4o's (also Llama-4's): words split before capitals ("CamelCase" -> "Camel", "Case"),
# contractions attached to the word before them.
_UPPER = r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]"
_LOWER = r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]"
_CONTRACTION = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
GPT4O_PATTERN = (
    rf"[^\r\n\p{{L}}\p{{N}}]?{_UPPER}*{_LOWER}+{_CONTRACTION}"
    rf"|[^\r\n\p{{L}}\p{{N}}]?{_UPPER}+{_LOWER}*{_CONTRACTION}"
    r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)

# Mistral's Tekken: GPT-4o's without contractions, every digit on its own.
TEKKEN_PATTERN = (
    rf"[^\r\n\p{{L}}\p{{N}}]?{_UPPER}*{_LOWER}+|[^\r\n\p{{L}}\p{{N}}]?{_UPPER}+{_LOWER}*"
    r"|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)

# Hugging Face's Digits pre-tokenizer: each digit alone, or each run of digits.
DIGIT_PATTERN = r"\p{N}"
DIGITS_PATTERN = r"\p{N}+"

# Patterns that match every character of any text, so findall alone loses nothing.
_TOTAL_PATTERNS = frozenset(
    {
        GPT2_PATTERN,
        LLAMA3_PATTERN,
        QWEN2_PATTERN,
        QWEN35_PATTERN,
        GPT4O_PATTERN,
        TEKKEN_PATTERN,
    }
)

# GPT-2's regex run on text whose digits a previous step has already cut out: no alternative may
# take a digit, and whitespace just before a digit ends its piece there (the digit was the end of
# that piece's text).
_GPT2_WITHOUT_DIGITS = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?[^\s\p{L}\p{N}]+|\s+(?![^\s\p{N}])|\s+"

# Sequences of steps -> one regex with the same pieces (checked against the steps in the tests).
_FUSED: dict[tuple[str, ...], str] = {
    (DIGIT_PATTERN, GPT2_PATTERN): DIGIT_PATTERN + "|" + _GPT2_WITHOUT_DIGITS,
    (DIGITS_PATTERN, GPT2_PATTERN): DIGITS_PATTERN + "|" + _GPT2_WITHOUT_DIGITS,
}

NORMALIZERS = ("NFC",)


@dataclass(frozen=True)
class PreTokenizer:
    """Regex steps applied in order, each isolating its matches; `normalizer` runs first.

    `name` says which tokenizer family the steps are ("gpt2", "llama3", "qwen2", "smollm"...,
    or "custom"); it takes no part in equality."""

    steps: tuple[str, ...] = (GPT2_PATTERN,)
    normalizer: str | None = None
    name: str = field(default="gpt2", compare=False)
    _compiled: tuple[regex.Pattern[str], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.normalizer not in (None, *NORMALIZERS):
            raise TokenizerError(
                "error.tokenizer.normalizer-unsupported",
                normalizer=repr(self.normalizer),
                known=", ".join(NORMALIZERS),
            )
        compiled = []
        for pattern in self.steps:
            try:
                compiled.append(regex.compile(pattern))
            except regex.error as err:
                raise TokenizerError(
                    "error.tokenizer.bad-regex", pattern=repr(pattern), why=str(err)
                ) from None
        object.__setattr__(self, "_compiled", tuple(compiled))

    def normalize(self, text: str) -> str:
        if self.normalizer is None:
            return text
        # __post_init__ admits only NORMALIZERS, all of them Unicode normal forms
        form = cast(Literal["NFC", "NFD", "NFKC", "NFKD"], self.normalizer)
        return unicodedata.normalize(form, text)

    def split(self, text: str) -> list[str]:
        """Cut already-normalized text into pre-tokens (no steps: the text is one piece)."""
        pieces = [text] if text else []
        for pattern, compiled in zip(self.steps, self._compiled, strict=True):
            if pattern in _TOTAL_PATTERNS:
                pieces = [chunk for piece in pieces for chunk in compiled.findall(piece)]
            else:
                pieces = [chunk for piece in pieces for chunk in _isolate(compiled, piece)]
        return pieces

    @cached_property
    def single_pattern(self) -> str | None:
        """One regex whose matches are exactly the pre-tokens, or None if none is known."""
        if not self.steps:
            return r"[\s\S]+"
        if len(self.steps) == 1:
            (pattern,) = self.steps
            if pattern in _TOTAL_PATTERNS:
                return pattern
            # The matches, and between them the longest runs where the pattern cannot start.
            return f"(?:{pattern})|(?:(?!(?:{pattern}))[\\s\\S])+"
        return _FUSED.get(self.steps)


def _isolate(compiled: regex.Pattern[str], text: str) -> list[str]:
    """Hugging Face's "Isolated" split: every match is a piece, and so is the text between."""
    pieces = []
    end = 0
    for match in compiled.finditer(text):
        start, stop = match.span()
        if start == stop:
            continue  # an empty match cuts nothing
        if start > end:
            pieces.append(text[end:start])
        pieces.append(match.group())
        end = stop
    if end < len(text):
        pieces.append(text[end:])
    return pieces


GPT2 = PreTokenizer()
LLAMA3 = PreTokenizer((LLAMA3_PATTERN,), name="llama3")
QWEN2 = PreTokenizer((QWEN2_PATTERN,), name="qwen2")
SMOLLM = PreTokenizer((DIGIT_PATTERN, GPT2_PATTERN), name="smollm")


@dataclass(frozen=True)
class GGUFPre:
    """What llama.cpp does for one `tokenizer.ggml.pre` name."""

    pretokenizer: PreTokenizer
    ignore_merges: bool = False
    add_bos: bool = False
    has_bos: bool = True


def _gguf_pre_table() -> dict[str, GGUFPre]:
    # Names and settings follow llama.cpp's llama-vocab.cpp; the regexes are the originals of
    # the Hugging Face files those names stand for.
    llama3 = GGUFPre(LLAMA3, ignore_merges=True, add_bos=True)
    groups: list[tuple[tuple[str, ...], GGUFPre]] = [
        (
            (
                "llama3",
                "llama-v3",
                "llama-bpe",
                "falcon3",
                "falcon-h1",
                "pixtral",
                "midm-2.0",
                "lfm2",
                "jina-v5-nano",
            ),
            llama3,
        ),
        (("dbrx", "smaug-bpe"), GGUFPre(LLAMA3)),
        (("glm4", "chatglm-bpe"), GGUFPre(LLAMA3, has_bos=False)),
        (
            (
                "gpt-2",
                "phi-2",
                "mpt",
                "olmo",
                "jais",
                "trillion",
                "granite-docling",
                "exaone4",
                "gigachat",
                "mellum",
                "a.x-4.0",
            ),
            GGUFPre(GPT2),
        ),
        (
            (
                "smollm",
                "starcoder",
                "refact",
                "command-r",
                "codeshell",
                "exaone",
                "minerva-7b",
                "mellum2",
            ),
            GGUFPre(SMOLLM),
        ),
        (
            (
                "qwen2",
                "deepseek-r1-qwen",
                "kormo",
                "f2llmv2",
                "megrez",
                "stablelm2",
                "hunyuan",
                "solar-open",
            ),
            GGUFPre(QWEN2),
        ),
        (("qwen35",), GGUFPre(PreTokenizer((QWEN35_PATTERN,), name="qwen35"))),
        (
            ("gpt-4o", "llama4", "kanana2", "talkie", "minimax-m2"),
            GGUFPre(PreTokenizer((GPT4O_PATTERN,), name="gpt-4o")),
        ),
        (
            ("tekken",),
            GGUFPre(
                PreTokenizer((TEKKEN_PATTERN,), name="tekken"), ignore_merges=True, add_bos=True
            ),
        ),
    ]
    return {name: pre for names, pre in groups for name in names}


GGUF_PRE = _gguf_pre_table()

# Steps -> the family name they are known by.
_FAMILIES = {pre.pretokenizer.steps: pre.pretokenizer.name for pre in GGUF_PRE.values()}


def pretokenizer_from_steps(steps: tuple[str, ...], normalizer: str | None = None) -> PreTokenizer:
    """A PreTokenizer named after the family its steps belong to ("custom" if none)."""
    return PreTokenizer(steps, normalizer, _FAMILIES.get(steps, "custom"))


def gguf_pre(name: str) -> GGUFPre:
    """llama.cpp's pre-tokenizer for a `tokenizer.ggml.pre` name (TokenizerError if unknown)."""
    try:
        return GGUF_PRE[name]
    except KeyError:
        raise TokenizerError(
            "error.tokenizer.gguf-pre-unsupported",
            name=repr(name),
            known=", ".join(sorted(GGUF_PRE)),
        ) from None
