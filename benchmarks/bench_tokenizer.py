"""Tokenizer throughput on Tiny Shakespeare: lmscope vs tiktoken vs the pure-Python reference.

    python benchmarks/bench_tokenizer.py [--text PATH] [--repeats N]

`run(text_path)` returns the figures as a dict so a benchmark collector can gather them.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

from lmscope.tokenizers import gpt2_files_dir, gpt2_tokenizer

DEFAULT_TEXT = (
    Path(__file__).resolve().parents[1] / "src/lmscope/assets/corpora/tinyshakespeare/input.txt"
)


def _seconds(work: Callable[[], object], repeats: int) -> float:
    """Best wall time of `repeats` runs: the least disturbed by other processes."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best


def _reference_tiktoken():
    """tiktoken's own GPT-2 setup (its loader and regex), built offline from the shipped files."""
    import tiktoken
    from tiktoken.load import data_gym_to_mergeable_bpe_ranks
    from tiktoken_ext.openai_public import r50k_pat_str

    folder = gpt2_files_dir()
    ranks = data_gym_to_mergeable_bpe_ranks(str(folder / "vocab.bpe"), str(folder / "encoder.json"))
    special = {"<|endoftext|>": 50256}
    return tiktoken.Encoding(
        "gpt2", pat_str=r50k_pat_str, mergeable_ranks=ranks, special_tokens=special
    )


def run(text_path: str | Path = DEFAULT_TEXT, *, repeats: int = 3) -> dict:
    """Measure encode/decode throughput (MB/s of UTF-8 text) and return every figure."""
    if not Path(text_path).is_file():
        raise FileNotFoundError(f"no benchmark text at {text_path}; pass the path of a UTF-8 file")
    text = Path(text_path).read_text(encoding="utf-8")
    megabytes = len(text.encode("utf-8")) / 1e6
    tok = gpt2_tokenizer()
    reference = tok.reference
    direct = _reference_tiktoken()
    ids = tok.encode(text)
    if direct.encode(text, allowed_special="all") != ids:
        raise AssertionError("lmscope and tiktoken disagree on this text")

    def cold_reference() -> list[int]:
        reference.clear_cache()
        return reference.encode(text)

    timings = {
        "lmscope_encode": _seconds(lambda: tok.encode(text), repeats),
        "tiktoken_encode": _seconds(lambda: direct.encode(text, allowed_special="all"), repeats),
        # The pure-Python BPE is slow: one cold and one warm run are enough.
        "reference_encode_cold": _seconds(cold_reference, 1),
        "reference_encode_warm": _seconds(lambda: reference.encode(text), 1),
        "lmscope_decode": _seconds(lambda: tok.decode(ids), repeats),
        "tiktoken_decode": _seconds(lambda: direct.decode(ids), repeats),
    }
    return {
        "text": str(text_path),
        "megabytes": megabytes,
        "tokens": len(ids),
        "backend": tok.backend,
        "seconds": timings,
        "mb_per_s": {name: megabytes / seconds for name, seconds in timings.items()},
        "sentencepiece": run_sentencepiece(text, repeats=repeats),
    }


def run_sentencepiece(text: str, *, repeats: int = 3) -> dict:
    """A SentencePiece-style BPE (Llama 2's shape, trained here with Hugging Face `tokenizers`,
    as the tests build it): lmscope's pure-Python one against `tokenizers` (Rust) on the same
    tokenizer.json, over the whole text at once and line by line."""
    import tempfile

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from helpers_spm import spm_tokenizer  # noqa: PLC0415 - the tests' builder, trained here
    from lmscope.tokenizers import load_tokenizer

    reference = spm_tokenizer("metaspace-first", vocab_size=8000)
    with tempfile.TemporaryDirectory() as folder:
        reference.save(str(Path(folder) / "tokenizer.json"))
        ours = load_tokenizer(folder)
    lines = text.splitlines()
    ids = ours.encode(text)
    if ids != reference.encode(text, add_special_tokens=False).ids:
        raise AssertionError("lmscope and tokenizers disagree on this text")

    def cold() -> list[int]:
        ours.clear_cache()
        return ours.encode(text)

    timings = {
        "lmscope_encode_cold": _seconds(cold, 1),
        "lmscope_encode": _seconds(lambda: ours.encode(text), repeats),
        "tokenizers_encode": _seconds(
            lambda: reference.encode(text, add_special_tokens=False), repeats
        ),
        "lmscope_encode_lines": _seconds(lambda: [ours.encode(x) for x in lines], repeats),
        "tokenizers_encode_lines": _seconds(
            lambda: [reference.encode(x, add_special_tokens=False) for x in lines], repeats
        ),
        "lmscope_decode": _seconds(lambda: ours.decode(ids), repeats),
        "tokenizers_decode": _seconds(lambda: reference.decode(ids), repeats),
    }
    megabytes = len(text.encode("utf-8")) / 1e6
    return {
        "vocab_size": ours.vocab_size,
        "tokens": len(ids),
        "seconds": timings,
        "mb_per_s": {name: megabytes / seconds for name, seconds in timings.items()},
    }


def format_table(result: dict) -> str:
    """Rows of MB/s with the ratio to tiktoken doing the same job."""
    speeds = result["mb_per_s"]
    lines = [
        f"{result['megabytes']:.2f} MB, {result['tokens']} GPT-2 tokens "
        f"(lmscope backend: {result['backend']})",
        f"{'measure':<24}{'MB/s':>10}{'vs tiktoken':>14}",
    ]
    for name, speed in speeds.items():
        baseline = speeds["tiktoken_decode" if name.endswith("decode") else "tiktoken_encode"]
        lines.append(f"{name:<24}{speed:>10.2f}{speed / baseline:>13.3f}x")
    spm = result["sentencepiece"]["mb_per_s"]
    lines.append(f"{'SentencePiece-style':<24}{'MB/s':>10}{'vs tokenizers':>14}")
    for name, speed in spm.items():
        lines.append(f"{name:<24}{speed:>10.2f}{speed / spm[spm_baseline(name)]:>13.3f}x")
    return "\n".join(lines)


def spm_baseline(name: str) -> str:
    """The `tokenizers` measure a SentencePiece-style row is compared with."""
    if name.endswith("decode"):
        return "tokenizers_decode"
    return "tokenizers_encode_lines" if name.endswith("lines") else "tokenizers_encode"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--text", type=Path, default=DEFAULT_TEXT, help="UTF-8 text to encode")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each fast measure")
    args = parser.parse_args(argv)
    if not args.text.is_file():
        print(
            f"no text at {args.text}: pass --text PATH (e.g. Tiny Shakespeare's input.txt)",
            file=sys.stderr,
        )
        return 2
    print(format_table(run(args.text, repeats=args.repeats)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
