"""lmscope.load: every kind of source, and one clear error for each way it can go wrong."""

from __future__ import annotations

import shutil

import pytest
import torch

import lmscope
from lmscope.engine.loading import save_model
from lmscope.errors import CheckpointError, ModelNotFoundError


def test_load_hf_folder(tiny_model, tiny_hf_dir):
    info = tiny_model.info()
    want = dict(n_layer=2, n_head=4, d_model=64, vocab_size=50257, n_ctx=128)
    assert {key: getattr(info, key) for key in want} == want
    assert info.tokenizer == "gpt2"
    assert info.n_params == sum(p.numel() for p in tiny_model.gpt.parameters())


@pytest.mark.slow
def test_lmscope_checkpoint_round_trip(tiny_model, tmp_path):
    out = tmp_path / "ckpt"
    save_model(tiny_model.gpt, out, meta={"name": "copy"})
    again = lmscope.load(out)
    assert again.name == "copy"
    ids = torch.randint(0, 50257, (1, 12))
    with torch.no_grad():
        assert torch.equal(again.gpt(ids)[0], tiny_model.gpt(ids)[0])
    # float16 on disk: half the size, logits within float16 rounding
    save_model(tiny_model.gpt, tmp_path / "half", dtype=torch.float16)
    half = lmscope.load(tmp_path / "half")
    with torch.no_grad():
        assert (half.gpt(ids)[0] - tiny_model.gpt(ids)[0]).abs().max() < 0.05


def test_save_replaces_atomically(tiny_model, tmp_path):
    out = tmp_path / "ckpt"
    save_model(tiny_model.gpt, out)
    before = (out / "model.safetensors").read_bytes()

    class Boom(Exception):
        pass

    def explode(*_args, **_kwargs):
        raise Boom

    # A failure half-way through writing leaves the previous checkpoint untouched.
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("lmscope.formats.weights.save_file", explode)
        with pytest.raises(Boom):
            save_model(tiny_model.gpt, out)
    assert (out / "model.safetensors").read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["ckpt"]  # no temp folders left behind
    lmscope.load(out)


def test_unknown_model_id():
    with pytest.raises(ModelNotFoundError, match="unknown model 'no-such-model'"):
        lmscope.load("no-such-model")


def test_missing_folder(tmp_path):
    with pytest.raises(ModelNotFoundError):
        lmscope.load(str(tmp_path / "nope" / "deeper"))


def test_folder_without_model(tmp_path):
    with pytest.raises(ModelNotFoundError, match="neither lmscope.json nor config.json"):
        lmscope.load(tmp_path)


def test_folder_without_weights(tmp_path, tiny_hf_dir):
    shutil.copy(tiny_hf_dir / "config.json", tmp_path / "config.json")
    with pytest.raises(CheckpointError, match="no weights file"):
        lmscope.load(tmp_path)


def test_corrupt_weights(tmp_path, tiny_hf_dir):
    shutil.copy(tiny_hf_dir / "config.json", tmp_path / "config.json")
    data = (tiny_hf_dir / "model.safetensors").read_bytes()
    (tmp_path / "model.safetensors").write_bytes(data[: len(data) // 2])  # truncated download
    with pytest.raises(CheckpointError, match="cannot read weights"):
        lmscope.load(tmp_path)
    (tmp_path / "model.safetensors").write_bytes(b"\x00garbage")
    with pytest.raises(CheckpointError, match="cannot read weights"):
        lmscope.load(tmp_path)


def test_corrupt_config(tmp_path, tiny_hf_dir):
    shutil.copytree(tiny_hf_dir, tmp_path / "m")
    (tmp_path / "m" / "config.json").write_text("{not json")
    with pytest.raises(CheckpointError, match="not valid JSON"):
        lmscope.load(tmp_path / "m")


@pytest.mark.parametrize(
    "before, after, message",
    [
        ('"n_layer": 2', '"n_layer": 3', "do not fit"),  # weights that do not fit the config
        ('"gpt2"', '"llama"', "llama"),  # a model type other than GPT-2 in a GPT-2 folder
    ],
    ids=["weights_that_do_not_fit_config", "non_gpt2_model_type"],
)
def test_edited_config_is_refused(tmp_path, tiny_hf_dir, before, after, message):
    shutil.copytree(tiny_hf_dir, tmp_path / "m")
    cfg = (tmp_path / "m" / "config.json").read_text().replace(before, after)
    (tmp_path / "m" / "config.json").write_text(cfg)
    with pytest.raises(CheckpointError, match=message):
        lmscope.load(tmp_path / "m")


def test_legacy_bin_loads_without_pickle(tmp_path, tiny_hf_dir):
    from safetensors.torch import load_file

    shutil.copy(tiny_hf_dir / "config.json", tmp_path / "config.json")
    torch.save(load_file(tiny_hf_dir / "model.safetensors"), tmp_path / "pytorch_model.bin")
    assert lmscope.load(tmp_path).info().n_layer == 2

    class Evil:
        def __reduce__(self):
            return (print, ("pwned",))

    torch.save({"x": Evil()}, tmp_path / "pytorch_model.bin")
    with pytest.raises(CheckpointError):
        lmscope.load(tmp_path)


@pytest.mark.parametrize("name", ["gpt2", "openai-community/gpt2", "distilgpt2"])
def test_hub_offline_is_one_clear_line(name, monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path))  # an empty cache
    with pytest.raises(ModelNotFoundError) as err:
        lmscope.load(name)
    message = str(err.value)
    assert "\n" not in message and "local folder" in message


def test_a_save_killed_between_renames_still_loads(tiny_model, tmp_path, monkeypatch):
    import os

    out = tmp_path / "model"
    save_model(tiny_model.gpt, out, meta={"name": "first"})
    real_replace, calls = os.replace, []

    def dies_on_second_rename(src, dst):
        calls.append(dst)
        if len(calls) == 2:
            raise KeyboardInterrupt  # killed after model -> .model.old
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", dies_on_second_rename)
    with pytest.raises(KeyboardInterrupt):
        save_model(tiny_model.gpt, out, meta={"name": "second"})
    monkeypatch.setattr(os, "replace", real_replace)
    assert not out.exists()
    assert lmscope.load(out).name == "first"  # read from .model.old, nothing moved
    assert (tmp_path / ".model.old").is_dir()
    save_model(tiny_model.gpt, out, meta={"name": "third"})  # the next write recovers
    assert lmscope.load(out).name == "third" and not (tmp_path / ".model.old").exists()


def test_saved_folders_get_normal_permissions(tiny_model, tmp_path):
    out = save_model(tiny_model.gpt, tmp_path / "m")
    assert out.stat().st_mode & 0o777 == 0o777 & ~_umask()
    assert (out / "model.safetensors").stat().st_mode & 0o777 == 0o666 & ~_umask()


def _umask() -> int:
    import os

    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def test_hub_unreachable_fails_at_once_without_retries(monkeypatch, tmp_path):
    """Offline but not told so (no HF_HUB_OFFLINE): one probe, then one line, instead of the hub
    client's retries (they took about 23 s here before). Counted, not timed: the hub client is
    asked only for what its local cache holds, never to download."""
    from huggingface_hub import constants

    from lmscope.formats import hub

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path))  # an empty cache
    monkeypatch.setattr(hub, "HUB_HOST", ("127.0.0.1", 9))  # nothing listens: refused at once
    # huggingface_hub 2.x would fetch its agent registry from the real Hub (see
    # tests/formats/test_hub_offline.py): not lmscope's look
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_TELEMETRY", True)
    asked_local: list[bool] = []
    real_download = hub.hf_hub_download

    def download(repo, filename, **options):
        asked_local.append(options.get("local_files_only", False))
        return real_download(repo, filename, **options)

    monkeypatch.setattr(hub, "hf_hub_download", download)
    with pytest.raises(ModelNotFoundError, match="not reachable") as err:
        lmscope.load("gpt2")
    assert "\n" not in str(err.value)
    assert asked_local and all(asked_local), asked_local  # never a download, with its retries


