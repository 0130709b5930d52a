"""lmscope circuits induction|patch|attribute from the command line: the --json shapes the
docs promise, the tables in English and Chinese, bad inputs as one line."""

from __future__ import annotations

import json

import pytest

from lmscope.cli import main


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_induction_json_and_table(capsys, tiny_hf_dir):
    code, out, _ = run(
        capsys, "circuits", "induction", "-m", tiny_hf_dir, "--length", 6, "--seed", 2, "--json"
    )
    assert code == 0
    result = json.loads(out)
    assert result["length"] == 6 and len(result["ids"]) == 12
    assert result["ids"][:6] == result["ids"][6:]
    assert [len(row) for row in result["scores"]] == [4, 4]
    assert [len(row) for row in result["previous_token"]] == [4, 4]
    assert len(result["loss"]) == 11
    code, out, _ = run(capsys, "circuits", "induction", "-m", tiny_hf_dir, "--length", 6)
    assert code == 0 and "induction score (layers x heads)" in out and "L1" in out


def test_patch_json_and_table(capsys, tiny_hf_dir):
    argv = ["circuits", "patch", "-m", tiny_hf_dir, "--clean", "The cat sat", "--corrupt"]
    code, out, _ = run(capsys, *argv, "The dog sat", "--right", " on", "--wrong", " down", "--json")
    assert code == 0
    result = json.loads(out)
    assert len(result["clean_ids"]) == len(result["corrupt_ids"]) == 3
    assert isinstance(result["clean_diff"], float) and isinstance(result["corrupt_diff"], float)
    sites = result["sites"]
    assert set(sites) == {"resid_pre", "attn_head", "mlp_out"}
    assert sites["resid_pre"]["rows"] == [0, 1] and sites["resid_pre"]["cols"] == [0, 1, 2]
    assert sites["attn_head"]["cols"] == [0, 1, 2, 3] and sites["mlp_out"]["cols"] == ["all"]
    assert [len(row) for row in sites["resid_pre"]["values"]] == [3, 3]
    # the first token is the same in both prompts: patching it restores nothing
    assert sites["resid_pre"]["values"][0][0] == pytest.approx(0.0, abs=1e-5)
    code, out, _ = run(capsys, *argv, "The dog sat", "--right", " on", "--wrong", " down")
    assert code == 0 and "clean run: logit(' on') - logit(' down')" in out


def test_patch_refuses_prompts_of_different_lengths_in_one_line(capsys, tiny_hf_dir):
    argv = ["circuits", "patch", "-m", tiny_hf_dir, "--clean", "The cat sat"]
    code, out, err = run(
        capsys, *argv, "--corrupt", "The dog sat down", "--right", " on", "--wrong", " x"
    )
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "same token length" in err


def test_attribute_json_adds_up_and_the_table_in_chinese(capsys, tiny_hf_dir):
    argv = ["circuits", "attribute", "The cat sat", "-m", tiny_hf_dir, "--token", " on"]
    code, out, _ = run(capsys, *argv, "--versus", " down", "--json")
    assert code == 0
    result = json.loads(out)
    assert result["position"] == 2 and result["token"]["text"] == " on"
    assert {"embed", "pos_embed", "L0H0", "L1H3", "mlp0", "mlp1"} <= set(result["contributions"])
    total = sum(result["contributions"].values()) + sum(result["remainder"].values())
    assert total == pytest.approx(result["logit"], abs=1e-4)
    code, out, _ = run(capsys, *argv, "--lang", "zh")
    assert code == 0 and "最大的贡献" in out and "线性近似" in out
