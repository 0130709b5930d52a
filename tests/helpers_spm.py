"""SentencePiece-style BPE tokenizers (Llama 2's shape) built here with Hugging Face's
`tokenizers`, as references: trained on a small corpus, with "<unk>", "<s>", "</s>" first,
the 256 byte-fallback tokens "<0x00>".."<0xFF>" next (Llama 2's own layout), then the pieces.

Two spellings of the same tokenizer, as tokenizer.json files carry it: Llama 2's (a Prepend
"▁" + Replace " " normalizer) and newer conversions' (a Metaspace pre-tokenizer)."""

from __future__ import annotations

import io
import json
from pathlib import Path

from tokenizers import (
    Tokenizer,
    decoders,
    models,
    normalizers,
    pre_tokenizers,
    processors,
    trainers,
)

SPACE = "\u2581"
SPECIALS = ["<unk>", "<s>", "</s>"]
BYTES = [f"<0x{b:02X}>" for b in range(256)]

CORPUS = [
    "The quick brown fox jumps over the lazy dog. It's what they'll say, isn't it?",
    "Data visualization empowers users to make informed decisions.",
    "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n",
    "    indented    with    runs     of spaces\tand\ttabs\n\n",
    "12345 and 3.14159, 1,000,000.00 or -42e-3 on 2024-06-01",
    "我爱自然语言处理。数据可视化让用户能够看见。",
    "[INST] What is the capital of France? [/INST] Paris is the capital of France.",
]


def corpus() -> list[str]:
    """The training texts: the lines above, plus Shakespeare from lmscope's own corpus."""
    lines = list(CORPUS)
    shakespeare = Path(__file__).parents[1] / "src/lmscope/assets/corpora/tinyshakespeare"
    lines += (shakespeare / "input.txt").read_text(encoding="utf-8").splitlines()[:4000]
    return lines


def _trained(vocab_size: int) -> tuple[dict[str, int], list[tuple[str, str]]]:
    tok = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    tok.normalizer = normalizers.Sequence(
        [normalizers.Prepend(SPACE), normalizers.Replace(" ", SPACE)]
    )
    # Train word by word, as SentencePiece does (split_by_whitespace), with runs of spaces kept.
    tok.pre_tokenizer = pre_tokenizers.Split(SPACE, behavior="merged_with_next")
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=SPECIALS, limit_alphabet=120, show_progress=False
    )
    tok.train_from_iterator(corpus(), trainer)
    data = json.loads(tok.to_str())
    trained = data["model"]["vocab"]
    pieces = [t for t, _ in sorted(trained.items(), key=lambda item: item[1]) if t not in SPECIALS]
    vocab = {t: i for i, t in enumerate([*SPECIALS, *BYTES, *pieces])}
    merges = [
        tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in data["model"]["merges"]
    ]
    return vocab, merges


