"""lmscope circuits induction|patch|attribute from the command line: the --json shapes the
docs promise, the tables in English and Chinese, bad inputs as one line."""

from __future__ import annotations

import json
import re

import pytest
from rich.cells import cell_len

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


# --- grids wider than the terminal ------------------------------------------------------------
@pytest.fixture(scope="module")
def twelve_heads(tmp_path_factory):
    """GPT-2 small's 12 heads on a tiny width: its grids are wider than 80 columns."""
    from tests.helpers_hf import save_random_hf_gpt2

    return save_random_hf_gpt2(tmp_path_factory.mktemp("twelve-heads"), n_embd=48, n_head=12)


def _grid_rows(out: str, label: str) -> list[str]:
    """Every cell of the rows labelled ``label`` (``L1``), across however many tables the grid
    was split into, in order."""
    cells = []
    for line in out.splitlines():
        parts = [p for p in re.split(r"[│┃\s]+", line) if p]
        if parts[:1] == [label]:
            cells += parts[1:]
    return cells


@pytest.mark.parametrize("columns", [80, 60])
def test_a_grid_wider_than_the_terminal_is_split_and_every_number_shown_whole(
    columns, capsys, monkeypatch, twelve_heads
):
    monkeypatch.setenv("COLUMNS", str(columns))
    prompt = "one two three four five six seven eight nine ten eleven twelve"
    m = ["-m", twelve_heads]
    cases = {
        "attribute": (["circuits", "attribute", prompt, *m, "--token", " on"], "L1"),
        "induction": (["circuits", "induction", *m, "--length", 8], "L1"),
        "patch": (
            [*["circuits", "patch", *m, "--clean", prompt, "--corrupt"], prompt.upper()]
            + ["--right", " on", "--wrong", " off"],
            "L1",
        ),
    }
    for name, (argv, label) in cases.items():
        if name == "patch":  # the same token length, or patch refuses
            argv[argv.index(prompt.upper())] = prompt.replace("one", "two")
        code, out, _ = run(capsys, *argv)
        assert code == 0, name
        assert max(cell_len(line) for line in out.splitlines()) <= columns, name
        assert not re.search(r"\d…|…\d|\.…", out), name  # no number cut short
        _, raw, _ = run(capsys, *argv, "--json")
        result = json.loads(raw)
        if name == "attribute":
            expected = [f"{v:+.2f}" for v in result["heads"][1]] + [f"{result['mlps'][1]:+.2f}"]
        elif name == "induction":
            expected = [f"{v:.2f}" for v in result["scores"][1]]
            expected += [f"{v:.2f}" for v in result["previous_token"][1]]
        else:
            sites = result["sites"]
            expected = [f"{v:.2f}" for v in sites["resid_pre"]["values"][1]]
            expected += [f"{v:.2f}" for v in sites["attn_head"]["values"][1]]
            expected += [f"{v:.2f}" for v in sites["mlp_out"]["values"][1]]
        assert _grid_rows(out, label) == expected, name


def test_an_answer_that_is_not_one_token_is_named_by_its_option(capsys, tiny_hf_dir):
    """The library names the argument (right); the command line's reader typed --right."""
    argv = ["circuits", "patch", "-m", tiny_hf_dir, "--clean", "The cat sat"]
    code, out, err = run(
        capsys, *argv, "--corrupt", "The dog sat", "--right", " on it", "--wrong", " x"
    )
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "--right ' on it' is 2 tokens" in err, err
    argv = ["circuits", "attribute", "The cat sat", "-m", tiny_hf_dir, "--token", " on"]
    code, _, err = run(capsys, *argv, "--versus", " up it", "--lang", "zh")
    assert code == 2 and "--versus ' up it' 被切成了 2 个 token" in err, err
