"""LanguageModel: a GPT plus its tokenizer, and the one ``load`` that finds either anywhere.

This is the object the CLI, the web app and notebooks hold: it turns text into ids (with
readable errors for empty or over-long prompts), runs traces and hands out next-token logits.
The network itself (``models.gpt.GPT``) knows nothing of text.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import torch

from lmscope.engine.trace import Predictions, Recorder, Trace
from lmscope.errors import InvalidInputError, ModelNotFoundError, TokenizerError
from lmscope.formats.atomic import readable
from lmscope.formats.weights import (
    HUB_MODELS,
    download_from_hub,
    is_hf_dir,
    is_lmscope_dir,
    load_hf_dir,
    load_lmscope_dir,
)
from lmscope.models.gpt2 import GPT, GPTConfig

ASSET_MODELS = Path(__file__).parent.parent / "assets" / "models"
DEFAULT_MODEL = "shakespeare"
GPT2_VOCAB = 50257


@dataclass
class ModelInfo:
    name: str
    source: str
    n_layer: int
    n_head: int
    d_model: int
    d_head: int
    d_mlp: int
    vocab_size: int
    n_ctx: int
    n_params: int
    tokenizer: str | None

    def to_dict(self) -> dict:
        return dict(self.__dict__)


class LanguageModel:
    def __init__(
        self,
        gpt: GPT,
        tokenizer=None,
        name: str = "gpt",
        source: str = "",
        meta: dict | None = None,
    ):
        self.gpt = gpt.eval()
        self.tokenizer = tokenizer
        self.name, self.source, self.meta = name, source, meta or {}

    @property
    def config(self) -> GPTConfig:
        return self.gpt.config

    @property
    def device(self) -> torch.device:
        return self.gpt.wte.weight.device

    def info(self) -> ModelInfo:
        c = self.config
        return ModelInfo(
            self.name,
            self.source,
            c.n_layer,
            c.n_head,
            c.n_embd,
            c.d_head,
            c.d_mlp,
            c.vocab_size,
            c.n_ctx,
            self.gpt.num_params(),
            getattr(self.tokenizer, "name", None),
        )

    # --- text <-> ids -------------------------------------------------------------------
    def _need_tokenizer(self):
        if self.tokenizer is None:
            raise TokenizerError(
                f"model {self.name!r} has no tokenizer files; pass token ids instead of text"
            )
        return self.tokenizer

    def encode(self, text: str, *, truncate: bool = False, room: int = 0) -> list[int]:
        """Text to ids, checked against the context. ``room`` reserves positions for tokens
        still to be generated; ``truncate`` keeps the last tokens that fit instead of failing."""
        if not isinstance(text, str):
            raise InvalidInputError(f"prompt must be text, got {type(text).__name__}")
        if not text:
            raise InvalidInputError("the prompt is empty; type some text")
        return self.check_ids(self._need_tokenizer().encode(text), truncate=truncate, room=room)

    def check_ids(self, ids: Sequence[int], *, truncate: bool = False, room: int = 0) -> list[int]:
        ids = [int(i) for i in ids]
        if not ids:
            raise InvalidInputError("the prompt is empty; give at least one token")
        bad = [i for i in ids if not 0 <= i < self.config.vocab_size]
        if bad:
            raise InvalidInputError(
                f"token id {bad[0]} is outside the vocabulary (0..{self.config.vocab_size - 1})"
            )
        limit = self.config.n_ctx - room
        if len(ids) > limit:
            if not truncate:
                extra = f" plus {room} to generate" if room else ""
                raise InvalidInputError(
                    f"the prompt is {len(ids):,} tokens{extra}; the model's context is "
                    f"{self.config.n_ctx:,}. Shorten it or use truncate to keep the last {limit:,}"
                )
            ids = ids[-limit:]
        return ids

    def decode(self, ids: Sequence[int]) -> str:
        return self._need_tokenizer().decode(list(ids))

    def pieces(self, ids: Sequence[int]):
        return self.tokenizer.pieces(list(ids)) if self.tokenizer is not None else None

    def to_ids(self, text_or_ids: str | Sequence[int], *, truncate: bool = False) -> list[int]:
        if isinstance(text_or_ids, str):
            return self.encode(text_or_ids, truncate=truncate)
        if isinstance(text_or_ids, torch.Tensor):
            text_or_ids = text_or_ids.flatten().tolist()
        return self.check_ids(text_or_ids, truncate=truncate)

    # --- running -------------------------------------------------------------------------
    @torch.no_grad()  # not inference_mode: callers compute freely with the results
    def trace(
        self,
        text_or_ids: str | Sequence[int],
        *,
        names: Iterable[str] | None = None,
        layers: Iterable[int] | None = None,
        keep_logits: str = "last",
        top_k: int = 20,
        truncate: bool = False,
        ablate=None,
        ablate_mode: str = "zero",
    ) -> Trace:
        """Run the model once and record every probe (or those matching ``names``/``layers``).

        ``ablate`` switches parts off during the pass (specs like ``L5H3``, ``attn2``, ``mlp*``;
        see ``lmscope.interpret.ablation``), with ``ablate_mode`` "zero" or "mean"."""
        ids = self.to_ids(text_or_ids, truncate=truncate)
        if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
            raise InvalidInputError(f"top_k must be an integer >= 1, got {top_k!r}")
        if layers is not None:
            layers = list(layers)
            for layer in layers:
                if not 0 <= layer < self.config.n_layer:
                    raise InvalidInputError(
                        f"layer {layer} does not exist; this model has layers "
                        f"0..{self.config.n_layer - 1}"
                    )
        idx = torch.tensor([ids], device=self.device)
        recorder = Recorder(names, layers, keep_logits=keep_logits)
        hook = recorder
        if ablate:
            from lmscope.interpret.ablation import Ablator, parse_ablations

            hook = Ablator(parse_ablations(ablate, self.config), ablate_mode, inner=recorder)
        self.gpt(idx, hook=hook, last_only=keep_logits != "all")
        return Trace(
            ids,
            self.config,
            recorder.tensors,
            recorder.last_logits,
            self.pieces(ids),
            {"model": self.name},
            self._derived_probes(recorder.tensors),
            self.readout,
            partial(self._predictions, recorder.all_logits, recorder.final_normalized, ids, top_k),
        )

    @torch.no_grad()
    def _predictions(self, logits, final_normalized, ids, top_k: int) -> Predictions:
        if logits is None:  # only the last position's logits were computed in the pass
            logits = self.gpt.unembed(final_normalized)
        return Predictions.from_logits(logits, torch.tensor(ids), top_k)

    @torch.no_grad()
    def readout(self, resid: torch.Tensor) -> torch.Tensor:
        """Residual-stream vectors -> logits, through the final LayerNorm and the unembedding."""
        return self.gpt.unembed(self.gpt.ln_f(resid, None, ""))

    def _derived_probes(self, tensors: dict) -> dict:
        """Probes that are exact functions of recorded ones, computed when first read: per-head
        results (z_h @ W_O[h], a d_model-wide tensor per head) and the scaled and masked
        attention scores (raw / sqrt(d_head), then -inf above the diagonal). On long prompts
        these would otherwise hold most of a trace's memory."""
        derived = {}
        for layer, block in enumerate(self.gpt.h):
            attn = f"blocks.{layer}.attn"
            if f"{attn}.hook_z" in tensors:
                derived[f"{attn}.hook_result"] = partial(
                    block.attn.head_results, tensors[f"{attn}.hook_z"]
                )
            if f"{attn}.hook_attn_scores_raw" in tensors:
                raw = tensors[f"{attn}.hook_attn_scores_raw"]
                derived[f"{attn}.hook_attn_scores_scaled"] = partial(block.attn.scale_scores, raw)
                derived[f"{attn}.hook_attn_scores"] = partial(block.attn.masked_scores, raw)
        return {k: v for k, v in derived.items() if k not in tensors}

    @torch.no_grad()  # not inference_mode: callers compute freely with the results
    def logits(self, text_or_ids: str | Sequence[int]) -> torch.Tensor:
        """Full-vocabulary logits for every position, [pos, vocab], on the fast path."""
        idx = torch.tensor([self.to_ids(text_or_ids)], device=self.device)
        return self.gpt(idx)[0][0].float()

    @torch.no_grad()  # not inference_mode: callers compute freely with the results
    def next_token_logits(self, text_or_ids: str | Sequence[int]) -> torch.Tensor:
        idx = torch.tensor([self.to_ids(text_or_ids)], device=self.device)
        return self.gpt(idx, last_only=True)[0][0, -1].float()

    def generate(self, prompt: str | Sequence[int], max_new_tokens: int = 20, **kwargs):
        """Stream generated tokens; see ``lmscope.engine.generation.generate`` for the options."""
        from lmscope.engine.generation import generate

        return generate(self, prompt, max_new_tokens, **kwargs)


