"""``lmscope train`` and ``lmscope sample``: runs, resumes, and one-line refusals."""

from __future__ import annotations

import errno
import re
from pathlib import Path

import pytest
import torch

from lmscope.cli import main

pytestmark = pytest.mark.usefixtures("quiet_fast_cpu")
TINY = "--layers 1 --heads 2 --dim 16 --context 16 --batch 4 --iters 4 --eval-every 2"


@pytest.fixture
def corpus(shakespeare_file) -> Path:
    return shakespeare_file(8_000)


def tiny_args(corpus, out, *extra) -> list[str]:
    settings = [*TINY.split(), "--eval-iters", "1", "--sample-every", "0", "--device", "cpu"]
    return ["train", "--data", str(corpus), *settings, "--out", str(out), *extra]


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.mark.slow
def test_train_then_sample(corpus, tmp_path, capsys):
    out = tmp_path / "run"
    assert main(tiny_args(corpus, out)) == 0
    assert "done: 4 iterations, val loss" in capsys.readouterr().out

    assert main(["sample", str(out), "--prompt", "ROMEO:", "--length", "30", "--seed", "3"]) == 0
    first = capsys.readouterr().out
    assert first.startswith("ROMEO:") and len(first) > len("ROMEO:") + 20
    main(["sample", str(out), "--prompt", "ROMEO:", "--length", "30", "--seed", "3"])
    assert capsys.readouterr().out == first  # seeded sampling repeats itself


def test_resume_takes_unset_flags_from_the_checkpoint(corpus, tmp_path, capsys):
    out = tmp_path / "run"
    assert main(tiny_args(corpus, out)) == 0
    assert main(["train", "--resume", "--out", str(out), "--iters", "6", "--no-progress"]) == 0
    assert "done: 6 iterations" in capsys.readouterr().out


def test_help_lists_the_defaults(capsys):
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    text = capsys.readouterr().out
    for expected in ("--context", "(default 64)", "--min-lr", "--resume", "--tokenizer"):
        assert expected in text


def _error(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert err.startswith("lmscope: error:") and "\n" not in err, err
    assert "Traceback" not in err
    return err


@pytest.mark.parametrize(
    ("data", "extra", "message"),
    [
        ("nosuchcorpus", [], "Unknown corpus 'nosuchcorpus'"),
        ("missing.txt", [], "No file or folder"),
        ("empty.txt", [], "is empty"),
        ("binary.bin", [], "looks binary"),
        (None, ["--context", "2000"], "--context 2000 needs at least 2,001 tokens"),
        (None, ["--tokenizer", "bpe:12"], "vocabulary size must be a whole number >= 257"),
        (None, ["--tokenizer", "words"], "unknown --tokenizer 'words'"),
        (None, ["--arch", "mamba"], "unknown --arch 'mamba'"),
        (None, ["--heads", "3"], "n_embd (16) must be divisible by n_head (3)"),
        (None, ["--min-lr", "1"], "--min-lr (1.0) must not exceed --lr"),
        (None, ["--lr", "0"], "--lr must be a number above 0, got 0.0"),
        (None, ["--lr", "-1"], "--lr must be a number above 0, got -1.0"),
        (None, ["--lr", "nan"], "--lr must be a number above 0, got nan"),
        (None, ["--log-every", "-1"], "--log-every must be a whole number >= 0"),
        # a seed past what torch's generator holds was a traceback (OverflowError)
        (None, ["--seed", str(2**70)], "--seed must be between 0 and 2**63-1"),
        (None, ["--seed", "-1"], "--seed must be between 0 and 2**63-1, got -1"),
        # a setting the chosen family does not have was silently ignored
        (None, ["--arch", "lstm", "--heads", "3"], "--heads is a GPT setting; LSTM models have no"),
        (
            None,
            ["--arch", "gpt", "--embed", "8"],
            "--embed is a char-RNN setting; GPT models have no",
        ),
    ],
)
def test_bad_input_is_one_line_and_writes_nothing(corpus, tmp_path, capsys, data, extra, message):
    (tmp_path / "empty.txt").write_text("")
    (tmp_path / "binary.bin").write_bytes(b"\x00\x01\x02" * 100)
    data_path = corpus if data is None else tmp_path / data
    out = tmp_path / "run"
    args = tiny_args(data_path, out, *extra)
    if data == "nosuchcorpus":
        args[args.index("--data") + 1] = "nosuchcorpus"
    assert main(args) == 2
    assert message in _error(capsys)
    assert not out.exists()


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
def test_cuda_without_cuda_is_refused(corpus, tmp_path, capsys):
    args = tiny_args(corpus, tmp_path / "run", "--device", "cuda")
    assert main(args) == 2
    assert "sees no CUDA GPU" in _error(capsys)


def test_out_holding_other_files_is_never_overwritten(corpus, tmp_path, capsys):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "thesis.tex").write_text("years of work")
    assert main(tiny_args(corpus, out)) == 2
    assert "not an lmscope checkpoint; refusing to overwrite" in _error(capsys)
    assert snapshot(out) == {"thesis.tex": b"years of work"}


