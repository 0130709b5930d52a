"""Training faults: kill -9 at every point of a checkpoint save, damaged checkpoint files, and
proof that nothing is ever unpickled.

``test_checkpoints.py`` kills a writer after random delays; here a training run is killed at
each file-system step of its save in turn (and in the middle of each file it writes), in a
subprocess, and every time the previous checkpoint loads and ``--resume`` finishes the run
with bitwise the same weights as a run that was never killed.

Run as a script (``PYTHONPATH=tests python tests/formats/test_faults.py BASE WORKDIR CORPUS``)
this file is that subprocess.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import lmscope
from helpers_train import quiet_train, tiny_settings
from lmscope.errors import LmscopeError
from lmscope.formats import checkpoints

TESTS = Path(__file__).resolve().parents[1]  # the subprocess imports helpers_train from here
SRC = TESTS.parent / "src" / "lmscope"
KILL_AT = 4  # the save this run is killed in; the one before is at 2
ITERS = 6
SURVIVED = 3  # a child's exit code when the kill point lies past the save


def settings(corpus: str, out: str, **changes) -> dict:
    """tiny_settings with dropout (its random masks must resume exactly too), evaluated and
    saved every 2 of its 6 steps."""
    faults = dict(iters=ITERS, eval_every=2, dropout=0.1)
    return tiny_settings(corpus, out, **{**faults, **changes})


# --- the subprocess: one forked child per kill point, forked just before the save ----------


def _arm(kill_at: int) -> None:
    """From now on count file-system steps; SIGKILL this process at step ``kill_at``. Writers
    count twice: killed before writing, and killed with half the file on disk."""
    import pathlib
    import tempfile

    from lmscope.formats import atomic

    count = [0]

    def step(partial=None):
        count[0] += 1
        if count[0] == kill_at:
            if partial is not None:
                partial()
            os.kill(os.getpid(), signal.SIGKILL)

    def halve(path) -> None:
        path = Path(path)
        if path.exists():
            data = path.read_bytes()
            path.write_bytes(data[: len(data) // 2])

    def plain(fn):
        def wrapper(*args, **kwargs):
            step()
            out = fn(*args, **kwargs)
            step()
            return out

        return wrapper

    def writer(fn, target):
        def wrapper(*args, **kwargs):
            step()
            out = fn(*args, **kwargs)
            step(partial=lambda: halve(target(*args, **kwargs)))
            return out

        return wrapper

    checkpoints.save_file = writer(checkpoints.save_file, lambda tensors, name, *a, **k: name)
    pathlib.Path.write_text = writer(pathlib.Path.write_text, lambda self, *a, **k: self)
    pathlib.Path.write_bytes = writer(pathlib.Path.write_bytes, lambda self, *a, **k: self)
    for name in ("replace", "chmod"):
        setattr(os, name, plain(getattr(os, name)))
    # A killed process loses nothing the kernel already holds, so the flush to disk is not
    # what this test is about; the kill points around it stay, the slow disk wait goes.
    os.fsync = plain(lambda fd: None)
    atomic.shutil.rmtree = plain(atomic.shutil.rmtree)
    tempfile.mkdtemp = plain(tempfile.mkdtemp)


def worker(base: Path, workdir: Path, corpus: str, limit: int = 500) -> None:
    """Resume from ``base`` up to the save at KILL_AT, then fork one child per kill point
    1, 2, ... until one survives the save; each child's folder is kept for the test to check.
    Prints the findings as JSON and exits."""
    from lmscope.train import TrainConfig

    torch.set_num_threads(1)  # no thread pools: the process forks after training steps
    live = workdir / "live"
    shutil.copytree(base, live / "run")
    found = []

    def fork_kills(info):
        if info.iteration == KILL_AT + 1:
            os._exit(SURVIVED)  # a child that got here saw the whole save through
        if info.iteration != KILL_AT:
            return
        for kill_at in range(1, limit):
            pid = os.fork()
            if pid == 0:
                _arm(kill_at)
                return  # the child goes on into the save at KILL_AT
            _, status = os.waitpid(pid, 0)
            killed = os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
            code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
            kept = workdir / f"k{kill_at:03d}"
            shutil.copytree(live, kept)  # the run folder and any debris beside it
            shutil.rmtree(live)
            shutil.copytree(base, live / "run")
            found.append({"kill_at": kill_at, "run": str(kept / "run"), "killed": killed})
            found[-1]["exit"] = code
            if not killed:
                break
        print(json.dumps(found), flush=True)
        os._exit(0)

    cfg = TrainConfig(**settings(corpus, str(live / "run")))
    quiet_train(cfg, resume=True, on_step=fork_kills)
    os._exit(1)  # never reached: the parent exits from inside the run


# --- the tests ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A run never killed, and the checkpoint at iteration 2 every killed run starts from."""
    from lmscope.data import load_corpus
    from lmscope.train import TrainConfig

    tmp = tmp_path_factory.mktemp("faults")
    os.environ.setdefault("LMSCOPE_CACHE", str(tmp / "cache"))
    corpus = tmp / "tiny.txt"
    corpus.write_text(load_corpus("shakespeare").text[:12_000], encoding="utf-8")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        whole = quiet_train(TrainConfig(**settings(str(corpus), str(tmp / "whole"))))
        quiet_train(TrainConfig(**settings(str(corpus), str(tmp / "base"), iters=2)))
    finally:
        torch.set_num_threads(threads)
    return tmp, corpus, whole