def shipped_models() -> list[str]:
    if not ASSET_MODELS.is_dir():
        return []
    return sorted(p.name for p in ASSET_MODELS.iterdir() if is_lmscope_dir(p))


def _tokenizer_for(directory: Path | None, config: GPTConfig):
    from lmscope.tokenizers import gpt2_tokenizer, load_tokenizer

    if directory is not None:
        try:
            return load_tokenizer(directory)
        except TokenizerError:
            if any((directory / f).exists() for f in ("vocab.json", "encoder.json", "chars.json")):
                raise  # files are there but broken: say so rather than guess another tokenizer
    # Every GPT-2-family checkpoint shares GPT-2's tokenizer (padded vocabularies too).
    return gpt2_tokenizer() if config.vocab_size >= GPT2_VOCAB else None


DTYPES = {
    "float32": torch.float32,
    "fp32": torch.float32,
    "float16": torch.float16,
    "fp16": torch.float16,
    "half": torch.float16,
    "bfloat16": torch.bfloat16,
    "bf16": torch.bfloat16,
}


def parse_dtype(dtype: str | torch.dtype | None) -> torch.dtype | None:
    """None, a torch floating dtype, or one of the names in DTYPES."""
    if dtype is None or dtype in DTYPES.values():
        return dtype
    found = DTYPES.get(str(dtype).lower().removeprefix("torch."))
    if found is None:
        raise InvalidInputError(
            f"unknown dtype {dtype!r}; use float32, float16 or bfloat16 (or None to keep float32)"
        )
    return found