def test_existing_checkpoint_needs_resume_or_overwrite(corpus, tmp_path, capsys):
    out = tmp_path / "run"
    assert main(tiny_args(corpus, out)) == 0
    capsys.readouterr()
    before = snapshot(out)
    assert main(tiny_args(corpus, out)) == 2
    assert "already holds a checkpoint (iteration 4)" in _error(capsys)
    assert snapshot(out) == before
    assert main(tiny_args(corpus, out, "--overwrite", "--seed", "5")) == 0


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (["--layers", "2"], "cannot resume"),
        (["--batch", "8"], "it was trained with --batch 4"),
        (["--tokenizer", "gpt2"], "--tokenizer"),
    ],
)
def test_incompatible_resume_is_refused(corpus, tmp_path, capsys, change, message):
    out = tmp_path / "run"
    assert main(tiny_args(corpus, out)) == 0
    capsys.readouterr()
    before = snapshot(out)
    assert main(["train", "--resume", "--out", str(out), "--iters", "8", *change]) == 2
    assert message in _error(capsys)
    assert snapshot(out) == before


def test_resume_refuses_a_changed_corpus(corpus, tmp_path, capsys):
    out = tmp_path / "run"
    assert main(tiny_args(corpus, out)) == 0
    capsys.readouterr()
    corpus.write_text(corpus.read_text()[::-1])  # same characters, different text
    assert main(["train", "--resume", "--out", str(out), "--iters", "8"]) == 2
    assert "differs from the one" in _error(capsys)


def test_resume_refuses_a_corrupt_checkpoint(corpus, tmp_path, capsys):
    out = tmp_path / "run"
    assert main(tiny_args(corpus, out)) == 0
    capsys.readouterr()
    (out / "optimizer.safetensors").write_bytes(b"garbage")
    assert main(["train", "--resume", "--out", str(out), "--iters", "8"]) == 2
    assert "cannot read weights from" in _error(capsys)
    assert (out / "optimizer.safetensors").read_bytes() == b"garbage"


def test_resume_without_a_checkpoint_says_so(tmp_path, capsys):
    assert main(["train", "--resume", "--out", str(tmp_path / "none")]) == 2
    assert "holds no lmscope checkpoint to resume" in _error(capsys)


def test_sample_from_a_missing_folder(tmp_path, capsys):
    assert main(["sample", str(tmp_path / "none")]) == 2
    _error(capsys)


