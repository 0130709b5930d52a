"""lmscope export: a lean, loadable copy of a model folder."""

from __future__ import annotations

import torch

import lmscope
from lmscope.cli import main


def test_export_float16_round_trip(tmp_path, tiny_hf_dir, tiny_model, capsys):
    out = tmp_path / "exported"
    assert main(["export", str(tiny_hf_dir), str(out), "--dtype", "float16", "--name", "tiny"]) == 0
    again = lmscope.load(out)
    assert again.name == "tiny" and again.tokenizer.encode("hello") == [31373]
    ids = tiny_model.encode("Data visualization empowers users to")
    assert (again.logits(ids) - tiny_model.logits(ids)).abs().max() < 0.05
    weights = out / "model.safetensors"
    assert weights.stat().st_size < (tiny_hf_dir / "model.safetensors").stat().st_size * 0.6
    assert {p.name for p in out.iterdir()} >= {
        "lmscope.json",
        "model.safetensors",
        "encoder.json",
        "vocab.bpe",
    }
    assert main(["export", str(out), str(out)]) == 2
    assert "different output folder" in capsys.readouterr().err
    assert torch.get_default_dtype() == torch.float32
