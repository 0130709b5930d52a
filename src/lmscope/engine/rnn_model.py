"""RNNLanguageModel: a char-RNN/LSTM/GRU plus its tokenizer, with the basics of a GPT's
``LanguageModel``: ``.tokenizer``, ``.name``, ``.info()``, ``.logits(ids) -> [T, V]``,
``.generate(...)`` (streaming ``GeneratedToken``s) and ``.activations(text)`` for every gate.

An RNN has no context window: it reads any length, carrying its hidden state, so nothing is
ever truncated. ``lmscope.load`` returns one of these for folders whose lmscope.json says
"arch": "rnn" | "lstm" | "gru".
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
from safetensors.torch import save_file

from lmscope.engine.sampling import SamplingParams, candidate_pool, make_generator
from lmscope.errors import CheckpointError, InvalidInputError, TokenizerError
from lmscope.formats.weights import LMSCOPE_CONFIG, WEIGHTS_FILE, read_json, read_tensors
from lmscope.models.rnn import CELLS, CharRNN, CharRNNConfig, LayerRecord

ARCH_NAMES = {"rnn": "char-RNN", "lstm": "char-LSTM", "gru": "char-GRU"}


@dataclass
class RNNModelInfo:
    name: str
    source: str
    arch: str  # rnn | lstm | gru
    n_layer: int
    hidden: int
    embed: int  # 0: one-hot input
    dropout: float
    vocab_size: int
    n_params: int
    tokenizer: str | None
    n_ctx: None = None  # no context window: the hidden state carries any length

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class Activations:
    """A stepwise run over one text: logits and every layer's gates, cells and states."""

    ids: list[int]
    pieces: list[str]  # the character at each step
    logits: torch.Tensor  # [T, V]: scores for the character after each step
    layers: list[LayerRecord]  # tensors [T, hidden]
    state: object  # the state after the last step (feed it to continue the text)


