"""Circuits (induction heads, activation patching, direct logit attribution) against the same
quantities computed from transformers: its eager attention weights, its forward pass with a
hook that replaces the same activation, and the model's own logit."""

from __future__ import annotations

import warnings

import pytest
import torch

from helpers_hf import save_random_llama
from lmscope.errors import InvalidInputError
from lmscope.interpret.circuits import attribute, induction_scores, patch


def _randomized_gpt2(folder):
    """A GPT-2 with every weight random (biases and LayerNorm gains too) and no tokenizer."""
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(1)
    config = GPT2Config(
        vocab_size=101,
        n_positions=64,
        n_embd=32,
        n_layer=2,
        n_head=4,
        bos_token_id=None,
        eos_token_id=None,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hf = GPT2LMHeadModel(config).eval()
    with torch.no_grad():
        for name, p in hf.named_parameters():
            if name.endswith(("ln_1.weight", "ln_2.weight", "ln_f.weight")):
                p.uniform_(0.5, 1.5)
            else:
                p.normal_(0.0, 0.15)
    hf.save_pretrained(folder)
    return hf


@pytest.fixture(scope="module", params=["gpt2", "llama"])
def pair(request, tmp_path_factory):
    """(lmscope's model, transformers' with eager attention) of one random family."""
    import lmscope

    folder = tmp_path_factory.mktemp(request.param)
    if request.param == "gpt2":
        hf = _randomized_gpt2(folder)
    else:
        hf = save_random_llama(folder, "llama", attention_bias=True)
    hf.set_attn_implementation("eager")
    return lmscope.load(folder), hf


def _blocks(hf):
    return hf.transformer.h if hasattr(hf, "transformer") else hf.model.layers


def _out_proj(block):
    return block.attn.c_proj if hasattr(block, "attn") else block.self_attn.o_proj


def _hf_attention(hf, ids) -> torch.Tensor:
    with torch.no_grad():
        out = hf(torch.tensor([ids]), output_attentions=True)
    return torch.stack([a[0] for a in out.attentions])  # [layer, head, query, key]


def _reference_scores(attn: torch.Tensor, start: int, T: int):
    queries = torch.arange(start + T, start + 2 * T)
    return attn[:, :, queries, queries - T + 1].mean(-1), attn[:, :, queries, queries - 1].mean(-1)


def test_induction_scores_are_transformers_attention_weights(pair):
    model, hf = pair
    result = induction_scores(model, length=7, seed=3)
    assert len(result.ids) == 14 and not result.bos
    assert result.ids[:7] == result.ids[7:]
    scores, previous = _reference_scores(_hf_attention(hf, result.ids), 0, 7)
    torch.testing.assert_close(result.scores, scores, atol=1e-5, rtol=0)
    torch.testing.assert_close(result.previous_token, previous, atol=1e-5, rtol=0)
    with torch.no_grad():
        logits = hf(torch.tensor([result.ids])).logits[0, :-1]
    loss = torch.nn.functional.cross_entropy(logits, torch.tensor(result.ids[1:]), reduction="none")
    torch.testing.assert_close(result.loss, loss, atol=1e-4, rtol=0)
    shape = (2, 4)
    payload = result.to_json()
    assert [len(row) for row in payload["scores"]] == [shape[1]] * shape[0]
    assert payload["length"] == 7 and payload["ids"] == result.ids
    assert len(payload["loss"]) == 13


def test_induction_scores_change_with_the_seed_only(pair):
    model, _ = pair
    a, b, c = (induction_scores(model, length=5, seed=s) for s in (0, 0, 1))
    assert a.ids == b.ids and a.ids != c.ids
    torch.testing.assert_close(a.scores, b.scores, atol=0, rtol=0)


def _hf_patched(hf, clean_ids, corrupt_ids, site, layer, index, answers):
    """transformers' logits of ``answers`` on the corrupted prompt with one activation
    replaced by its value in the clean run, by forward hooks."""
    block = _blocks(hf)[layer]
    module, d_head = {
        "resid_pre": (block, None),
        "attn_head": (_out_proj(block), hf.config.hidden_size // hf.config.num_attention_heads),
        "mlp_out": (block.mlp, None),
    }[site]
    kept = {}

    def keep_input(mod, args):
        kept["x"] = args[0].clone()

    def keep_output(mod, args, output):
        kept["x"] = output.clone()

    def put_input(mod, args):
        x = args[0].clone()
        if site == "resid_pre":
            x[:, index] = kept["x"][:, index]
        else:
            part = slice(index * d_head, (index + 1) * d_head)
            x[..., part] = kept["x"][..., part]
        return (x, *args[1:])

    def put_output(mod, args, output):
        return kept["x"]

    on_output = site == "mlp_out"
    with torch.no_grad():
        handle = (
            module.register_forward_hook(keep_output)
            if on_output
            else module.register_forward_pre_hook(keep_input)
        )
        hf(torch.tensor([clean_ids]))
        handle.remove()
        handle = (
            module.register_forward_hook(put_output)
            if on_output
            else module.register_forward_pre_hook(put_input)
        )
        logits = hf(torch.tensor([corrupt_ids])).logits[0, -1]
        handle.remove()
    return logits[answers]


def test_patched_logits_are_transformers_with_a_replacing_hook(pair):
    model, hf = pair
    clean, corrupt = [5, 17, 42, 8, 99, 3], [5, 17, 61, 8, 99, 3]
    result = patch(model, clean, corrupt, 7, 11)
    answers = torch.tensor([7, 11])
    for name, site in result.sites.items():
        assert site.values.shape == (2, len(site.cols))
        for r, layer in enumerate(site.rows):
            for c, col in enumerate(site.cols):
                index = None if col == "all" else col
                expected = _hf_patched(hf, clean, corrupt, name, layer, index, answers)
                got = torch.stack([site.right_logits[r, c], site.wrong_logits[r, c]])
                torch.testing.assert_close(got, expected, atol=1e-4, rtol=0, msg=f"{name} {r} {c}")
    with torch.no_grad():
        ends = [hf(torch.tensor([ids])).logits[0, -1, answers] for ids in (clean, corrupt)]
    assert result.clean_diff == pytest.approx(float(ends[0][0] - ends[0][1]), abs=1e-4)
    assert result.corrupt_diff == pytest.approx(float(ends[1][0] - ends[1][1]), abs=1e-4)
    # patching the stream where the prompts differ, before any layer, restores everything
    assert result.sites["resid_pre"].values[0, 2] == pytest.approx(1.0, abs=1e-4)
    # and where both prompts hold the same token before it, nothing
    assert result.sites["resid_pre"].values[0, 1] == pytest.approx(0.0, abs=1e-4)
    payload = result.to_json()
    assert set(payload["sites"]) == {"resid_pre", "attn_head", "mlp_out"}
    assert payload["sites"]["attn_head"]["cols"] == [0, 1, 2, 3]
    assert payload["clean_ids"] == clean and payload["corrupt_ids"] == corrupt


def test_patching_some_layers_gives_the_same_rows(pair):
    model, _ = pair
    clean, corrupt = [5, 17, 42, 8], [5, 17, 61, 8]
    every, last = (
        patch(model, clean, corrupt, 7, 11),
        patch(model, clean, corrupt, 7, 11, layers=[1]),
    )
    for name in every.sites:
        assert last.sites[name].rows == [1]
        torch.testing.assert_close(last.sites[name].diffs[0], every.sites[name].diffs[1])


def test_a_patched_site_prints_as_its_best_place(pair):
    """``patched.sites["attn_head"]`` printed both grids in full (7,500 characters for
    SmolLM2's 30 layers and 9 heads); the result's own line names each site's best."""
    model, _ = pair
    result = patch(model, [5, 17, 42, 8], [5, 17, 61, 8], 7, 11)
    for name, site in result.sites.items():
        text = repr(site)
        assert len(text) < 200 and "tensor(" not in text and "\n" not in text
        row, col = divmod(int(site.values.argmax()), site.values.shape[1])
        best = f"L{site.rows[row]}/{site.cols[col]} {site.values.max():.2f}"
        assert f"Site({name!r}" in text and best in text
        assert f"{name} best {best}" in repr(result)


@pytest.mark.parametrize("versus", [None, 13])
@pytest.mark.parametrize("position", [-1, 2])
def test_attribution_adds_up_to_the_logit(pair, versus, position):
    model, hf = pair
    ids = [5, 17, 42, 8, 99, 3]
    result = attribute(model, ids, 7, versus, position=position)
    with torch.no_grad():
        logits = hf(torch.tensor([ids])).logits[0, position]
    expected = logits[7] - (logits[versus] if versus is not None else 0.0)
    assert result.logit == pytest.approx(float(expected), abs=1e-4)
    assert result.total == pytest.approx(result.logit, abs=1e-4)
    assert len(result.contributions) == (2 if "pos_embed" in result.contributions else 1) + 2 * 5
    assert result.remainder  # both random models have an output-projection bias
    payload = result.to_json()
    assert payload["position"] == position % len(ids) and payload["token"]["id"] == 7
    assert sum(payload["contributions"].values()) + sum(payload["remainder"].values()) == (
        pytest.approx(payload["logit"], abs=1e-4)
    )


def test_a_head_term_is_its_output_through_the_frozen_norm(pair):
    """One head's term by hand: its output through the final norm with the run's scale."""
    model, _ = pair
    ids = [5, 17, 42, 8]
    result = attribute(model, ids, 7)
    trace = model.trace(ids)
    out = trace["blocks.1.attn.hook_result"][-1, 2]
    if "hook_pos_embed" in trace:
        out = out - out.mean()
    scale = trace["ln_final.hook_scale"][-1]
    w_u = (
        model.net.wte.weight
        if getattr(model.net, "lm_head", None) is None
        else model.net.lm_head.weight
    )
    with torch.no_grad():
        expected = (out / scale * model.net.ln_f.weight) @ w_u[7]
    assert result.contributions["L1H2"] == pytest.approx(float(expected), abs=1e-5)


def _one_line(err: InvalidInputError, code: str) -> None:
    assert err.code == code
    assert "\n" not in str(err) and str(err)


def test_bad_inputs_get_one_line(pair):
    model, _ = pair
    with pytest.raises(InvalidInputError) as err:
        patch(model, [5, 17, 42], [5, 17], 7, 11)
    _one_line(err.value, "error.circuits.lengths-differ")
    with pytest.raises(InvalidInputError) as err:
        patch(model, [5, 17, 42], [5, 17, 43], 7, 11, layers=[2])
    _one_line(err.value, "error.circuits.no-layer")
    with pytest.raises(InvalidInputError) as err:
        patch(model, [5, 17, 42], [5, 17, 43], 7, 7)
    _one_line(err.value, "error.circuits.same-answer")
    with pytest.raises(InvalidInputError) as err:
        patch(model, [5, 17, 42], [5, 17, 42], 7, 11)
    _one_line(err.value, "error.circuits.no-difference")
    with pytest.raises(InvalidInputError) as err:
        attribute(model, [5, 17, 42], "seven")  # no tokenizer: ids only
    _one_line(err.value, "error.circuits.token-needs-id")
    with pytest.raises(InvalidInputError) as err:
        attribute(model, [5, 17, 42], 7, position=3)
    _one_line(err.value, "error.circuits.no-position")
    with pytest.raises(InvalidInputError) as err:
        induction_scores(model, length=40)  # 80 tokens, the context is 64
    _one_line(err.value, "error.circuits.length-too-long")
    with pytest.raises(InvalidInputError) as err:
        induction_scores(model, length=3).pattern(5, 0)
    _one_line(err.value, "error.circuits.no-layer")


def test_an_answer_of_several_tokens_gets_one_line_in_both_languages(tiny_model):
    from lmscope import i18n

    with pytest.raises(InvalidInputError) as err:
        patch(tiny_model, "The cat sat", "The dog sat", " mat", " zxqvbnm")
    _one_line(err.value, "error.circuits.not-one-token")
    assert "zxqvbnm" in str(err.value)
    assert "zxqvbnm" in err.value.render("zh") and "token" in err.value.render("zh")
    result = patch(tiny_model, "The cat sat", "The dog sat", " mat", " on")
    assert result.right_token == " mat" and result.clean_tokens == ["The", " cat", " sat"]
    assert i18n.has("error.circuits.not-one-token")


def test_a_char_rnn_has_no_circuits():
    from lmscope.engine.rnn_model import RNNLanguageModel
    from lmscope.models.rnn import CharRNN, CharRNNConfig

    model = RNNLanguageModel(CharRNN(CharRNNConfig(vocab_size=5, hidden=4, layers=1)))
    with pytest.raises(InvalidInputError) as err:
        induction_scores(model, length=3)
    _one_line(err.value, "error.circuits.no-heads")


# -- SmolLM2 (slow: the real model and transformers' load of the same file) --------------------

CLEAN = "The Eiffel Tower is in the city of"
CORRUPT = "The Colosseum is in the city of"


@pytest.fixture(scope="module")
def eager_smollm2_reference(smollm2_reference):
    """transformers' SmolLM2 with eager attention (it returns the attention weights), set back
    afterwards: the fixture is shared."""
    before = smollm2_reference.config._attn_implementation
    smollm2_reference.set_attn_implementation("eager")
    yield smollm2_reference
    smollm2_reference.set_attn_implementation(before)


def test_smollm2_induction_heads_are_transformers_attention(smollm2, eager_smollm2_reference):
    result = induction_scores(smollm2, length=20, seed=0)
    assert not result.bos  # SmolLM2's tokenizer adds no BOS
    scores, previous = _reference_scores(_hf_attention(eager_smollm2_reference, result.ids), 0, 20)
    torch.testing.assert_close(result.scores, scores, atol=1e-3, rtol=0)
    torch.testing.assert_close(result.previous_token, previous, atol=1e-3, rtol=0)
    first, second = result.copy_losses()
    assert second < first / 2  # the second copy is predicted: induction heads at work
    assert result.scores.max() > 0.5


def test_smollm2_patched_logits_are_transformers_with_a_replacing_hook(
    smollm2, eager_smollm2_reference
):
    hf = eager_smollm2_reference
    clean, corrupt = smollm2.to_ids(CLEAN), smollm2.to_ids(CORRUPT)
    right, wrong = smollm2.tokenizer.encode(" Paris")[0], smollm2.tokenizer.encode(" Rome")[0]
    result = patch(smollm2, CLEAN, CORRUPT, " Paris", " Rome", layers=[3, 20])
    assert result.clean_diff > 0 > result.corrupt_diff
    answers = torch.tensor([right, wrong])
    checked = [("resid_pre", 0, 3), ("resid_pre", 1, 3), ("attn_head", 1, 4), ("mlp_out", 0, 0)]
    for name, r, c in checked:
        site = result.sites[name]
        col = site.cols[c]
        index = None if col == "all" else col
        expected = _hf_patched(hf, clean, corrupt, name, site.rows[r], index, answers)
        got = torch.stack([site.right_logits[r, c], site.wrong_logits[r, c]])
        torch.testing.assert_close(got, expected, atol=1e-3, rtol=0, msg=name)


def test_smollm2_attribution_adds_up_to_the_logit(smollm2):
    for versus in (None, " Rome"):
        result = attribute(smollm2, CLEAN, " Paris", versus)
        assert result.total == pytest.approx(result.logit, abs=1e-4)
        assert not result.remainder  # SmolLM2 has no biases