def load(
    name_or_path: str | os.PathLike | None = None,
    *,
    device: str = "cpu",
    dtype: str | torch.dtype | None = None,
) -> LanguageModel:
    """Load a model: a shipped one by name (default: the bundled Shakespeare GPT), a GPT-2 hub id
    (``gpt2``, ``distilgpt2``, ``openai-community/gpt2``...), a local Hugging Face folder, or a
    folder written by ``lmscope train``. Char-RNN/LSTM/GRU folders give an
    ``lmscope.engine.rnn_model.RNNLanguageModel`` (tokenizer, info, logits, generate, activations).

    ``dtype`` ("float16", "bfloat16", a torch dtype; default float32) casts a GPT's weights:
    half the memory, while traces, logits and probabilities stay finite (statistics and
    softmax are computed in float32)."""
    dtype = parse_dtype(dtype)
    name = DEFAULT_MODEL if name_or_path is None else os.fspath(name_or_path)
    if not name.strip():
        raise ModelNotFoundError("model name is empty")
    path = readable(Path(name).expanduser())  # a write killed mid-swap leaves .NAME.old
    if name in shipped_models():
        path, source = ASSET_MODELS / name, f"shipped model {name}"
    elif path.exists():
        source = str(path)
    elif name in HUB_MODELS or (name.count("/") == 1 and not name.startswith((".", "/", "~"))):
        path, source = download_from_hub(name), f"hub:{HUB_MODELS.get(name, name)}"
    elif name_or_path is None:
        raise ModelNotFoundError(
            "the default model is not installed in this copy of lmscope; pass --model "
            "with a GPT-2 id or a local model folder"
        )
    else:
        shipped = ", ".join(shipped_models()) or "none installed"
        raise ModelNotFoundError(
            f"unknown model {name!r}: not a folder, a shipped model ({shipped}) or a GPT-2 hub id "
            f"({', '.join(HUB_MODELS)})"
        )
    if not path.is_dir():
        raise ModelNotFoundError(f"{path} is not a folder; pass a folder holding a model")
    if is_lmscope_dir(path):
        from lmscope.engine.rnn_model import is_rnn_dir, load_rnn

        if is_rnn_dir(path):  # a char-RNN/LSTM/GRU: its own wrapper, same basics
            if dtype not in (None, torch.float32):
                raise InvalidInputError(f"{path} is a char-RNN; it runs in float32 only")
            display = None if path.name == name else name
            return load_rnn(path, name=display, source=source, device=device)
        gpt, meta = load_lmscope_dir(path)
    elif is_hf_dir(path):
        gpt, meta = load_hf_dir(path), {}
    else:
        raise ModelNotFoundError(
            f"{path} holds neither lmscope.json nor config.json; it is not a model folder"
        )
    tokenizer = _tokenizer_for(path, gpt.config)
    display = meta.get("name") or (name if path.name != name else path.name)
    return LanguageModel(gpt.to(device=device, dtype=dtype), tokenizer, display, source, meta)
