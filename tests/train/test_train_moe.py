"""``lmscope train --arch moe``: a mixture of experts in Mixtral's layout, trained with the
Switch Transformer's load-balancing loss beside the language-modelling loss."""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

import lmscope
from helpers_train import quiet_train, tiny_settings
from lmscope.cli import main
from lmscope.errors import InvalidInputError
from lmscope.formats import checkpoints
from lmscope.models.moe import MoE, MoEConfig
from lmscope.train import ARCHS, TrainConfig
from lmscope.train.balance import BALANCE_WEIGHT, RouterTap, balance_loss

pytestmark = pytest.mark.usefixtures("quiet_fast_cpu")


def tiny_moe() -> MoE:
    torch.manual_seed(0)
    config = MoEConfig(
        vocab_size=20, n_ctx=16, n_embd=16, n_layer=2, n_head=2, n_inner=24, n_expert=4
    )
    return MoE(config).train()


def probes(net: MoE, x: torch.Tensor) -> dict[str, torch.Tensor]:
    """Every router probe of a forward pass (the explainer's own view of the routing)."""
    seen: dict[str, torch.Tensor] = {}

    def hook(name, tensor):
        if "router" in name or "expert" in name:
            seen[name] = tensor
        return tensor

    net(x, hook=hook)
    return seen


# --- the balance loss ------------------------------------------------------------------------


def test_balance_is_one_when_spread_evenly_and_n_expert_when_one_expert_takes_all():
    even = torch.eye(4) * 50  # token i sure of expert i
    assert balance_loss(even, top_k=1).item() == pytest.approx(1.0, abs=1e-6)
    assert balance_loss(even, top_k=2).item() == pytest.approx(1.0, abs=1e-6)
    one = torch.zeros(8, 4)
    one[:, 0] = 50  # every token sure of expert 0
    assert balance_loss(one, top_k=1).item() == pytest.approx(4.0, abs=1e-6)
    half = torch.tensor([[50.0, 0, 0, 0], [0, 50.0, 0, 0]]).repeat(4, 1)  # two of four used
    assert balance_loss(half, top_k=1).item() == pytest.approx(2.0, abs=1e-6)


def test_the_balance_gradient_takes_probability_from_the_busy_expert():
    logits = torch.tensor([[2.0, 0.0, 0.0, 0.0]] * 6 + [[0.0, 2.0, 0.0, 0.0]] * 2)
    logits.requires_grad_(True)
    balance_loss(logits, top_k=1).backward()
    grad = logits.grad.sum(dim=0)  # descent moves each logit against its gradient
    assert grad[0] > 0 > grad[2]  # the busy expert 0 loses, the idle experts gain
    assert grad[0] > grad[1]  # the busier of the two used experts loses more


def test_the_router_tap_sees_the_routers_the_probes_see_and_leaves_no_hook():
    net = tiny_moe()
    x = torch.randint(0, 20, (2, 7))
    with RouterTap(net) as tap:
        net(x)
    assert len(tap.moes) == 2 and len(tap.logits) == 2
    seen = probes(net, x)
    for layer, logits in enumerate(tap.logits):
        torch.testing.assert_close(logits, seen[f"blocks.{layer}.mlp.hook_router_logits"])
    assert all(not m.gate._forward_hooks for m in tap.moes)


# --- the adapter ----------------------------------------------------------------------------


def test_moe_is_a_trainable_arch_and_its_config_is_the_explainers_mixtral():
    adapter = ARCHS["moe"]
    cfg = TrainConfig(arch="moe", layers=3, heads=4, dim=32, context=24, experts=6, experts_used=2)
    config = MoEConfig.from_dict(adapter.model_config(cfg, vocab_size=65))
    assert (config.n_layer, config.n_head, config.n_embd, config.n_ctx) == (3, 4, 32, 24)
    assert (config.n_expert, config.n_expert_used, config.d_expert) == (6, 2, 64)
    assert config.family == "mixtral" and config.tie_word_embeddings and config.vocab_size == 65
    net = adapter.build(adapter.model_config(cfg, 65))
    assert isinstance(net, MoE) and all(net.config.is_sparse(i) for i in range(3))
    assert "6 experts per block, 2 per token" in adapter.describe(cfg)
    # under DDP an expert no token chose has no gradient: DDP is told to look for such
    assert adapter.unused_parameters and not ARCHS["gpt"].unused_parameters


def test_training_adds_the_weighted_balance_loss_and_evaluation_does_not():
    net, adapter = tiny_moe(), ARCHS["moe"]
    torch.manual_seed(1)
    x, y = torch.randint(0, 20, (3, 9)), torch.randint(0, 20, (3, 9))
    _, loss, state = adapter.forward(net, x, y, None)
    assert state is None
    # by hand from the probes: per block, n_expert * sum_e (share of slots to e) * (mean prob)
    seen = probes(net, x)
    logits = net(x)[0]
    lm = F.cross_entropy(logits.reshape(-1, 20), y.reshape(-1))
    balances = []
    for layer in range(2):
        probs = seen[f"blocks.{layer}.mlp.hook_router_probs"].reshape(-1, 4)
        chosen = seen[f"blocks.{layer}.mlp.hook_expert_indices"].reshape(-1)
        share = torch.bincount(chosen, minlength=4).float() / chosen.numel()
        balances.append(4 * (share * probs.mean(0)).sum())
    want = lm + BALANCE_WEIGHT * torch.stack(balances).mean()
    assert loss.item() == pytest.approx(want.item(), abs=1e-6)
    assert loss.item() > lm.item()  # the balance is at least 1, never free
    net.eval()
    _, eval_loss, _ = adapter.forward(net, x, y, None)
    assert eval_loss.item() == pytest.approx(lm.item(), abs=1e-6)