def spm_tokenizer(form: str = "normalizer", vocab_size: int = 1200) -> Tokenizer:
    """A Llama-2-shaped tokenizer; form "normalizer" (Llama 2's file) or "metaspace-first",
    "metaspace-always", "metaspace-never", "metaspace-split"."""
    vocab, merges = _trained(vocab_size)
    tok = Tokenizer(models.BPE(vocab, merges, unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    tok.add_special_tokens(SPECIALS)
    steps = [decoders.Replace(SPACE, " "), decoders.ByteFallback(), decoders.Fuse()]
    if form == "normalizer":
        tok.normalizer = normalizers.Sequence(
            [normalizers.Prepend(SPACE), normalizers.Replace(" ", SPACE)]
        )
        steps.append(decoders.Strip(" ", 1, 0))
    else:
        scheme = form.removeprefix("metaspace-")
        split = scheme == "split"
        scheme = "first" if split else scheme
        tok.pre_tokenizer = pre_tokenizers.Metaspace(SPACE, prepend_scheme=scheme, split=split)
        if scheme != "never":
            steps.append(decoders.Strip(" ", 1, 0))
    tok.decoder = decoders.Sequence(steps)
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A", pair="<s> $A <s> $B", special_tokens=[("<s>", 1)]
    )
    return tok


def spm_folder(directory: Path, form: str = "normalizer", *, config: dict | None = None) -> Path:
    """Write ``spm_tokenizer(form)`` as tokenizer.json + tokenizer_config.json in ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    spm_tokenizer(form).save(str(directory / "tokenizer.json"))
    settings = {
        "bos_token": "<s>",
        "eos_token": "</s>",
        "unk_token": "<unk>",
        "add_bos_token": True,
    }
    (directory / "tokenizer_config.json").write_text(json.dumps({**settings, **(config or {})}))
    return directory


def gguf_fields(tok: Tokenizer) -> dict:
    """``tok`` as llama.cpp's converter stores a SentencePiece vocabulary in a GGUF file
    (model "llama"): every token in id order, a score per token (pieces learnt earlier score
    higher; control and byte tokens 0, as Llama 2's file has them) and a type per token."""
    vocab = tok.get_vocab(with_added_tokens=True)
    tokens = [t for t, _ in sorted(vocab.items(), key=lambda item: item[1])]
    kinds = [3 if t in SPECIALS else 6 if t in BYTES else 1 for t in tokens]
    kinds[0] = 2  # <unk>
    scores = [0.0 if kind != 1 else -float(i) for i, kind in enumerate(kinds)]
    return {
        "model": "llama",
        "tokens": tokens,
        "scores": scores,
        "token_type": kinds,
        "bos_token_id": 1,
        "eos_token_id": 2,
        "unknown_token_id": 0,
    }


def add_gguf_fields(writer, fields: dict) -> None:
    """Hand ``gguf_fields`` to a gguf.GGUFWriter, as llama.cpp's converter stores them."""
    writer.add_tokenizer_model(fields["model"])
    writer.add_token_list(fields["tokens"])
    writer.add_token_scores(fields["scores"])
    writer.add_token_types(fields["token_type"])
    writer.add_bos_token_id(fields["bos_token_id"])
    writer.add_eos_token_id(fields["eos_token_id"])
    writer.add_unk_token_id(fields["unknown_token_id"])


def write_gguf_tokenizer(path: Path, fields: dict, **flags) -> Path:
    """A GGUF file holding only a llama model's tokenizer fields (what transformers'
    AutoTokenizer reads with gguf_file=); ``flags``: add_bos_token, add_space_prefix..."""
    import gguf

    writer = gguf.GGUFWriter(str(path), "llama")
    add_gguf_fields(writer, fields)
    for key, value in flags.items():
        writer.add_bool(f"tokenizer.ggml.{key}", value)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def as_sentencepiece_spaces(hf_tokenizer):
    """transformers' tokenizer from a "llama" GGUF, given SentencePiece's own space rule (a "▁"
    before every piece of text, as Llama 2's tokenizer.json and llama.cpp have it) in place of
    the Metaspace "first" rule transformers' GGUF reader builds; returns it."""
    backend = hf_tokenizer.backend_tokenizer
    backend.normalizer = normalizers.Sequence(
        [normalizers.Prepend(SPACE), normalizers.Replace(" ", SPACE)]
    )
    backend.pre_tokenizer = None
    return hf_tokenizer


def train_sentencepiece(folder: Path, **options) -> Path:
    """A SentencePiece model trained on the tests' corpus, saved as folder/tokenizer.model."""
    settings = dict(
        model_type="bpe",
        vocab_size=900,
        byte_fallback=True,
        character_coverage=0.9995,
        normalization_rule_name="identity",
        remove_extra_whitespaces=False,
        allow_whitespace_only_pieces=True,
        split_digits=True,
        minloglevel=2,
    )
    import sentencepiece as spm

    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(corpus()), model_writer=model, **{**settings, **options}
    )
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tokenizer.model").write_bytes(model.getvalue())
    return folder / "tokenizer.model"
