"""``lmscope train`` and ``lmscope sample``: runs, resumes, and one-line refusals."""

from __future__ import annotations

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
