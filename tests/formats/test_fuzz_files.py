"""Corrupted model files: weights and configs damaged in every way a disk, a download or a hand
edit can (issue 16). ``lmscope.load`` gives a model that traces a prompt, or lmscope's
one-line error; nothing else escapes, nothing allocates without bound or hangs.

Targets: a Hugging Face GPT-2 folder (config.json + model.safetensors) and an lmscope model
folder (lmscope.json + model.safetensors + a character vocabulary). Damage: bytes overwritten
(0xFF runs are NaN), the file cut short or grown, the safetensors header rewritten (dtypes,
shapes, offsets, its length prefix), config values replaced by any JSON value (huge, negative,
zero, fractional, strings, lists, null), keys dropped, the file replaced by other JSON or by
bytes that are not JSON. ``benchmarks/bench_fuzz.py`` runs these with larger budgets."""

from __future__ import annotations

import json
import shutil
import struct
import tempfile
from functools import cache
from pathlib import Path

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lmscope
from lmscope.errors import LmscopeError

FUZZ = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
CHARS = "abcdefghijklmnopqrstuvwxyz .,\n"
VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.integers(-(2**70), 2**70),
    st.sampled_from([0, 1, 2, 3, 7, 8, 16, 31, 32, 64, 2**31, 2**40, 10**9, -1]),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0.5, 8.0, 1e300, -0.0]),
    st.text(max_size=12),
    st.lists(st.integers(-3, 40), max_size=4),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
)


@cache
def originals() -> dict[str, Path]:
    """The two undamaged folders, made once."""
    from lmscope.engine.loading import save_model
    from lmscope.models.gpt2 import GPT, GPTConfig, gpt2_state_to_hf
    from lmscope.tokenizers import CharTokenizer

    root = Path(tempfile.mkdtemp(prefix="lmscope-fuzz-files-"))
    torch.manual_seed(0)
    config = GPTConfig(vocab_size=len(CHARS), n_ctx=16, n_embd=8, n_layer=2, n_head=2)
    net = GPT(config)
    save_model(net, root / "lmscope", tokenizer=CharTokenizer(CHARS), meta={"name": "tiny"})
    hf = root / "hf"
    hf.mkdir()
    from safetensors.torch import save_file

    state = {k: v.contiguous() for k, v in gpt2_state_to_hf(net).items()}
    save_file(state, str(hf / "model.safetensors"))
    (hf / "config.json").write_text(json.dumps({**config.to_hf(), "model_type": "gpt2"}))
    CharTokenizer(CHARS).save(hf)
    return {"lmscope": root / "lmscope", "hf": root / "hf"}


def survives(folder: Path) -> None:
    """Load and trace, or raise lmscope's one-line error: anything else fails the test."""
    try:
        model = lmscope.load(folder)
        trace = model.trace([1, 2, 3])
        trace.predictions  # noqa: B018 - the per-position readout runs too
    except LmscopeError as err:
        message = str(err)
        assert message and "\n" not in message, message


@st.composite
def damaged_weights(draw, data: bytes) -> bytes:
    header_len = struct.unpack("<Q", data[:8])[0]
    kind = draw(st.sampled_from(["bytes", "nan", "cut", "grow", "header", "prefix"]))
    if kind == "bytes":
        out = bytearray(data)
        for _ in range(draw(st.integers(1, 20))):
            out[draw(st.integers(0, len(out) - 1))] = draw(st.integers(0, 255))
        return bytes(out)
    if kind == "nan":  # 0xFF runs in the data: NaN float32s
        start = draw(st.integers(8 + header_len, len(data) - 1))
        length = draw(st.integers(1, 4000))
        return data[:start] + b"\xff" * length + data[start + length :]
    if kind == "cut":
        return data[: draw(st.integers(0, len(data) - 1))]
    if kind == "grow":
        return data + draw(st.binary(min_size=1, max_size=64))
    if kind == "prefix":
        return struct.pack("<Q", draw(st.integers(0, 2**64 - 1))) + data[8:]
    header = json.loads(data[8 : 8 + header_len])
    names = sorted(k for k in header if k != "__metadata__")
    name = draw(st.sampled_from(names))
    field = draw(st.sampled_from(["dtype", "shape", "data_offsets", None]))
    if field is None:
        del header[name]
    elif field == "dtype":
        header[name]["dtype"] = draw(st.sampled_from(["F16", "BF16", "F64", "I8", "BOOL", "X"]))
    else:
        header[name][field] = draw(st.lists(st.integers(-2, 2**40), max_size=3))
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + data[8 + header_len :]


def _copy(kind: str) -> Path:
    folder = Path(tempfile.mkdtemp(prefix="lmscope-damaged-")) / kind
    shutil.copytree(originals()[kind], folder)
    return folder


@pytest.mark.slow
@FUZZ
@given(data=st.data(), kind=st.sampled_from(["hf", "lmscope"]))
def test_damaged_weights_load_or_are_one_line(data, kind):
    folder = _copy(kind)
    try:
        weights = folder / "model.safetensors"
        weights.write_bytes(data.draw(damaged_weights(weights.read_bytes())))
        survives(folder)
    finally:
        shutil.rmtree(folder.parent, ignore_errors=True)


@st.composite
def damaged_config(draw, config: dict, keys: list[str]) -> bytes:
    kind = draw(st.sampled_from(["value", "value", "value", "drop", "json", "bytes"]))
    if kind == "bytes":
        return draw(st.binary(max_size=40))
    if kind == "json":
        return json.dumps(draw(VALUES)).encode()
    config = json.loads(json.dumps(config))
    target = config["model"] if "model" in config and draw(st.booleans()) else config
    key = draw(st.sampled_from(sorted(set(target) | set(keys))))
    if kind == "drop":
        target.pop(key, None)
    else:
        target[key] = draw(VALUES)
    return json.dumps(config).encode()


HF_KEYS = ["n_embd", "n_layer", "n_head", "n_positions", "vocab_size", "n_inner"]
LMSCOPE_KEYS = ["arch", "format", "name", "model"]


@pytest.mark.slow
@FUZZ
@given(data=st.data(), kind=st.sampled_from(["hf", "lmscope"]))
def test_damaged_configs_load_or_are_one_line(data, kind):
    folder = _copy(kind)
    try:
        path = folder / ("config.json" if kind == "hf" else "lmscope.json")
        config = json.loads(path.read_text())
        keys = HF_KEYS if kind == "hf" else LMSCOPE_KEYS + HF_KEYS
        path.write_bytes(data.draw(damaged_config(config, keys)))
        survives(folder)
    finally:
        shutil.rmtree(folder.parent, ignore_errors=True)
