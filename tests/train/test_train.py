"""The trainer: schedule, optimizer groups, learning, exact resume, stateful models, NaN stops."""

from __future__ import annotations

import copy
import math
from collections import Counter
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import lmscope
from helpers_train import quiet_train, tiny_settings
from lmscope.data import StreamBatches, load_corpus
from lmscope.errors import InvalidInputError
from lmscope.formats import checkpoints
from lmscope.models.gpt2 import GPT, GPTConfig
from lmscope.train import (
    ARCHS,
    GPTAdapter,
    ModelAdapter,
    TrainConfig,
    Trainer,
    TrainingDiverged,
    lr_at,
    make_batches,
    make_optimizer,
    param_groups,
)

pytestmark = pytest.mark.usefixtures("quiet_fast_cpu")


@pytest.fixture
def corpus(shakespeare_file) -> Path:
    return shakespeare_file(12_000)


def tiny(corpus: Path, out: Path, **changes) -> TrainConfig:
    return TrainConfig(**tiny_settings(corpus, out, **changes))


def crash_at(iteration: int):
    """An ``on_step`` hook that stops the run after ``iteration`` steps, as Ctrl-C would."""

    def hook(info):
        if info.iteration == iteration:
            raise KeyboardInterrupt

    return hook


# --- schedule and optimizer ----------------------------------------------------------------------


def test_lr_warms_up_linearly_then_decays_by_cosine_to_min_lr():
    cfg = TrainConfig(lr=1e-3, min_lr=1e-4, warmup=10, iters=110)
    assert lr_at(0, cfg) == pytest.approx(1e-3 / 11)
    assert lr_at(9, cfg) == pytest.approx(1e-3 * 10 / 11)
    assert lr_at(10, cfg) == pytest.approx(1e-3)  # the peak, where the cosine starts
    assert lr_at(60, cfg) == pytest.approx((1e-3 + 1e-4) / 2)  # half way down
    assert lr_at(110, cfg) == pytest.approx(1e-4)
    assert lr_at(500, cfg) == pytest.approx(1e-4)
    decay = [lr_at(i, cfg) for i in range(10, 111)]
    assert all(a >= b for a, b in zip(decay, decay[1:], strict=False))
    assert lr_at(30, TrainConfig(lr=1e-3, min_lr=1e-4, warmup=0, decay_iters=20)) == 1e-4


def test_weight_decay_applies_to_matrices_only():
    model = GPT(GPTConfig(vocab_size=10, n_ctx=8, n_embd=8, n_layer=1, n_head=2))
    decay, no_decay = param_groups(model, 0.1)
    names = {id(p): n for n, p in model.named_parameters()}
    decayed = {names[id(p)] for p in decay["params"]}
    assert decay["weight_decay"] == 0.1 and no_decay["weight_decay"] == 0.0
    assert {"wte.weight", "wpe.weight", "h.0.attn.c_attn.weight", "h.0.mlp.c_fc.weight"} <= decayed
    assert all(p.dim() >= 2 for p in decay["params"])
    assert all(p.dim() < 2 for p in no_decay["params"])
    assert len(decay["params"]) + len(no_decay["params"]) == len(list(model.parameters()))


@pytest.mark.parametrize(
    ("name", "kind"),
    [("adamw", torch.optim.AdamW), ("adam", torch.optim.Adam), ("rmsprop", torch.optim.RMSprop)],
)
def test_optimizer_choice(name, kind):
    model = nn.Linear(3, 3)
    optimizer = make_optimizer(model, TrainConfig(optimizer=name, beta2=0.95), "cpu")
    assert type(optimizer) is kind
    group = optimizer.param_groups[0]
    assert group["weight_decay"] == 0.1 and optimizer.param_groups[1]["weight_decay"] == 0.0
    if name == "rmsprop":
        assert group["alpha"] == 0.95
    else:
        assert group["betas"] == (0.9, 0.95)


def test_gradient_accumulation_averages_the_micro_batches(corpus, tmp_path):
    cfg = tiny(corpus, tmp_path / "out", accum=2, grad_clip=0.0, warmup=0, lr=1e-2, min_lr=1e-2)
    trainer = Trainer(cfg, progress=False, log=lambda text: None)
    trainer._setup()
    reference = copy.deepcopy(trainer.model)
    batches = make_batches("random", trainer.batches.loader.data, 4, 16, cfg.seed)
    optimizer = make_optimizer(reference, cfg, "cpu")
    loss = sum(reference(b.x, b.y)[1] for b in (next(batches), next(batches))) / 2
    loss.backward()
    optimizer.step()

    mean, _ = trainer._step(0)
    assert mean == pytest.approx(loss.item(), abs=1e-6)
    for (name, mine), theirs in zip(
        trainer.model.state_dict().items(), reference.state_dict().values(), strict=True
    ):
        assert torch.allclose(mine, theirs, atol=1e-7), name


# --- a run end to end ---------------------------------------------------------------------------


