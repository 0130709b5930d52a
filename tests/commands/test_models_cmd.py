"""``lmscope models`` over fake stores (``helpers_stores``): the table, the lines for what
cannot be opened, --json, Chinese; and a store's model opened by name on the command line."""

from __future__ import annotations

import json
import re

import pytest

from helpers_families import save_random, write_family_gguf
from helpers_stores import build_stores, use_stores
from lmscope.cli import main

CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    root = tmp_path_factory.mktemp("stores")
    hf = save_random(root / "qwen3-src", "qwen3")
    qwen3 = write_family_gguf(root / "qwen3.gguf", hf, root / "qwen3-src")
    return build_stores(root, qwen3_gguf=qwen3)


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_the_table_lists_each_model_with_its_facts(stores, monkeypatch, capsys):
    use_stores(monkeypatch, stores)
    code, out, _ = run(capsys, "models", "--lang", "en")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("Models lmscope can open: ")
    assert lines[1].split() == [
        "NAME",
        "(--model)",
        "FAMILY",
        "PARAMETERS",
        "QUANTIZATION",
        "SIZE",
        "FROM",
    ]
    rows = {
        line.split()[0]: line.split()
        for line in lines[2:]
        if line.startswith(("ollama:", "lmstudio:"))
    }
    assert rows["ollama:tiny:q8"][1:] == ["llama", "76K", "Q8_0", "84", "kB", "Ollama"]
    assert rows["ollama:qwen3:0.6b"][1] == "qwen3"
    assert rows["lmstudio:lmstudio-community/Tiny-GGUF"][-2:] == ["LM", "Studio"]
    refused = out[out.index("Models lmscope cannot open: 5") :]
    assert "  ollama:gemma2:2b (gemma2, " in refused and "cannot run the 'gemma2' family" in refused
    assert "ollama pull gone:latest" in refused and "no model layer" in refused
    assert f"Ollama {stores.ollama}" in out  # where it looked


def test_json_has_one_object_per_model(stores, monkeypatch, capsys):
    use_stores(monkeypatch, stores)
    code, out, _ = run(capsys, "models", "--json")
    assert code == 0
    found = {m["name"]: m for m in json.loads(out)}
    tiny = found["ollama:tiny:q8"]
    assert tiny["store"] == "ollama" and tiny["format"] == "gguf" and tiny["opens"] is True
    assert tiny["tensor_types"] == {"Q8_0": 15, "F32": 5}
    assert tiny["size_bytes"] == stores.files["q8"].stat().st_size
    gemma2 = found["ollama:gemma2:2b"]
    assert gemma2["opens"] is False and gemma2["problem_id"] == "error.store.family-cannot-run"
    assert set(tiny) == {
        "name",
        "store",
        "format",
        "family",
        "parameters",
        "quantization",
        "tensor_types",
        "experts",
        "size_bytes",
        "path",
        "opens",
        "problem",
        "problem_id",
    }


def test_a_store_model_opens_on_the_command_line(stores, monkeypatch, capsys):
    use_stores(monkeypatch, stores)
    code, out, err = run(
        capsys, "explain", "--model", "qwen3:0.6b", "hi hi", "--step", "13", "--json"
    )
    assert code == 0, err
    by_name = json.loads(out)
    code, out, _ = run(
        capsys, "explain", "--model", stores.files["qwen3"], "hi hi", "--step", "13", "--json"
    )
    by_path = json.loads(out)
    assert by_path["steps"] == by_name["steps"] and by_name["n_tokens"] == 3


def test_the_listing_and_a_store_error_in_chinese(stores, monkeypatch, capsys):
    use_stores(monkeypatch, stores)
    code, out, _ = run(capsys, "models", "--lang", "zh")
    assert code == 0
    assert out.splitlines()[0].startswith("lmscope 能打开的模型：")
    assert out.splitlines()[1].split()[:2] == ["名字（--model）", "模型族"]
    assert "lmscope 打不开的模型：5 个" in out
    assert "运行不了 'gemma2' 这一族" in out
    code, _, err = run(capsys, "explain", "--model", "ollama:tiny", "hi", "--lang", "zh")
    assert code == 2
    line = err.strip().splitlines()[-1]
    assert line == (
        "lmscope: 错误：Ollama 里没有模型 tiny:latest；最接近的有：ollama:tiny:0.1b, "
        "ollama:tiny:q8, ollama:hf.co/someone/Tiny-GGUF:Q8_0"
    )
    code, _, err = run(capsys, "generate", "--model", "mini", "hi", "--lang", "zh")
    assert code == 2 and "可以指好几个模型" in err and CJK.search(err)