def test_a_batch_too_large_for_memory_is_one_line(corpus, tmp_path, capsys, monkeypatch):
    out = tmp_path / "run"
    assert main(tiny_args(corpus, out)) == 0
    before = snapshot(out)
    capsys.readouterr()

    def exhausted(*args, **kwargs):
        # what torch's CPU allocator raises when a batch cannot be allocated
        raise RuntimeError(
            "[enforce fail at alloc_cpu.cpp:117] DefaultCPUAllocator: can't "
            "allocate memory: you tried to allocate 68719476736 bytes."
        )

    monkeypatch.setattr("lmscope.train.train", exhausted)
    assert main(tiny_args(corpus, out, "--overwrite")) == 2
    err = _error(capsys)
    assert "does not fit in memory" in err and "--batch" in err and "kept" in err
    assert snapshot(out) == before

    def other_bug(*args, **kwargs):
        raise RuntimeError("shape mismatch")

    monkeypatch.setattr("lmscope.train.train", other_bug)
    with pytest.raises(RuntimeError, match="shape mismatch"):  # real bugs are not disguised
        main(tiny_args(corpus, out, "--overwrite"))


@pytest.mark.slow
def test_resume_compares_data_paths_after_resolving_them(corpus, tmp_path, capsys, monkeypatch):
    """Issue 16: `--data small.txt` then the same command with --resume was refused ("it was
    trained with --data /abs/path/small.txt": the same file, relative vs absolute)."""
    import shutil

    shutil.copy(corpus, tmp_path / "small.txt")
    monkeypatch.chdir(tmp_path)
    settings = [*TINY.split(), "--eval-iters", "1", "--sample-every", "0", "--device", "cpu"]
    command = ["train", "--data", "small.txt", *settings, "--out", "rr", "--no-progress"]
    assert main(command) == 0
    assert main([*command, "--resume", "--iters", "6"]) == 0
    assert "done: 6 iterations" in capsys.readouterr().out
    # the checkpoint keeps the absolute path, so a resume from elsewhere finds the same file
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    again = ["train", "--data", "../small.txt", "--resume", "--out", "../rr", "--iters", "8"]
    assert main([*again, "--no-progress"]) == 0
    capsys.readouterr()
    # another file is still another corpus
    shutil.copy(corpus, tmp_path / "other.txt")
    assert main(["train", "--data", "../other.txt", "--resume", "--out", "../rr"]) == 2
    assert "it was trained with --data" in _error(capsys)


@pytest.mark.slow
def test_overwrite_and_resume_keep_files_the_user_added(corpus, tmp_path, capsys):
    out = tmp_path / "run"
    assert main(tiny_args(corpus, out)) == 0
    (out / "README.md").write_text("my notes")
    (out / "plots").mkdir()
    (out / "plots" / "a.png").write_bytes(b"p")
    assert main(tiny_args(corpus, out, "--overwrite", "--seed", "5")) == 0
    assert (out / "README.md").read_text() == "my notes"
    assert (out / "plots" / "a.png").read_bytes() == b"p"

    (out / "NOTES.md").write_text("notes")
    assert main(["train", "--resume", "--out", str(out), "--iters", "6", "--no-progress"]) == 0
    assert "done: 6 iterations" in capsys.readouterr().out
    assert (out / "NOTES.md").read_text() == "notes"
    assert (out / "README.md").read_text() == "my notes"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache", "run", "tiny.txt"]