@pytest.mark.slow
def test_training_lowers_the_loss_and_writes_a_loadable_model(corpus, tmp_path):
    out = tmp_path / "run"
    settings = dict(iters=150, batch=16, dim=32, lr=1e-2, min_lr=1e-3, warmup=5)
    settings.update(eval_every=50, eval_iters=4, sample_every=75)
    result = quiet_train(tiny(corpus, out, **settings))
    assert result.iteration == 150 and len(result.losses) == 150
    assert [e["iteration"] for e in result.evals] == [50, 100, 150]
    # Beating the characters' own frequencies means the model learned to use its context.
    text = corpus.read_text()
    unigram = -sum(n / len(text) * math.log(n / len(text)) for n in Counter(text).values())
    assert result.final_val_loss < unigram - 0.15
    assert sum(result.losses[-10:]) < sum(result.losses[:10]) - 5
    assert len(result.samples) == 2 and all(result.samples)

    model = lmscope.load(out)  # the checkpoint is a model folder
    assert model.tokenizer.name == "char"
    assert model.config.n_layer == 1 and model.config.n_ctx == 16
    assert model.meta["training"]["iteration"] == 150
    assert model.meta["training"]["val_loss"] == result.final_val_loss
    assert len(model.decode([t.id for t in model.generate("Th", 10, seed=0)])) == 10


@pytest.mark.slow
def test_resume_continues_exactly_where_the_run_stopped(corpus, tmp_path):
    # Dropout (torch RNG), accumulation and clipping all take part.
    settings = dict(iters=12, eval_every=4, dropout=0.1, accum=2, grad_clip=0.5)
    whole = quiet_train(tiny(corpus, tmp_path / "whole", **settings))
    cut = tiny(corpus, tmp_path / "cut", **settings)
    with pytest.raises(KeyboardInterrupt):
        quiet_train(cut, on_step=crash_at(6))
    assert checkpoints.checkpoint_iteration(tmp_path / "cut") == 4

    resumed = quiet_train(cut, resume=True)
    assert resumed.start_iteration == 4
    assert resumed.losses == whole.losses  # bitwise, iteration by iteration
    assert resumed.evals == whole.evals
    a = checkpoints.load_checkpoint(tmp_path / "whole").weights
    b = checkpoints.load_checkpoint(tmp_path / "cut").weights
    assert all(torch.equal(a[k], b[k]) for k in a)


@pytest.mark.slow
def test_resume_can_extend_a_finished_run(corpus, tmp_path):
    cfg = tiny(corpus, tmp_path / "run", iters=4)
    quiet_train(cfg)
    longer = quiet_train(cfg.with_overrides(iters=8), resume=True)
    assert longer.start_iteration == 4 and longer.iteration == 8 and len(longer.losses) == 8


@pytest.mark.slow
def test_nan_loss_stops_and_keeps_the_last_good_checkpoint(corpus, tmp_path, monkeypatch):
    class NanAfter(GPTAdapter):
        arch = "gpt-nan"
        steps = 0

        def forward(self, net, x, targets, state):
            logits, loss, state = super().forward(net, x, targets, state)
            if net.training:
                self.steps += 1
                if self.steps > 6:
                    loss = loss * float("nan")
            return logits, loss, state

    monkeypatch.setitem(ARCHS, "gpt-nan", NanAfter())
    out = tmp_path / "run"
    with pytest.raises(TrainingDiverged, match="loss became nan at iteration 7") as err:
        quiet_train(tiny(corpus, out, arch="gpt-nan"))
    assert "last good checkpoint (iteration 4)" in str(err.value)
    assert "--dtype float32" not in str(err.value)  # it already is float32: no such advice
    ck = checkpoints.load_checkpoint(out)
    assert ck.iteration == 4
    assert all(torch.isfinite(t).all() for t in ck.weights.values())


@pytest.mark.slow
def test_bpe_tokenizer_is_trained_once_and_kept_in_the_checkpoint(corpus, tmp_path, monkeypatch):
    out = tmp_path / "run"
    cfg = tiny(corpus, out, tokenizer="bpe:300", iters=4)
    quiet_train(cfg)
    files = {p.name: p.read_bytes() for p in out.glob("*") if p.suffix in (".json", ".bpe")}
    assert "encoder.json" in files and "vocab.bpe" in files

    def no_training(*args, **kwargs):
        raise AssertionError("resume must reuse the saved tokenizer")

    monkeypatch.setattr("lmscope.train.loop.train_bpe", no_training)
    quiet_train(cfg.with_overrides(iters=6), resume=True)
    assert (out / "vocab.bpe").read_bytes() == files["vocab.bpe"]
    assert lmscope.load(out).tokenizer.vocab_size == 300


@pytest.mark.slow
def test_files_added_during_training_survive_every_save(corpus, tmp_path):
    out = tmp_path / "run"
    seen = []

    def add_notes(info):
        if info.iteration == 5:  # between the saves at 4 and 8
            (out / "NOTES.md").write_text("written while it trained")
        if info.iteration == 9:
            seen.append((out / "NOTES.md").read_text())

    quiet_train(tiny(corpus, out, iters=12), on_step=add_notes)
    assert seen == ["written while it trained"]
    assert (out / "NOTES.md").read_text() == "written while it trained"
    assert checkpoints.checkpoint_iteration(out) == 12