class RNNLanguageModel:
    family = "rnn"

    def __init__(
        self,
        net: CharRNN,
        tokenizer=None,
        name: str = "char-rnn",
        source: str = "",
        meta: dict | None = None,
    ):
        self.net = net.eval()
        self.tokenizer = tokenizer
        self.name, self.source, self.meta = name, source, meta or {}

    @property
    def config(self) -> CharRNNConfig:
        return self.net.config

    @property
    def arch(self) -> str:
        return self.config.cell

    @property
    def device(self) -> torch.device:
        return self.net.head.weight.device

    def info(self) -> RNNModelInfo:
        c = self.config
        return RNNModelInfo(
            self.name,
            self.source,
            c.cell,
            c.layers,
            c.hidden,
            c.embed,
            c.dropout,
            c.vocab_size,
            self.net.num_params(),
            getattr(self.tokenizer, "name", None),
        )

    def __repr__(self) -> str:
        c = self.config
        return (
            f"<{ARCH_NAMES[c.cell]} {self.name!r}: {c.layers} x {c.hidden}, vocab {c.vocab_size}>"
        )

    # --- what only a GPT has: say so in one line ------------------------------------------

    def _gpt_only(self, what: str):
        return InvalidInputError(
            f"{self.name} is a {ARCH_NAMES[self.arch]}; {what} needs a GPT. Use "
            ".activations(text) for its gates and states"
        )

    @property
    def gpt(self):
        raise self._gpt_only("this")

    def trace(self, *args, **kwargs):
        raise self._gpt_only("a trace of the 20 steps")

    # --- text <-> ids -----------------------------------------------------------------------

    def _need_tokenizer(self):
        if self.tokenizer is None:
            raise TokenizerError(
                f"model {self.name!r} has no tokenizer files; pass token ids instead of text"
            )
        return self.tokenizer

    def encode(self, text: str, *, skip_unknown: bool = False, **_ignored) -> list[int]:
        """Text to ids. Characters outside the vocabulary raise a TokenizerError naming them,
        or are dropped with ``skip_unknown``. (``truncate``/``room`` are accepted for parity with
        GPTs and ignored: there is no context limit.)"""
        if not isinstance(text, str):
            raise InvalidInputError(f"prompt must be text, got {type(text).__name__}")
        if not text:
            raise InvalidInputError("the prompt is empty; type some text")
        tokenizer = self._need_tokenizer()
        if skip_unknown and getattr(tokenizer, "unknown", None) == "error":
            from lmscope.tokenizers import CharTokenizer

            tokenizer = CharTokenizer(tokenizer.chars, unknown="skip", name=tokenizer.name)
        ids = tokenizer.encode(text)
        if not ids:
            raise InvalidInputError("no character of the prompt is in the model's vocabulary")
        return ids

    def check_ids(self, ids: Sequence[int], **_ignored) -> list[int]:
        ids = [int(i) for i in ids]
        if not ids:
            raise InvalidInputError("the prompt is empty; give at least one token")
        bad = [i for i in ids if not 0 <= i < self.config.vocab_size]
        if bad:
            raise InvalidInputError(
                f"token id {bad[0]} is outside the vocabulary (0..{self.config.vocab_size - 1})"
            )
        return ids

    def to_ids(self, text_or_ids, *, skip_unknown: bool = False, **_ignored) -> list[int]:
        if isinstance(text_or_ids, str):
            return self.encode(text_or_ids, skip_unknown=skip_unknown)
        if isinstance(text_or_ids, torch.Tensor):
            text_or_ids = text_or_ids.flatten().tolist()
        return self.check_ids(text_or_ids)

    def decode(self, ids: Sequence[int]) -> str:
        return self._need_tokenizer().decode(list(ids))

    def pieces(self, ids: Sequence[int]):
        return self.tokenizer.pieces(list(ids)) if self.tokenizer is not None else None

    # --- running ----------------------------------------------------------------------------

    def initial_state(self, batch: int = 1):
        return self.net.initial_state(batch, self.device)

    @torch.no_grad()
    def step(self, ids: Sequence[int], state=None) -> tuple[torch.Tensor, object]:
        """Feed ids after ``state`` (None: the zero state); return (logits [T, V], new state)."""
        idx = torch.tensor([self.check_ids(ids)], device=self.device)
        logits, _, state = self.net(idx, state)
        return logits[0].float(), state

    @torch.no_grad()  # not inference_mode: callers compute freely with the results
    def logits(self, text_or_ids) -> torch.Tensor:
        """Full-vocabulary logits for every position, [T, V], from the zero state."""
        return self.step(self.to_ids(text_or_ids))[0]

    @torch.no_grad()
    def next_token_logits(self, text_or_ids) -> torch.Tensor:
        return self.logits(text_or_ids)[-1]

    @torch.no_grad()
    def activations(self, text_or_ids, state=None, *, skip_unknown: bool = False) -> Activations:
        """Run the stepwise cell over the text: every gate, cell and hidden state, per layer."""
        ids = self.to_ids(text_or_ids, skip_unknown=skip_unknown)
        logits, layers, state = self.net.trace(ids, state)
        pieces = [p.text for p in self.pieces(ids)] if self.tokenizer is not None else []
        return Activations(ids, pieces, logits.float(), layers, state)

    def generate(
        self,
        prompt,
        max_new_tokens: int = 20,
        params: SamplingParams | None = None,
        *,
        seed: int | None = None,
        stop_at_eot: bool = False,
        truncate: bool = False,
        skip_unknown: bool = False,
    ) -> Iterator:
        """Stream sampled tokens (``lmscope.engine.generation.GeneratedToken``): the prompt is read once,
        then each sampled character is fed back in, carrying the hidden state."""
        if max_new_tokens < 0:
            raise InvalidInputError(f"max_new_tokens must be >= 0, got {max_new_tokens}")
        params = params or SamplingParams()
        ids = self.to_ids(prompt, skip_unknown=skip_unknown)
        return self._stream(ids, max_new_tokens, params, make_generator(seed))

    @torch.inference_mode()
    def _stream(self, ids: list[int], max_new: int, params: SamplingParams, generator):
        from lmscope.engine.generation import GeneratedToken

        if max_new == 0:
            return
        logits, state = self.step(ids)
        position = len(ids)
        for n in range(max_new):
            pool = candidate_pool(logits[-1], params)
            token = pool.sample(generator)
            where = (pool.token_ids == token).nonzero()[0, 0]
            piece = self.tokenizer.piece(token).text if self.tokenizer is not None else None
            yield GeneratedToken(
                token,
                piece,
                float(pool.probs[where]),
                float(pool.original_probs[where]),
                len(pool.token_ids),
                position,
            )
            position += 1
            if n + 1 < max_new:
                logits, state = self.step([token], state)


# --- folders ----------------------------------------------------------------------------------


def is_rnn_dir(path: Path) -> bool:
    """True when the folder's lmscope.json names a char-RNN architecture."""
    try:
        return read_json(Path(path) / LMSCOPE_CONFIG).get("arch") in CELLS
    except CheckpointError:
        return False