@pytest.mark.slow
def test_a_mistyped_folder_under_a_local_folder_is_not_sent_to_the_hub(monkeypatch, tmp_path):
    """`runs/int1` has a hub id's shape (owner/name), so a typo in a run's name was looked up on
    the Hugging Face Hub and answered "the Hub is not reachable". When `runs` is a folder here,
    the name is a path: it says the folder is missing and which models `runs` holds."""
    from lmscope.engine import loading

    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs").mkdir()
    save_model(lmscope.load("shakespeare").net, tmp_path / "runs" / "int2")
    (tmp_path / "runs" / "notes").mkdir()  # not a model: not offered
    monkeypatch.setattr(loading, "download_from_hub", lambda name: pytest.fail("went to the hub"))
    with pytest.raises(ModelNotFoundError) as err:
        lmscope.load("runs/int1")
    message = str(err.value)
    assert message == "no such folder: runs/int1 (models in runs: int2)"


def test_char_model_named_like_a_shipped_transformer_reads_the_folder(monkeypatch, tmp_path):
    """`neurons -m shakespeare` with an empty folder `shakespeare` here loaded the shipped
    Shakespeare GPT instead and answered "shakespeare is not a char-RNN/LSTM/GRU": whether the
    folder was read depended on its name. A char view can only mean the folder."""
    from lmscope.engine.loading import ASSET_MODELS, load_char_model

    monkeypatch.chdir(tmp_path)
    for name in ("shakespeare", "smollm2", "somewhere"):
        (tmp_path / name).mkdir()
        with pytest.raises(ModelNotFoundError, match="holds neither lmscope.json nor config.json"):
            load_char_model(name)
    with pytest.raises(ModelNotFoundError, match="holds neither"):
        load_char_model(type(tmp_path)("shakespeare"))  # a Path reads the same
    # a char model in a folder of that name is loaded; the shipped char models keep their names
    shutil.rmtree(tmp_path / "shakespeare")
    shutil.copytree(ASSET_MODELS / "stdlib-lstm", tmp_path / "shakespeare")
    assert load_char_model("shakespeare").capabilities.activations
    (tmp_path / "warpeace-lstm").mkdir()
    assert load_char_model("warpeace-lstm").name == "warpeace-lstm"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_unknown_char_model_is_named_with_the_char_models_there_are(monkeypatch, lang):
    """``lmscope serve --rnn nosuch`` listed smollm2, the shipped GPT and the GPT-2 short names:
    models the char views cannot read."""
    from lmscope.engine.loading import load_char_model, shipped_char_models

    monkeypatch.setenv("LMSCOPE_LANG", lang)
    with pytest.raises(ModelNotFoundError) as err:
        load_char_model("nosuch")
    said = str(err.value)
    assert err.value.code == "error.load.unknown-char-model", said
    assert all(name in said for name in shipped_char_models())
    assert "smollm2" not in said and "gpt2" not in said and "\n" not in said