def test_experts_settings_are_checked():
    with pytest.raises(InvalidInputError, match="--experts-used"):
        TrainConfig(arch="moe", experts_used=0).validate()
    with pytest.raises(InvalidInputError, match="--experts"):
        TrainConfig(arch="moe", experts=-1).validate()


def test_experts_flags_on_another_family_are_refused_in_one_line(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["train", "--arch", "gpt", "--experts", "4", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "--experts is a mixture-of-experts setting" in err
    assert "GPT models have no experts" in err and not out.exists()


# --- a run ------------------------------------------------------------------------------------


def crash_at(iteration: int):
    def hook(info):
        if info.iteration == iteration:
            raise KeyboardInterrupt

    return hook


@pytest.mark.slow
def test_a_moe_run_learns_saves_a_loadable_mixtral_and_resumes_exactly(shakespeare_file, tmp_path):
    corpus = shakespeare_file(12_000)
    settings = dict(arch="moe", dim=32, batch=8, iters=60, lr=1e-2, min_lr=1e-3, warmup=5)
    settings.update(eval_every=20, experts=4, experts_used=2, sample_at=[0, 60])
    result = quiet_train(TrainConfig(**tiny_settings(corpus, tmp_path / "run", **settings)))
    text = corpus.read_text()
    unigram = -sum(n / len(text) * math.log(n / len(text)) for n in Counter(text).values())
    assert result.final_val_loss < unigram - 0.1  # it reads its context
    assert [e["iteration"] for e in result.evals] == [20, 40, 60]

    model = lmscope.load(tmp_path / "run")  # the checkpoint is a model folder the explainer runs
    assert isinstance(model.net, MoE) and model.capabilities.family == "mixtral"
    assert model.meta["arch"] == "moe" and model.config.n_expert == 4
    trace = model.trace("First Citizen")
    assert trace["blocks.0.mlp.hook_expert_indices"].shape[-1] == 2
    timeline = json.loads((tmp_path / "run" / "timeline.json").read_text())
    assert [s["iteration"] for s in timeline["samples"]] == [0, 60]

    # stopped after 30 steps (saved at 20) and resumed: the very same losses
    short = dict(settings, iters=30, eval_every=10, sample_at=[])
    whole = quiet_train(TrainConfig(**tiny_settings(corpus, tmp_path / "whole", **short)))
    cut = TrainConfig(**tiny_settings(corpus, tmp_path / "cut", **short))
    with pytest.raises(KeyboardInterrupt):
        quiet_train(cut, on_step=crash_at(25))
    assert checkpoints.checkpoint_iteration(tmp_path / "cut") == 20
    resumed = quiet_train(cut, resume=True)
    assert resumed.losses == whole.losses


def _card_tables(card: str) -> dict[int, dict[str, list[float]]]:
    """The per-layer routing tables a model card quotes: layer -> kind -> shares per expert."""
    tables: dict[int, dict[str, list[float]]] = {}
    layer = None
    for line in card.splitlines():
        if line.startswith("Layer ") and line.endswith(":"):
            layer = int(line[6:-1])
            tables[layer] = {}
        elif layer is not None and line.startswith("| ") and "%" in line:
            cells = [c.strip().strip("*") for c in line.strip("|").split("|")]
            tables[layer][cells[0]] = [float(c.rstrip("%")) / 100 for c in cells[2:]]
    return tables


def test_the_shipped_moe_card_routing_tables_are_measured():
    """The shipped model's card says which characters go to which expert; the tables must be
    what its weights do (here on the first 4,000 validation characters, so within a margin)."""
    import importlib.util

    from lmscope.data import load_corpus

    folder = Path(lmscope.__file__).parent / "assets" / "models" / "shakespeare-moe"
    spec = importlib.util.spec_from_file_location(
        "moe_routing", Path(__file__).parents[2] / "scripts" / "moe_routing.py"
    )
    routing = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(routing)
    card = _card_tables((folder / "MODEL_CARD.md").read_text(encoding="utf-8"))
    model = lmscope.load("shakespeare-moe")
    text = load_corpus("shakespeare").text
    measured = routing.tables(model, text[int(len(text) * 0.9) :][:4000])
    assert set(card) == set(measured) == set(range(model.config.n_layer))
    checked = 0
    for layer, rows in measured.items():
        for kind, (n, shares) in rows.items():
            said = card[layer][kind]
            big = max(range(len(said)), key=said.__getitem__)
            if n >= 100 and said[big] >= 0.6:  # a clear claim: the same expert wins here
                assert max(range(len(shares)), key=shares.__getitem__) == big, (layer, kind)
                assert shares[big] == pytest.approx(said[big], abs=0.15), (layer, kind)
                checked += 1
    assert checked >= 8  # spaces, newlines and punctuation each have an expert, at least
