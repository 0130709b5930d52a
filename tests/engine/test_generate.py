"""KV-cached generation against Hugging Face generate, and the streaming contract."""

from __future__ import annotations

import pytest
import torch

from lmscope.engine.generation import generate, generate_ids
from lmscope.engine.sampling import SamplingParams
from lmscope.errors import InvalidInputError

GREEDY = SamplingParams(greedy=True)


@pytest.mark.slow
def test_greedy_matches_hf_generate(tiny_model, tiny_hf_reference):
    prompt = tiny_model.encode("Data visualization empowers users to")
    ours = generate_ids(tiny_model, prompt, 40, GREEDY, stop_at_eot=False)
    with torch.no_grad():
        ref = tiny_hf_reference.generate(
            torch.tensor([prompt]),
            max_new_tokens=40,
            do_sample=False,
            pad_token_id=0,
            eos_token_id=None,
        )
    assert ours == ref[0].tolist()


@pytest.mark.slow
def test_greedy_equals_uncached_argmax(tiny_model):
    ids = tiny_model.encode("Hello there")
    got = generate_ids(tiny_model, ids, 10, GREEDY, stop_at_eot=False)
    expected = list(ids)
    for _ in range(10):
        expected.append(int(tiny_model.logits(expected)[-1].argmax()))
    assert got == expected


@pytest.mark.slow
def test_stream_yields_tokens_with_pool_info(tiny_model):
    params = SamplingParams(temperature=0.8, top_k=5)
    tokens = list(generate(tiny_model, "Once upon a time", 6, params, seed=1, stop_at_eot=False))
    assert len(tokens) == 6
    first_pos = len(tiny_model.encode("Once upon a time"))
    for i, tok in enumerate(tokens):
        assert tok.position == first_pos + i
        assert 1 <= tok.pool_size <= 5
        assert 0 < tok.prob <= 1 and 0 < tok.model_prob <= 1
        assert tok.text == tiny_model.tokenizer.piece(tok.id).text


@pytest.mark.slow
def test_seeded_sampling_is_reproducible(tiny_model):
    params = SamplingParams(temperature=1.5, top_p=0.95)
    a = [t.id for t in generate(tiny_model, "abc", 15, params, seed=7, stop_at_eot=False)]
    b = [t.id for t in generate(tiny_model, "abc", 15, params, seed=7, stop_at_eot=False)]
    c = [t.id for t in generate(tiny_model, "abc", 15, params, seed=8, stop_at_eot=False)]
    assert a == b and a != c


@pytest.mark.slow
def test_window_slides_past_the_context(tiny_model):
    ids = list(range(120))  # context is 128
    out = generate_ids(tiny_model, ids, 20, GREEDY, stop_at_eot=False)
    assert len(out) == 140
    # 9 steps fill the context; the 10th (out[129]) is predicted from the last 64 tokens alone,
    # and the next one continues from that window.
    assert out[129] == int(tiny_model.logits(out[129 - 64 : 129])[-1].argmax())
    assert out[130] == int(tiny_model.logits(out[130 - 65 : 130])[-1].argmax())


@pytest.mark.slow
def test_stops_at_end_of_text(tiny_model, monkeypatch):
    eot = tiny_model.tokenizer.eot_id

    def always_eot(logits, params):
        from lmscope.engine.sampling import candidate_pool

        forced = torch.full_like(logits, -1e9)
        forced[eot] = 0.0
        return candidate_pool(forced, params)

    monkeypatch.setattr("lmscope.engine.generation.candidate_pool", always_eot)
    tokens = list(generate(tiny_model, "x", 10, GREEDY))
    assert [t.id for t in tokens] == [eot]


def test_bad_generation_input(tiny_model):
    with pytest.raises(InvalidInputError):
        list(generate(tiny_model, "", 5))
    with pytest.raises(InvalidInputError):
        generate(tiny_model, "x", -1)
    with pytest.raises(InvalidInputError):
        SamplingParams(top_p=0.0)


@pytest.mark.slow
def test_model_method_streams(tiny_model):
    tokens = list(tiny_model.generate("hi", 3, params=GREEDY, stop_at_eot=False))
    assert [t.id for t in tokens] == generate_ids(tiny_model, "hi", 3, GREEDY, stop_at_eot=False)[
        -3:
    ]
