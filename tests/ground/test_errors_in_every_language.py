"""A representative error of every lower package (errors, models, engine, train, data,
interpret, explain, tokenizers), raised by the real function with bad input: it is a catalog id
with JSON-safe values, reads as before in English, is Chinese in Chinese (no English words but
names and values), and is all pseudo-text under the pseudo-language (no plain Latin word
outside its values), nested messages included."""

from __future__ import annotations

import re

import pytest

from lmscope import i18n
from lmscope.errors import LmscopeError
from lmscope.i18n import Message


def _tiny_char_gpt():
    from lmscope.engine.transformer import LanguageModel
    from lmscope.models.gpt2 import GPT, GPTConfig
    from lmscope.tokenizers import CharTokenizer

    config = GPTConfig(vocab_size=3, n_ctx=4, n_embd=8, n_layer=1, n_head=2)
    return LanguageModel(GPT(config), CharTokenizer("abc"), "tiny")


def models_config():
    from lmscope.models.gpt2 import GPTConfig

    GPTConfig(n_embd=10, n_head=3)


def models_field():
    from lmscope.models.gpt2 import GPTConfig

    GPTConfig(n_inner="x")


def engine_sampling():
    from lmscope.engine.sampling import SamplingParams

    SamplingParams(top_k=-1)


def engine_step():
    from lmscope.engine.steps import find_step

    find_step("nope")


def engine_prompt_too_long():
    _tiny_char_gpt().encode("abcabc")


def engine_prompt_too_long_cli():
    from lmscope.engine.advice import in_front_words

    try:
        engine_prompt_too_long()
    except LmscopeError as err:
        raise in_front_words(err, "cli", {"truncate"}) from None


def engine_unknown_characters():
    _tiny_char_gpt().encode("abz")


def train_tokenizer():
    from lmscope.train.config import parse_tokenizer_spec

    parse_tokenizer_spec("bpe:3")


def data_corpus():
    from lmscope.data import load_corpus

    load_corpus("no-such-corpus")


def data_batches():
    from lmscope.data import RandomBatches

    RandomBatches(list(range(5)), 1, 5)


def interpret_cell():
    from lmscope.interpret.neurons import parse_cell

    parse_cell("x")


def explain_steps():
    from lmscope.explain.report import chosen_steps

    chosen_steps([])


def tokenizers_chars():
    from lmscope.tokenizers import CharTokenizer

    CharTokenizer("ab").encode("abxyzuvw!")


def minrnn_diverged():
    from lmscope.models.numpy_rnn import _diverged

    raise _diverged(Message("error.minrnn.part.scores-overflowed"), 12, 5.0)


def mistyped_keyword():
    import lmscope

    lmscope.load(dvice="cpu")


# (raise it, the English line, words the Chinese line may keep besides the values)
CASES = {
    "errors": (
        mistyped_keyword,
        "unknown option 'dvice' for load(); did you mean device? (its options: name_or_path, "
        "device, dtype, allow_nonfinite)",
        set(),
    ),
    "models": (models_config, "n_embd (10) must be divisible by n_head (3)", set()),
    "models-field": (
        models_field,
        "the GPT-2 config: n_inner must be a whole number or null, got 'x'",
        {"null"},
    ),
    "engine-sampling": (
        engine_sampling,
        "top_k must be an integer >= 0 (0 or None = off), got -1",
        {"top_k", "None"},
    ),
    "engine-step": (engine_step, None, set()),
    "engine-prompt": (
        engine_prompt_too_long,
        "the prompt is 6 tokens; the model's context is 4. Shorten it or use truncate to keep "
        "the last 4",
        {"token", "truncate"},
    ),
    "engine-prompt-cli": (
        engine_prompt_too_long_cli,
        "the prompt is 6 tokens; the model's context is 4. Shorten it or use --truncate to keep "
        "the last 4",
        {"token", "truncate"},
    ),
    "engine-unknown-characters": (
        engine_unknown_characters,
        "1 character is not in the char vocabulary: 'z'; remove them from the text, or drop "
        "them with model.tokenizer.unknown = 'skip'",
        {"model", "tokenizer", "unknown", "skip"},
    ),
    "train": (
        train_tokenizer,
        "--tokenizer 'bpe:3': the BPE vocabulary size must be a whole number >= 257 "
        "(256 bytes + <|endoftext|>), e.g. bpe:2048",
        {"tokenizer", "BPE", "endoftext", "bpe"},
    ),
    "data-corpus": (data_corpus, None, set()),
    "data-batches": (
        data_batches,
        "context 5 needs at least 6 tokens but the data has 5; use a shorter context or a "
        "bigger corpus.",
        {"context", "token"},
    ),
    "interpret": (
        interpret_cell,
        "--cell 'x': write LAYER:UNIT with whole numbers, e.g. 0:42 (layer 0, unit 42)",
        {"cell", "LAYER", "UNIT"},
    ),
    "explain": (
        explain_steps,
        "steps is empty; name at least one (1-20) or pass None",
        {
            "steps",
            "None",
        },
    ),
    "tokenizers": (
        tokenizers_chars,
        "7 characters are not in the char vocabulary: 'x', 'y', 'z', 'u', 'v' and 2 more; "
        "rebuild it from text that has them, or use unknown='skip'",
        {"unknown", "skip"},
    ),
    "minrnn": (
        minrnn_diverged,
        "the scores overflowed at iteration 12; training stopped. Use a smaller --lr (5 makes "
        "it diverge; the default is 0.1)",
        {"lr"},
    ),
}


def raised(make) -> LmscopeError:
    with pytest.raises(LmscopeError) as caught:
        make()
    return caught.value


def plain_values(values: dict) -> list[str]:
    """Every value shown as it is (text, numbers), nested messages' values included."""
    out = []
    for value in values.values():
        if isinstance(value, Message | LmscopeError):
            out += plain_values(value.values)
        else:
            out.append(str(value))
    return out


def without_values(line: str, err: LmscopeError) -> str:
    for value in sorted(plain_values(err.values), key=len, reverse=True):
        line = line.replace(value, " ")
    return line


@pytest.mark.parametrize("case", CASES)
def test_an_error_is_said_in_every_language(case):
    make, english, names = CASES[case]
    err = raised(make)
    assert err.code is not None and i18n.has(err.code), err.code
    for value in err.values.values():  # what the web API sends as params
        assert isinstance(value, str | int | float | Message | LmscopeError), value
    if english is not None:
        assert err.render("en") == english
    chinese = err.render("zh")
    assert re.search(r"[\u4e00-\u9fff]", chinese) and "\n" not in chinese
    words = set(re.findall(r"[A-Za-z][A-Za-z_]+", without_values(chinese, err)))
    assert words <= names, words
    with i18n.using("pseudo"):
        fake = str(err)
    assert fake.startswith("⟦") and fake.endswith("⟧")
    assert not re.search(r"[A-Za-z]{2,}", without_values(fake, err)), fake


def test_the_tokenizer_and_the_engine_name_the_same_advice():
    """tokenizers/chars.py cannot import the engine: the id is written in both."""
    from lmscope.engine import advice
    from lmscope.tokenizers import chars

    assert chars.UNKNOWN_ADVICE == advice.ADVICE_UNKNOWN_CHARS_TOKENIZER
    from lmscope.models import state

    assert state.NONFINITE_ADVICE == advice.ADVICE_NONFINITE