def test_log_every_0_means_no_step_lines(corpus, tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    help_text = capsys.readouterr().out
    assert "0 = never" in help_text.split("\n  --log-every", 1)[1].split("\n  --seed")[0]
    assert main(tiny_args(corpus, tmp_path / "run", "--no-progress", "--log-every", "0")) == 0
    captured = capsys.readouterr()
    assert "done: 4 iterations" in captured.out
    assert "iter 4/4" not in captured.err and "loss" in captured.err  # evaluations still speak


@pytest.mark.parametrize("eps", ["-1", "0", "NaN", '"x"'])
def test_a_bad_layer_norm_eps_in_lmscope_json_is_one_line(corpus, tmp_path, capsys, eps):
    import json
    import re

    out = tmp_path / "run"
    assert main(tiny_args(corpus, out)) == 0
    capsys.readouterr()
    meta = out / "lmscope.json"
    text = re.sub(r'"layer_norm_eps":\s*[^,}\n]*', f'"layer_norm_eps": {eps}', meta.read_text())
    assert json.loads(text)  # still JSON (Python reads NaN), only the value is wrong
    meta.write_text(text)
    assert main(["sample", str(out), "--length", "3"]) == 2
    err = _error(capsys)
    assert "layer_norm_eps" in err and "lmscope.json" in err


@pytest.mark.parametrize(
    "shape", [["--layers", "100000"], ["--dim", "20000", "--layers", "2", "--heads", "4"]]
)
def test_a_model_too_big_for_memory_is_refused_before_it_is_built(corpus, tmp_path, capsys, shape):
    # TINY's --dim 16 would make 100,000 layers small; these shapes need terabytes.
    wide = ["--dim", "8192", "--heads", "4"] if "--dim" not in shape else []
    out = tmp_path / "run"
    assert main(tiny_args(corpus, out, *wide, *shape)) == 2
    err = _error(capsys)
    assert "parameters" in err and "GB" in err and "available" in err
    assert not out.exists()


def test_the_memory_estimate_counts_weights_gradients_and_adam(
    corpus, tmp_path, capsys, monkeypatch
):
    from lmscope.train import loop

    monkeypatch.setattr(loop, "available_memory", lambda device: 1_000_000)  # 1 MB free
    out = tmp_path / "run"
    # 1 layer of width 16 is about 3,800 parameters: 16 bytes each (weights, gradients and
    # two AdamW moments in float32) is about 61 kB, which fits; width 128 (~206,000) does not.
    assert main(tiny_args(corpus, out)) == 0
    capsys.readouterr()
    assert main(tiny_args(corpus, tmp_path / "wide", "--dim", "128")) == 2
    err = _error(capsys)
    assert "1.0 MB" in err and "--dim" in err
    assert not (tmp_path / "wide").exists()


def test_out_that_is_a_file_says_so(corpus, tmp_path, capsys):
    out = tmp_path / "afile.txt"
    out.write_text("mine")
    assert main(tiny_args(corpus, out)) == 2
    assert "afile.txt is a file, not a folder" in _error(capsys)
    assert main(["train", "--resume", "--out", str(out)]) == 2
    assert "afile.txt is a file, not a folder" in _error(capsys)
    assert out.read_text() == "mine"


def test_resume_into_an_unrelated_folder_gives_advice_that_works(corpus, tmp_path, capsys):
    out = tmp_path / "unrelated"
    out.mkdir()
    (out / "thesis.tex").write_text("years of work")
    assert main(["train", "--resume", "--out", str(out)]) == 2
    err = _error(capsys)
    assert "drop --resume" not in err and "another --out" in err
    assert main(["train", "--resume", "--out", str(tmp_path / "new")]) == 2
    assert "drop --resume to start a new run there" in _error(capsys)


def test_the_banner_counts_small_models_exactly(corpus, tmp_path, capsys):
    assert main(tiny_args(corpus, tmp_path / "run", "--no-progress")) == 0
    err = capsys.readouterr().err
    assert "0.00M" not in err and "1 layers" not in err
    assert re.search(r"gpt: [0-9,]+ parameters, 1 layer, 2 heads", err), err


def test_data_help_and_the_missing_corpus_error_list_the_same_corpora(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    in_help = re.search(r"bundled corpus \(([^)]*)\)", help_text).group(1)
    assert main(["train", "--data", "nosuchcorpus", "--out", str(tmp_path / "r")]) == 2
    in_error = re.search(r"use one of: (.*?), or a path", _error(capsys)).group(1)
    assert in_help.split(", ") == in_error.split(", ")
    assert "warpeace-novel" in in_help


def test_ctrl_c_says_one_thing(corpus, tmp_path, capsys, monkeypatch):
    out = tmp_path / "run"
    assert main(tiny_args(corpus, out)) == 0
    capsys.readouterr()

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("lmscope.train.train", interrupted)
    assert main(["train", "--resume", "--out", str(out), "--iters", "8"]) == 130
    err = capsys.readouterr().err.strip()
    assert err.startswith("stopped; the checkpoint in") and "\n" not in err, err


def test_iters_0_on_a_new_run_is_refused_and_writes_nothing(corpus, tmp_path, capsys):
    out = tmp_path / "run"
    assert main(tiny_args(corpus, out, "--iters", "0")) == 2
    assert "--iters 0" in _error(capsys)
    assert not out.exists()


@pytest.mark.slow
def test_a_changed_lr_on_resume_is_announced(corpus, tmp_path, capsys):
    out = tmp_path / "run"
    assert main(tiny_args(corpus, out)) == 0
    capsys.readouterr()
    args = ["train", "--resume", "--out", str(out), "--iters", "6", "--no-progress"]
    assert main([*args, "--lr", "0.002"]) == 0
    assert "learning rate changed from 0.001 to 0.002" in capsys.readouterr().err
    assert main([*args[:-2], "8", "--no-progress"]) == 0
    assert "learning rate changed" not in capsys.readouterr().err


def test_a_char_rnns_short_corpus_names_its_own_flag(corpus, tmp_path, capsys):
    """A char-RNN's chunk length is --seq in its help and README; the error said --context."""
    out = tmp_path / "run"
    args = ["train", "--arch", "gru", "--data", str(corpus), "--seq", "900", "--batch", "4"]
    assert main([*args, "--iters", "2", "--device", "cpu", "--out", str(out)]) == 2
    assert "--seq 900 needs at least" in _error(capsys)
    assert not out.exists()


# --- where the checkpoints cannot be written: one line, the last one kept ---
def _one_line(capsys, after_progress: bool = False) -> str:
    err = capsys.readouterr().err.strip()
    if after_progress:  # the run's own lines come first
        err = err.splitlines()[-1]
    assert err.startswith("lmscope: error:") and "\n" not in err, err
    assert "Traceback" not in err
    return err


def test_an_out_under_a_file_is_refused_before_training(corpus, tmp_path, capsys):
    blocker = tmp_path / "notes.txt"
    blocker.write_text("mine")
    assert main(tiny_args(corpus, blocker / "run")) == 2
    err = _one_line(capsys)
    assert "--out" in err and "notes.txt" in err and "file" in err
    assert blocker.read_text() == "mine"


def test_an_out_that_cannot_be_written_is_refused_before_training(
    corpus, tmp_path, capsys, read_only
):
    read_only(tmp_path)
    assert main(tiny_args(corpus, tmp_path / "run")) == 2
    err = _one_line(capsys)
    assert "cannot write" in err and "Read-only file system" in err
    assert not (tmp_path / "run").exists()


def test_a_save_that_fails_mid_run_keeps_the_last_checkpoint(corpus, tmp_path, capsys, monkeypatch):
    from lmscope.formats import checkpoints

    out = tmp_path / "run"
    real = checkpoints.save_checkpoint
    calls = []

    def disk_fills(*args, **kwargs):
        calls.append(1)
        if len(calls) > 2:  # the folder is claimed, one evaluation's checkpoint is written
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(*args, **kwargs)

    monkeypatch.setattr(checkpoints, "save_checkpoint", disk_fills)
    assert main(tiny_args(corpus, out)) == 2
    err = _one_line(capsys, after_progress=True)
    assert "No space left on device" in err and str(out) in err
    assert "iteration 2" in err and "kept" in err and "--resume" in err
    assert checkpoints.checkpoint_iteration(out) == 2
    monkeypatch.setattr(checkpoints, "save_checkpoint", real)
    assert main(["train", "--resume", "--out", str(out), "--no-progress"]) == 0
    assert "done: 4 iterations" in capsys.readouterr().out