@pytest.mark.slow
def test_kill_9_at_every_point_of_a_save_then_resume_exactly(runs):
    from lmscope.train import TrainConfig

    tmp, corpus, whole = runs
    env = {**os.environ, "OMP_NUM_THREADS": "1", "LMSCOPE_CACHE": str(tmp / "cache")}
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), *filter(None, [env.get("PYTHONPATH")])])
    cmd = [sys.executable, __file__, str(tmp / "base"), str(tmp / "kills"), str(corpus)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.splitlines()[-1])
    assert found[-1]["exit"] == SURVIVED, found[-1]  # the last point lies past the save
    kills = [f for f in found if f["killed"]]
    assert len(kills) >= 20, f"only {len(kills)} kill points in a save"
    expected = checkpoints.load_checkpoint(tmp / "whole").weights
    landed = {2: 0, 4: 0}
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        for f in kills:
            run = Path(f["run"])
            # the folder always holds a whole checkpoint: the previous one or the new one
            ck = checkpoints.load_checkpoint(run)
            landed[ck.iteration] += 1
            assert ck.iteration in (2, KILL_AT), f
            assert lmscope.load(run).config.n_layer == 1
            assert sorted(p.name for p in run.parent.iterdir()) == ["run"], "debris left"
            resumed = quiet_train(TrainConfig(**settings(str(corpus), str(run))), resume=True)
            assert resumed.losses == whole.losses, f  # bitwise, iteration by iteration
            weights = checkpoints.load_checkpoint(run).weights
            assert all(torch.equal(weights[k], expected[k]) for k in expected), f
    finally:
        torch.set_num_threads(threads)
    assert landed[2] > 0 and landed[KILL_AT] > 0, landed  # kills before and after the swap


DAMAGE = {
    "empty": lambda p: p.write_bytes(b""),
    "half": lambda p: p.write_bytes(p.read_bytes()[: p.stat().st_size // 2]),
    "last byte cut": lambda p: p.write_bytes(p.read_bytes()[:-1]),
    "garbage head": lambda p: p.write_bytes(b"\x93NUMPY\xff" * 9 + p.read_bytes()[63:]),
    "deleted": lambda p: p.unlink(),
}


def _one_line(err: BaseException) -> str:
    text = str(err)
    assert text and "\n" not in text and "Traceback" not in text, repr(text)
    return text


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_every_damaged_file_gives_one_clear_line(runs, tmp_path, damage, capsys):
    from lmscope.cli import main

    base = runs[0] / "base"
    names = sorted(p.name for p in base.iterdir())
    assert {"lmscope.json", "model.safetensors", "trainer.json", "chars.json"} <= set(names)
    for name in names:
        run = tmp_path / name
        shutil.copytree(base, run)
        DAMAGE[damage](run / name)
        for read in (checkpoints.load_checkpoint, lmscope.load):
            try:
                read(run)
            except LmscopeError as err:
                _one_line(err)
        # what a person sees from the command line: status 2 and one line, nothing written
        before = {p.name: p.read_bytes() for p in run.iterdir()}
        code = main(["train", "--resume", "--out", str(run), "--iters", "3"])
        err = capsys.readouterr().err.strip()
        if code != 0:
            assert code == 2 and err.startswith("lmscope: error:") and "\n" not in err, err
            assert {p.name: p.read_bytes() for p in run.iterdir()} == before
        else:  # only damage to something resume does not need may pass (none today)
            pytest.fail(f"resume accepted {damage} {name}")


# --- nothing is unpickled -------------------------------------------------------------------

PICKLING_MODULES = {"pickle", "cPickle", "dill", "joblib", "marshal", "shelve", "cloudpickle"}


def _calls(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = node.func.value
            name = owner.id if isinstance(owner, ast.Name) else ast.unparse(owner)
            yield name, node.func.attr, node


@pytest.mark.slow
def test_no_code_path_unpickles():
    """torch.load only with weights_only=True, no pickle-family loads at all, numpy never
    with allow_pickle; the one `import pickle` is for catching its error class."""
    torch_loads, imports = [], []
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text("utf-8"), str(path))
        where = path.relative_to(SRC)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                mods = [a.name for a in node.names] + [getattr(node, "module", None) or ""]
                if PICKLING_MODULES & {m.split(".")[0] for m in mods}:
                    imports.append(str(where))
        for owner, attr, node in _calls(tree):
            keywords = {k.arg: k.value for k in node.keywords}
            if owner == "torch" and attr == "load":
                flag = keywords.get("weights_only")
                assert isinstance(flag, ast.Constant) and flag.value is True, where
                torch_loads.append(str(where))
            assert not (owner in PICKLING_MODULES and attr in {"load", "loads", "Unpickler"}), (
                f"{where}: {owner}.{attr}"
            )
            assert not (owner == "torch.jit" and attr == "load"), where
            if owner in ("np", "numpy") and attr == "load":
                flag = keywords.get("allow_pickle")
                assert flag is None or (isinstance(flag, ast.Constant) and not flag.value), where
    assert torch_loads == ["formats/weights.py"] and imports == ["formats/weights.py"], (
        torch_loads,
        imports,
    )


def test_a_malicious_legacy_bin_runs_nothing(tmp_path):
    from lmscope.models.gpt2 import GPTConfig

    marker = tmp_path / "pwned"

    class Payload:
        def __reduce__(self):
            return (Path.touch, (marker,))

    config = GPTConfig(vocab_size=50, n_ctx=8, n_embd=8, n_layer=1, n_head=2).to_hf()
    (tmp_path / "config.json").write_text(json.dumps(config))
    torch.save({"transformer.wte.weight": Payload()}, tmp_path / "pytorch_model.bin")
    with pytest.raises(LmscopeError, match="refuses to unpickle") as err:
        lmscope.load(tmp_path)
    _one_line(err.value)
    assert not marker.exists()


if __name__ == "__main__":
    worker(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3])
