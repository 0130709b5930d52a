"""Chat templates: a user's message wrapped the way an instruction-tuned model was trained to
read it, special tokens and all, so learners see what the model really receives.

The template is the model's own (GGUF ``tokenizer.chat_template``, or a Hugging Face folder's
``tokenizer_config.json`` or ``chat_template.jinja``: a Jinja2 text), rendered in a sandbox:
a template is data from a file, and must not reach anything but the messages.
"""

from __future__ import annotations

from functools import cache

from jinja2 import TemplateError
from jinja2.sandbox import ImmutableSandboxedEnvironment

from lmscope.errors import InvalidInputError


@cache
def _compile(template: str):
    environment = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    return environment.from_string(template)


def chat_template_of(model) -> str | None:
    return (getattr(model, "meta", None) or {}).get("chat_template")


def apply_chat_template(model, text: str, *, system: str | None = None) -> str:
    """``text`` as one user turn in ``model``'s chat template, ready for the assistant's
    answer (the generation prompt included)."""
    template = chat_template_of(model)
    if not template:
        raise InvalidInputError("error.chat.no-template", name=str(model.name))
    if not isinstance(text, str) or not text:
        raise InvalidInputError("error.prompt.empty")
    messages = ([{"role": "system", "content": system}] if system else []) + [
        {"role": "user", "content": text}
    ]
    try:
        return _compile(template).render(
            messages=messages,
            add_generation_prompt=True,
            bos_token=_special_text(model.tokenizer, "bos_id"),
            eos_token=_special_text(model.tokenizer, "eos_id"),
            raise_exception=_raise,  # templates call it to refuse a conversation
        )
    except TemplateError as err:
        raise InvalidInputError(
            "error.chat.template-failed", name=str(model.name), why=str(err)
        ) from None


def _special_text(tokenizer, which: str) -> str:
    """The text of the tokenizer's bos or eos token, as templates write it ("" if it has
    none): Llama 3's template opens with {{ bos_token }}, and encoding reads it back as that
    one special token."""
    token_id = getattr(tokenizer, which, None)
    return "" if token_id is None else tokenizer.decode([token_id])


def _raise(message: str):
    raise TemplateError(str(message))
