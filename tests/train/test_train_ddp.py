"""Data-parallel training: two CPU processes under torchrun (gloo) end with the same weights."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap

import pytest

from lmscope.data import load_corpus
from lmscope.formats import checkpoints

WORKER = textwrap.dedent(
    """
    import hashlib, json, os, sys

    from lmscope.formats import checkpoints
    from lmscope.train import TrainConfig, Trainer

    data, out, reports = sys.argv[1:4]
    rank = int(os.environ["RANK"])
    saves = []
    real_save = checkpoints.save_checkpoint

    def counting_save(*args, **kwargs):
        saves.append(kwargs["trainer_state"]["iteration"])
        return real_save(*args, **kwargs)

    checkpoints.save_checkpoint = counting_save
    steps = []
    cfg = TrainConfig(
        data=data, layers=1, heads=2, dim=16, context=16, batch=4, iters=6, warmup=1,
        eval_every=3, eval_iters=2, sample_every=0, out=out, device="cpu",
    )
    trainer = Trainer(
        cfg, progress=False, log=lambda text: None,
        on_step=lambda info: steps.append([info.loss, info.local_loss]),
    )
    trainer.run()
    state = trainer.model.state_dict()
    digest = hashlib.sha256(b"".join(state[k].numpy().tobytes() for k in sorted(state)))
    report = {"hash": digest.hexdigest(), "saves": saves, "steps": steps}
    with open(os.path.join(reports, f"rank{rank}.json"), "w") as f:
        json.dump(report, f)
    """
)


def _weights_hash(state) -> str:
    return hashlib.sha256(b"".join(state[k].numpy().tobytes() for k in sorted(state))).hexdigest()


def run_two_ranks(tmp_path, worker_source: str):
    """``worker_source`` as two gloo processes under torchrun, on a small corpus: (the finished
    torchrun, the run folder, the folder the workers report to)."""
    corpus = tmp_path / "tiny.txt"
    corpus.write_text(load_corpus("shakespeare").text[:8_000], encoding="utf-8")
    worker = tmp_path / "worker.py"
    worker.write_text(worker_source)
    out, reports = tmp_path / "run", tmp_path / "reports"
    reports.mkdir()
    env = dict(os.environ, LMSCOPE_CACHE=str(tmp_path / "cache"), OMP_NUM_THREADS="1")
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone"]
    command += ["--nproc_per_node", "2", str(worker), str(corpus), str(out), str(reports)]
    # minutes: only a hung run takes so long (two processes importing torch on 2 busy cores)
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    return done, out, reports


@pytest.mark.slow
def test_two_gloo_processes_average_gradients_and_only_rank_0_writes(tmp_path):
    done, out, reports = run_two_ranks(tmp_path, WORKER)
    assert done.returncode == 0, done.stderr[-3000:]

    rank0 = json.loads((reports / "rank0.json").read_text())
    rank1 = json.loads((reports / "rank1.json").read_text())
    assert rank0["hash"] == rank1["hash"]  # every step was the same step on both ranks
    assert rank0["saves"] == [0, 3, 6] and rank1["saves"] == []
    # Same weights at step 1 but different losses: each rank drew its own batches...
    (mean0, local0), (mean1, local1) = rank0["steps"][0], rank1["steps"][0]
    assert local0 != local1
    # ...and the loss both report is their average.
    assert mean0 == mean1 == pytest.approx((local0 + local1) / 2, abs=1e-6)

    ck = checkpoints.load_checkpoint(out)
    assert ck.iteration == 6 and ck.trainer["world_size"] == 2
    assert _weights_hash(ck.weights) == rank0["hash"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "cache",
        "reports",
        "run",
        "tiny.txt",
        "worker.py",
    ]


FAILING_SAVE = textwrap.dedent(
    """
    import errno, json, os, sys, time

    from lmscope.cli import main
    from lmscope.formats import checkpoints

    data, out, reports = sys.argv[1:4]
    real_save = checkpoints.save_checkpoint

    def disk_full_at_3(*args, **kwargs):
        if kwargs["trainer_state"]["iteration"] == 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_save(*args, **kwargs)

    checkpoints.save_checkpoint = disk_full_at_3
    argv = ["train", "--data", data, "--layers", "1", "--heads", "2", "--dim", "16"]
    argv += ["--context", "16", "--batch", "4", "--iters", "6", "--warmup", "1"]
    argv += ["--eval-every", "3", "--eval-iters", "1", "--sample-every", "0"]
    argv += ["--device", "cpu", "--out", out, "--no-progress"]
    code = main(argv)
    sys.stderr.flush()
    mine = os.path.join(reports, f"rank{os.environ['RANK']}.json")
    with open(mine + ".part", "w") as f:
        json.dump({"code": code}, f)
    os.replace(mine + ".part", mine)  # whole, or not there
    # torchrun ends the other rank once one fails: neither leaves before both have reported
    # (however long a busy machine takes over it; the deadline only stops a hung run)
    deadline = time.monotonic() + 300
    while not all(os.path.exists(os.path.join(reports, f"rank{r}.json")) for r in (0, 1)):
        if time.monotonic() > deadline:
            break
        time.sleep(0.05)
    sys.exit(code)
    """
)


@pytest.mark.slow
def test_a_checkpoint_rank_0_cannot_write_stops_every_rank_in_one_line(tmp_path):
    """Only rank 0 writes; when that fails (a full disk) every rank must stop at the same
    point with one line, not go on to wait in the next gradient exchange for a rank that left."""
    done, out, reports = run_two_ranks(tmp_path, FAILING_SAVE)
    assert done.returncode != 0
    codes = [json.loads((reports / f"rank{r}.json").read_text())["code"] for r in (0, 1)]
    assert codes == [2, 2], done.stderr[-3000:]
    # two processes share the terminal: their lines may interleave, so count, don't split
    assert done.stderr.count("lmscope: error:") == 2, done.stderr[-3000:]
    assert "No space left on device; the checkpoint of iteration 0 is kept" in done.stderr
    assert "rank 0 could not write the checkpoint of iteration 3" in done.stderr
    # torchrun reports a failed child with its own traceback; none comes from the workers
    frames = [line for line in done.stderr.splitlines() if line.strip().startswith("File ")]
    assert not [f for f in frames if "lmscope" in f or "worker.py" in f], done.stderr[-3000:]
    assert checkpoints.load_checkpoint(out).iteration == 0