def load_rnn_dir(directory: str | os.PathLike, *, device: str = "cpu") -> tuple[CharRNN, dict]:
    """Build the CharRNN a model folder (or training checkpoint) holds; float32 weights."""
    directory = Path(directory)
    meta = read_json(directory / LMSCOPE_CONFIG)
    arch = meta.get("arch", "gpt")
    if arch not in CELLS:
        raise CheckpointError(
            f"{directory} holds a {arch!r} model, not a char-RNN ({', '.join(CELLS)})"
        )
    model_config = meta.get("model")
    if not isinstance(model_config, dict) or model_config.get("cell", arch) != arch:
        raise CheckpointError(f"{directory / LMSCOPE_CONFIG} lacks a valid {arch} 'model' entry")
    try:
        config = CharRNNConfig.from_dict(model_config)
    except InvalidInputError as err:
        raise CheckpointError(f"{directory / LMSCOPE_CONFIG}: {err}") from None
    net = CharRNN(config)
    state = read_tensors(directory / WEIGHTS_FILE)
    expected = net.state_dict()
    missing = sorted(set(expected) - set(state))
    unexpected = sorted(set(state) - set(expected))
    if missing or unexpected:
        detail = f"missing {missing[:3]}" if missing else f"unexpected {unexpected[:3]}"
        raise CheckpointError(f"weights in {directory} do not fit its {arch} config: {detail}")
    for key, tensor in state.items():
        if tensor.shape != expected[key].shape:
            raise CheckpointError(
                f"weights in {directory}: {key} has shape {tuple(tensor.shape)}, "
                f"the config implies {tuple(expected[key].shape)}"
            )
    net.load_state_dict({k: v.float() for k, v in state.items()})
    return net.to(device).eval(), meta


def load_rnn(
    directory: str | os.PathLike, *, name: str | None = None, source: str = "", device: str = "cpu"
) -> RNNLanguageModel:
    """An RNNLanguageModel from a folder (see ``lmscope.load`` for names and shipped models)."""
    from lmscope.tokenizers import load_tokenizer

    directory = Path(directory)
    net, meta = load_rnn_dir(directory, device=device)
    try:
        tokenizer = load_tokenizer(directory)
    except TokenizerError:
        if (directory / "chars.json").exists():
            raise
        tokenizer = None
    if tokenizer is not None and tokenizer.vocab_size != net.config.vocab_size:
        raise CheckpointError(
            f"{directory}: the tokenizer has {tokenizer.vocab_size} tokens, the model "
            f"{net.config.vocab_size}; the folder mixes two models"
        )
    display = meta.get("name") or name or directory.name
    return RNNLanguageModel(net, tokenizer, display, source or str(directory), meta)


def save_rnn_dir(
    net: CharRNN,
    tokenizer,
    directory: str | os.PathLike,
    *,
    meta: dict | None = None,
    dtype: torch.dtype = torch.float32,
    extra_files: dict[str, bytes] | None = None,
) -> Path:
    """Write a model folder (lmscope.json, model.safetensors, chars.json, extras) atomically:
    all of it goes into a hidden sibling folder that then replaces ``directory``."""
    directory = Path(directory)
    directory.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{directory.name}.tmp-", dir=directory.parent))
    try:
        state = {k: v.detach().to("cpu", dtype).contiguous() for k, v in net.state_dict().items()}
        save_file(state, str(tmp / WEIGHTS_FILE))
        if tokenizer is not None:
            tokenizer.save(tmp)
        full = {"format": "lmscope", "arch": net.config.cell, "model": net.config.to_dict()}
        full.update(meta or {})
        (tmp / LMSCOPE_CONFIG).write_text(json.dumps(full, indent=2), encoding="utf-8")
        for name, data in (extra_files or {}).items():
            (tmp / name).write_bytes(data)
        _usual_permissions(tmp)
        old = directory.with_name(f".{directory.name}.old-{os.getpid()}")
        if directory.exists():
            os.replace(directory, old)
        os.replace(tmp, directory)
        shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return directory


def _usual_permissions(folder: Path) -> None:
    """mkdtemp (and safetensors) make private files; a model folder gets the umask's usual ones."""
    mask = os.umask(0o022)  # reading the umask means setting it; put it straight back
    os.umask(mask)
    for path in folder.iterdir():
        path.chmod(0o666 & ~mask)
    folder.chmod(0o777 & ~mask)
