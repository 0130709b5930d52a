"""Llama-family models as Hugging Face publishes them: a hub id brings its tokenizer and chat
template down with the weights, sharded weights load, and a folder's chat template is used.

The hub is a folder here: ``hf_hub_download`` is replaced by a copy from it into a cache
folder, file by file, as the real client fills its snapshot, so a test sees exactly the files
lmscope asked for and nothing else."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch

import lmscope
from helpers_hf import save_random_llama
from lmscope.engine.chat import apply_chat_template
from lmscope.errors import CheckpointError, InvalidInputError
from lmscope.formats import hub

tokenizers = pytest.importorskip("tokenizers")

VOCAB = 320  # 256 bytes, a few merges and the chat markers
TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
TEXT = "The quick brown fox jumps over the lazy dog."


def _train_tokenizer() -> tokenizers.Tokenizer:
    from tokenizers import decoders, models, pre_tokenizers, trainers

    tok = tokenizers.Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB - 3,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator([TEXT * 20, "the lazy fox, the quick dog"], trainer)
    tok.add_special_tokens(["<|endoftext|>", "<|im_start|>", "<|im_end|>"])
    return tok


def _publish(
    repo: Path, *, shard_kb: int | None = None, template_file: bool = False, bos_first=False
) -> dict:
    """A repository as the hub holds it: config, weights (sharded when ``shard_kb``), the
    tokenizer, its config, and the chat template in tokenizer_config.json or its own file."""
    repo.mkdir(parents=True)
    hf = save_random_llama(repo, "qwen2", vocab_size=VOCAB)
    if shard_kb is not None:  # save again, in shards
        for f in repo.glob("model*.safetensors*"):
            f.unlink()
        hf.save_pretrained(repo, safe_serialization=True, max_shard_size=f"{shard_kb}KB")
    tok = _train_tokenizer()
    tok.save(str(repo / "tokenizer.json"))
    config = {"eos_token": "<|im_end|>", "bos_token": "<|endoftext|>" if bos_first else None}
    if template_file:
        (repo / "chat_template.jinja").write_text(TEMPLATE, "utf-8")
    else:
        config["chat_template"] = TEMPLATE
    (repo / "tokenizer_config.json").write_text(json.dumps(config), "utf-8")
    return {"hf": hf, "tokenizer": tok}


@pytest.fixture
def fake_hub(tmp_path, monkeypatch):
    """(remote folder, the (repo, file, local_only) asks): a hub whose repositories are folders
    under remote, downloaded into tmp_path/cache one file at a time."""
    remote, cache, asked = tmp_path / "remote", tmp_path / "cache", []

    def download(repo, filename, local_files_only=False, **_):
        asked.append((repo, filename, local_files_only))
        kept = cache / repo / filename
        if kept.is_file():
            return str(kept)
        source = remote / repo / filename
        if local_files_only or not source.is_file():
            raise FileNotFoundError(f"{repo}/{filename}")  # the client raises its own kinds
        kept.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, kept)
        return str(kept)

    monkeypatch.setattr(hub, "hf_hub_download", download)
    monkeypatch.setattr(hub, "hub_reachable", lambda *a, **k: True)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    return remote, asked


def _logits(model, ids):
    with torch.no_grad():
        return model.net(torch.tensor([ids]))[0][0]


def test_a_llama_family_hub_id_comes_with_its_tokenizer_and_chat_template(fake_hub):
    remote, _ = fake_hub
    published = _publish(remote / "someone/tiny-qwen")
    model = lmscope.load("someone/tiny-qwen")
    assert model.to_ids(TEXT) == published["tokenizer"].encode(TEXT).ids
    with torch.no_grad():
        ref = published["hf"](torch.tensor([model.to_ids(TEXT)])).logits[0]
    assert (_logits(model, model.to_ids(TEXT)) - ref).abs().max() < 1e-4
    wrapped = apply_chat_template(model, "hi")
    assert wrapped == "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
    assert model.to_ids(wrapped)[0] == published["tokenizer"].token_to_id("<|im_start|>")


def test_sharded_weights_come_down_shard_by_shard(fake_hub):
    remote, asked = fake_hub
    published = _publish(remote / "someone/sharded", shard_kb=40, template_file=True)
    shards = sorted(p.name for p in (remote / "someone/sharded").glob("model-*.safetensors"))
    assert len(shards) > 1
    model = lmscope.load("someone/sharded")
    fetched = {name for _, name, local in asked if not local}
    assert set(shards) <= fetched and "chat_template.jinja" in fetched
    ids = model.to_ids(TEXT)
    with torch.no_grad():
        ref = published["hf"](torch.tensor([ids])).logits[0]
    assert (_logits(model, ids) - ref).abs().max() < 1e-4
    assert apply_chat_template(model, "hi").startswith("<|im_start|>user\nhi")


def _cached_by_an_older_lmscope(remote: Path, cache: Path) -> None:
    """someone/tiny-qwen published, and in the cache with its config and weights only."""
    _publish(remote / "someone/tiny-qwen")
    cached = cache / "someone/tiny-qwen"
    cached.mkdir(parents=True)
    for name in ("config.json", "model.safetensors"):
        shutil.copyfile(remote / "someone/tiny-qwen" / name, cached / name)


def test_a_cache_without_the_tokenizer_fetches_it_once_online(fake_hub, tmp_path):
    """A cache filled by an older lmscope holds config and weights only: online, the tokenizer
    is fetched then; the next load is served from the cache alone."""
    remote, asked = fake_hub
    _cached_by_an_older_lmscope(remote, tmp_path / "cache")
    assert lmscope.load("someone/tiny-qwen").tokenizer is not None
    asked.clear()
    lmscope.load("someone/tiny-qwen")
    assert all(local for _, _, local in asked), asked


def test_offline_a_cache_without_the_tokenizer_still_loads_for_token_ids(
    fake_hub, tmp_path, monkeypatch
):
    remote, _ = fake_hub
    _cached_by_an_older_lmscope(remote, tmp_path / "cache")
    shutil.rmtree(remote)
    monkeypatch.setattr(hub, "hub_reachable", lambda *a, **k: False)
    model = lmscope.load("someone/tiny-qwen")
    assert model.tokenizer is None
    assert _logits(model, [1, 2, 3]).shape == (3, VOCAB)


def test_a_folder_is_named_by_its_last_part_and_a_hub_id_as_given(fake_hub, tmp_path):
    """A model opened from a folder on disk was named by its whole path, which the page's
    model menu cut off with an ellipsis; a hub id keeps its name."""
    remote, _ = fake_hub
    _publish(remote / "someone/tiny-qwen")
    assert lmscope.load("someone/tiny-qwen").name == "someone/tiny-qwen"
    folder = tmp_path / "deep" / "down" / "tiny-qwen-copy"
    shutil.copytree(remote / "someone/tiny-qwen", folder)
    for given in (folder, str(folder)):
        assert lmscope.load(given).name == "tiny-qwen-copy"


def test_a_sharded_local_folder_loads(tmp_path):
    published = _publish(tmp_path / "m", shard_kb=40)
    model = lmscope.load(tmp_path / "m")
    ids = model.to_ids(TEXT)
    with torch.no_grad():
        ref = published["hf"](torch.tensor([ids])).logits[0]
    assert (_logits(model, ids) - ref).abs().max() < 1e-4


def _sharded(tmp_path) -> tuple[Path, dict]:
    folder = tmp_path / "m"
    _publish(folder, shard_kb=40)
    index = json.loads((folder / "model.safetensors.index.json").read_text())
    return folder, index


def _rewrite(folder: Path, index: dict) -> None:
    (folder / "model.safetensors.index.json").write_text(json.dumps(index))


def _copy_a_tensor_into_the_last_shard(folder: Path, index: dict) -> None:
    from safetensors.torch import load_file, save_file

    first, *_, last = sorted(set(index["weight_map"].values()))
    merged = {**load_file(folder / last), **dict(list(load_file(folder / first).items())[:1])}
    save_file(merged, folder / last)


@pytest.mark.parametrize(
    ("change", "match"),
    [
        (lambda f, i: (f / sorted(set(i["weight_map"].values()))[-1]).unlink(), "is missing"),
        (
            lambda f, i: _rewrite(f, {"weight_map": {**i["weight_map"], "x": "../x.safetensors"}}),
            "shards are .safetensors files beside it",
        ),
        (lambda f, i: _rewrite(f, {"weight_map": []}), "no weight_map"),
        (
            lambda f, i: _rewrite(
                f,
                {
                    "weight_map": {
                        **i["weight_map"],
                        "extra.weight": next(iter(i["weight_map"].values())),
                    }
                },
            ),
            "lacks it",
        ),
        (lambda f, i: (f / "model.safetensors.index.json").write_text("{"), "not valid JSON"),
        (_copy_a_tensor_into_the_last_shard, "which another shard holds too"),
    ],
    ids=[
        "missing shard",
        "path outside",
        "bad map",
        "tensor not in its shard",
        "corrupt index",
        "tensor in two shards",
    ],
)
def test_a_broken_shard_index_is_one_line(tmp_path, change, match):
    folder, index = _sharded(tmp_path)
    change(folder, index)
    with pytest.raises(CheckpointError, match=match) as err:
        lmscope.load(folder)
    assert "\n" not in str(err.value)


def test_a_folders_chat_template_is_the_models(tmp_path):
    _publish(tmp_path / "m")
    model = lmscope.load(tmp_path / "m")
    assert apply_chat_template(model, "hi").endswith("<|im_start|>assistant\n")


@pytest.mark.slow
def test_a_template_reads_the_bos_token_and_may_refuse(tmp_path):
    """Llama 3's template opens with {{ bos_token }}; Mistral's calls raise_exception to
    refuse a conversation it cannot render: both as Hugging Face renders them."""
    folder = tmp_path / "m"
    published = _publish(folder)
    config = json.loads((folder / "tokenizer_config.json").read_text())
    config["bos_token"] = "<|endoftext|>"
    config["chat_template"] = (
        "{{ bos_token }}{% if messages[0]['content'] == 'no' %}"
        "{{ raise_exception('only yes') }}{% endif %}" + TEMPLATE
    )
    (folder / "tokenizer_config.json").write_text(json.dumps(config))
    model = lmscope.load(folder)
    wrapped = apply_chat_template(model, "hi")
    assert wrapped.startswith("<|endoftext|><|im_start|>user\nhi")
    assert model.to_ids(wrapped)[0] == published["tokenizer"].token_to_id("<|endoftext|>")
    with pytest.raises(InvalidInputError, match="only yes") as err:
        apply_chat_template(model, "no")
    assert "\n" not in str(err.value)


def test_text_opens_with_bos_where_the_tokenizer_adds_it_as_hugging_face_does(tmp_path):
    """Llama 3's tokenizer puts <|begin_of_text|> before every text (its post-processor): the
    model was trained so, and transformers' tokenizer does it. One BOS, never two (a chat
    template writes its own), and truncating keeps it first."""
    from tokenizers import processors

    folder = tmp_path / "m"
    published = _publish(folder, bos_first=True)
    tok, bos = published["tokenizer"], published["tokenizer"].token_to_id("<|endoftext|>")
    tok.post_processor = processors.TemplateProcessing(
        single="<|endoftext|> $A", special_tokens=[("<|endoftext|>", bos)]
    )
    tok.save(str(folder / "tokenizer.json"))
    model = lmscope.load(folder)
    assert model.to_ids(TEXT) == tok.encode(TEXT).ids and model.to_ids(TEXT)[0] == bos
    assert model.to_ids("<|endoftext|>hi") == tok.encode("hi").ids  # not a second one
    long = model.to_ids(TEXT * 20, truncate=True)
    assert len(long) == model.capabilities.context and long[0] == bos
    assert long[1:] == tok.encode(TEXT * 20).ids[-(len(long) - 1) :]


def test_an_exported_copy_keeps_the_chat_template(tmp_path):
    from lmscope.commands.export import export_model

    _publish(tmp_path / "m")
    copy = lmscope.load(export_model(tmp_path / "m", tmp_path / "copy"))
    assert apply_chat_template(copy, "hi") == apply_chat_template(
        lmscope.load(tmp_path / "m"), "hi"
    )


def test_a_hub_id_with_only_sentencepieces_tokenizer_model_loads_with_it(fake_hub):
    """Vicuna and other Llama 2 fine-tunes were uploaded with the slow tokenizer only: a
    tokenizer.model and no tokenizer.json. The hub brings it down (only when tokenizer.json
    is missing) and text reaches the model as SentencePiece cuts it, after <s>."""
    import sentencepiece

    from helpers_spm import train_sentencepiece

    remote, asked = fake_hub
    repo = remote / "someone" / "vicuna-like"
    repo.mkdir(parents=True)
    model_file = train_sentencepiece(repo)
    hf = save_random_llama(repo, "llama", vocab_size=900)
    model = lmscope.load("someone/vicuna-like")
    assert ("someone/vicuna-like", "tokenizer.model", False) in asked
    ids = sentencepiece.SentencePieceProcessor(model_file=str(model_file)).encode(TEXT)
    assert model.to_ids(TEXT) == [1, *ids]
    with torch.no_grad():
        ref = hf(torch.tensor([[1, *ids]])).logits[0]
    assert (_logits(model, [1, *ids]) - ref).abs().max() < 1e-4
    asked.clear()
    lmscope.load("someone/vicuna-like")  # the cache has a tokenizer now: nothing to fetch
    assert all(local for _, _, local in asked), asked