@pytest.mark.slow
def test_bfloat16_autocast_trains(corpus, tmp_path):
    result = quiet_train(tiny(corpus, tmp_path / "run", iters=4, dtype="bfloat16"))
    assert all(math.isfinite(x) for x in result.losses)
    assert (
        checkpoints.load_checkpoint(tmp_path / "run").weights["wte.weight"].dtype == torch.float32
    )


# --- a stateful model through the same trainer ---------------------------------------------------


class ToyGRU(nn.Module):
    def __init__(self, vocab_size: int, dim: int):
        super().__init__()
        self.vocab_size, self.dim = vocab_size, dim
        self.embed = nn.Embedding(vocab_size, dim)
        self.rnn = nn.GRU(dim, dim, batch_first=True)
        self.head = nn.Linear(dim, vocab_size)

    def forward(self, x, targets, h):
        out, h = self.rnn(self.embed(x), h)
        logits = self.head(out)
        return logits, F.cross_entropy(logits.flatten(0, 1), targets.flatten()), h


class ToyGRUAdapter(ModelAdapter):
    """What a char-RNN adapter looks like: stateful, streamed, RMSprop-friendly."""

    arch = "toy-gru"
    stateful = True
    default_batches = "stream"

    def __init__(self):
        self.training_resets = 0

    def model_config(self, cfg, vocab_size):
        return {"vocab_size": vocab_size, "dim": cfg.dim}

    def build(self, config):
        return ToyGRU(**config)

    def config_of(self, model):
        return {"vocab_size": model.vocab_size, "dim": model.dim}

    def forward(self, net, x, targets, state):
        assert state is None or state.grad_fn is None, "state must be detached between chunks"
        return net(x, targets, state)

    def initial_state(self, model, batch, device):
        self.training_resets += model.training
        return torch.zeros(1, batch, model.dim, device=device)


@pytest.mark.slow
def test_a_stateful_model_streams_resets_per_epoch_and_resumes_exactly(tmp_path, monkeypatch):
    corpus = tmp_path / "small.txt"
    corpus.write_text(load_corpus("shakespeare").text[:600], encoding="utf-8")
    adapter = ToyGRUAdapter()
    monkeypatch.setitem(ARCHS, "toy-gru", adapter)
    settings = dict(arch="toy-gru", optimizer="rmsprop", beta2=0.95, context=8, iters=40)
    settings.update(eval_every=16, lr=3e-3, min_lr=3e-3, warmup=0, weight_decay=0.0)
    whole = quiet_train(tiny(corpus, tmp_path / "whole", **settings))

    train_ids = len(load_corpus(str(corpus)).split(0.1)[0])  # one char, one token
    chunks = len(StreamBatches(list(range(train_ids)), 4, 8))
    assert adapter.training_resets == math.ceil(40 / chunks) > 1  # once per epoch
    assert sum(whole.losses[-8:]) < sum(whole.losses[:8])

    cut = tiny(corpus, tmp_path / "cut", **settings)
    with pytest.raises(KeyboardInterrupt):
        quiet_train(cut, on_step=crash_at(20))
    ck = checkpoints.load_checkpoint(tmp_path / "cut")
    assert ck.iteration == 16 and ck.carry.shape == (1, 4, 16)  # the hidden state is kept
    resumed = quiet_train(cut, resume=True)
    assert resumed.losses == whole.losses


def test_a_context_whose_activations_cannot_fit_is_refused_before_training(
    corpus, tmp_path, monkeypatch
):
    """--context 100000 passed the memory check (weights only) and then built activations for
    12 x 100,000 tokens for minutes; the check now counts what the backward pass keeps."""
    from lmscope.train import loop

    monkeypatch.setattr(loop, "available_memory", lambda device: 50_000_000)  # 50 MB free
    out = tmp_path / "run"
    # the weights (100,000 positions x 16) are about 26 MB, which fits; the activations of
    # 4 x 100,000 tokens (about 0.8 GB) do not
    with pytest.raises(InvalidInputError) as err:
        quiet_train(tiny(corpus, out, context=100_000))
    message = str(err.value)
    assert "--batch 4 x --context 100000" in message and "activations" in message, message
    assert "use a smaller --context or --batch" in message and "\n" not in message
    assert not out.exists()


@pytest.mark.slow
def test_dropout_on_the_cpu_counts_the_full_attention_weights(corpus, tmp_path, monkeypatch):
    """Fused CPU attention has no dropout: with --dropout the context x context weights are
    kept per head, so a context that fits without dropout may not fit with it."""
    from lmscope.train import loop

    monkeypatch.setattr(loop, "available_memory", lambda device: 100_000_000)  # 100 MB free
    # 4 x 2 heads x 1024^2 weights x 16 bytes is about 134 MB; without dropout about 8 MB
    settings = dict(context=1024, iters=1, eval_every=0)
    assert quiet_train(tiny(corpus, tmp_path / "plain", **settings)).iteration == 1
    with pytest.raises(InvalidInputError, match=r"--dropout 0.1 .*--context x --context"):
        quiet_train(tiny(corpus, tmp_path / "dropout", dropout=0.1, **settings))
