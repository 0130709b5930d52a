"""LanguageModel: a Transformer (GPT-2 or the Llama family) plus its tokenizer.

This is the object the CLI, the web app and notebooks hold: it turns text into ids (checked in
``TextModel``), runs traces and hands out next-token logits. The network itself
(``models.gpt2.GPT``, ``models.llama.Llama``) knows nothing of text; both take the same
arguments, call the same hook and have the same parts (``h[i].attn``, ``ln_f``, ``unembed``).
"""

from __future__ import annotations

import copy
import numbers
import os
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, cast

import torch

from lmscope.engine import advice, checks
from lmscope.engine.hooks import MODES, Ablator, BatchRecorder, Recorder, parse_ablations
from lmscope.engine.protocol import Capabilities
from lmscope.engine.text_model import TextModel
from lmscope.engine.trace import Predictions, Trace
from lmscope.errors import InvalidInputError, checked_keywords
from lmscope.i18n import Message

if TYPE_CHECKING:
    from lmscope.models.common import DecoderLM, KVCache, PreNormBlock


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
    family: str = "gpt2"
    n_kv_head: int | None = None  # grouped-query attention: key/value heads shared by queries
    dtype: str = "float32"  # the precision of the weights and of every number shown
    tokenizer_kind: str | None = None  # Tokenizer.kind: "byte-bpe", "sentencepiece-bpe"...
    source_message: dict | None = None  # ``source`` as a catalog message, when it is one

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class PrecisionCost:
    """What running in a lower precision changed, measured on one prompt against float32: the
    largest change of any logit (every position), and whether the top-k next tokens after the
    last position are the same, in the same order."""

    dtype: str
    # "float32": the model loaded again in float32; "upcast": these weights in float32, when
    # the originals are not at hand (a code: each front door says it in its language)
    reference: str
    tokens: int
    max_abs_delta_logit: float  # over every position and every token
    max_abs_delta_last: float  # over the last position's logits
    top_k: int
    top_ids: list[int]  # this model's top-k after the last position
    reference_top_ids: list[int]  # float32's
    same_top_k: bool  # the same tokens in the same order
    same_top_k_set: bool  # the same tokens, in any order
    top1_changed_positions: int  # positions whose most likely next token differs

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class _Continuation:
    """Generation state of a Transformer: the KV cache and every id so far (to slide)."""

    cache: KVCache
    ids: list[int]


# The precisions a Transformer runs in, by name (lmscope.load's dtype=, serve --dtype).
PRECISIONS = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}

# A full trace keeps every probe of every layer: a 2,048-token trace of SmolLM2 holds about
# 3 GB. Longer prompts still run (logits, generation); a trace of them is refused unless raised.
MAX_TRACE_TOKENS = 2048


def max_trace_tokens() -> int:
    """The longest full trace: LMSCOPE_MAX_TRACE_TOKENS when set (a value that is no count is
    refused, not ignored: whoever set it expects it to count), else MAX_TRACE_TOKENS."""
    value = os.environ.get("LMSCOPE_MAX_TRACE_TOKENS", "").strip()
    if not value:
        return MAX_TRACE_TOKENS
    if not value.isdigit() or int(value) < 1:
        raise InvalidInputError(
            "error.trace.max-tokens-env", got=repr(value), default=MAX_TRACE_TOKENS
        )
    return int(value)


# One float32 reference is made at a time: each is a whole model in memory.
_REFERENCE_LOCK = threading.Lock()


class LanguageModel(TextModel):
    net: DecoderLM
    # Loads this model again in float32 (set by lmscope.load), to measure what a lower precision
    # costs; without it the reference is these weights upcast to float32.
    reference_loader: Callable[[], LanguageModel] | None = None

    default_name = "gpt"
    # Set on first use by float32_reference (under _REFERENCE_LOCK), per instance.
    _reference: LanguageModel | None = None
    _upcast = False  # a reference made by upcasting another model's weights

    # narrower than TextModel's nn.Module: __init__ passes it its own net, a GPT or a Llama
    def capabilities_of(self, net: DecoderLM) -> Capabilities:  # type: ignore[override]
        return Capabilities(
            family=getattr(net.config, "family", "gpt2"),
            kind="transformer",
            trace=True,
            attention=True,
            activations=False,
            context=net.config.n_ctx,
        )

    @property
    def gpt(self) -> torch.nn.Module:
        """The network (kept under its old name for one release; prefer ``net``)."""
        return self.net

    @property
    def device(self) -> torch.device:
        return next(self.net.parameters()).device

    @property
    def dtype(self) -> torch.dtype:
        return next(self.net.parameters()).dtype

    @property
    def precision(self) -> str:
        """The weights' precision by name: float32, bfloat16 or float16."""
        return str(self.dtype).removeprefix("torch.")

    @checked_keywords
    def to_precision(self, dtype: str | torch.dtype) -> LanguageModel:
        """Cast the weights in place, as ``lmscope.load(..., dtype=)`` does; returns self."""
        found = PRECISIONS.get(str(dtype).removeprefix("torch."))
        if found is None:
            raise InvalidInputError(
                "error.model.unknown-precision", dtype=repr(dtype), known=", ".join(PRECISIONS)
            )
        self.net.to(found)
        return self

    def info(self) -> ModelInfo:
        c = self.config
        as_configured = ("n_layer", "n_head", "d_head", "d_mlp", "vocab_size", "n_ctx")
        return ModelInfo(
            name=self.name,
            source=str(self.source),
            d_model=c.n_embd,
            **{key: getattr(c, key) for key in as_configured},
            n_params=self.net.num_params(),
            tokenizer=getattr(self.tokenizer, "name", None),
            family=self.capabilities.family,
            n_kv_head=getattr(c, "n_kv_head", None),
            dtype=self.precision,
            tokenizer_kind=getattr(self.tokenizer, "kind", None),
            source_message=self.source_message(),
        )

    def __repr__(self) -> str:
        c = self.config
        return f"<{self.capabilities.family} {self.name!r}: {c.n_layer} x {c.n_embd}>"

    # --- running -------------------------------------------------------------------------
    @checked_keywords
    @torch.no_grad()  # not inference_mode: callers compute freely with the results
    def trace(
        self,
        text_or_ids: str | Sequence[int],
        *,
        names: Iterable[str] | None = None,
        layers: int | Iterable[int] | None = None,
        keep_logits: str = "last",
        top_k: int = 20,
        truncate: bool = False,
        ablate=None,
        ablate_mode: str = "zero",
    ) -> Trace:
        """Run the model once and record every probe (or those matching ``names``/``layers``).

        ``ablate`` switches parts off during the pass (specs like ``L5H3``, ``attn2``, ``mlp*``;
        see ``lmscope.engine.hooks``), with ``ablate_mode`` "zero" or "mean"."""
        ids = self.to_ids(text_or_ids, truncate=truncate)
        self._check_trace(len(ids), names is None and layers is None, top_k)
        if layers is not None:
            if isinstance(layers, numbers.Integral) and not isinstance(layers, bool):
                layers = [cast(int, layers)]  # one layer: any Integral (numpy's too)
            if isinstance(layers, str) or not isinstance(layers, Iterable):
                raise InvalidInputError("error.trace.layers-type", got=f"{layers!r:.40}")
            layers = [checks.layer(self.config, layer) for layer in layers]
        idx = torch.tensor([ids], device=self.device)
        recorder = Recorder(names, layers, keep_logits=keep_logits)
        if ablate_mode not in MODES:  # checked with or without ablations: a typo is a typo
            raise InvalidInputError("error.ablation.mode", got=repr(ablate_mode))
        hook: Recorder | Ablator = recorder
        if ablate:
            hook = Ablator(parse_ablations(ablate, self.config), ablate_mode, inner=recorder)
        self.net(idx, hook=hook, last_only=keep_logits != "all")
        recorder.check_names()
        assert recorder.last_logits is not None  # every pass ends with the logits probe
        predict = partial(
            self._predictions, recorder.all_logits, recorder.final_normalized, ids, top_k
        )
        trace = self._new_trace(
            ids, recorder.tensors, self._mask_padding(recorder.last_logits), predict
        )
        trace.meta["every_probe"] = names is None and layers is None  # for a missing name's error
        return trace

    def _check_trace(self, n_tokens: int, every_probe: bool, top_k) -> None:
        """The checks every trace makes: a trace of every probe within the token limit, and
        ``top_k`` an integer >= 1."""
        limit = max_trace_tokens()
        if every_probe and n_tokens > limit:
            raise InvalidInputError(
                "error.trace.too-long",
                n=n_tokens,
                limit=limit,
                advice=Message(advice.ADVICE_TRACE_LIMIT),
            )
        checks.at_least_one(top_k, "top_k")

    def _new_trace(self, ids: list[int], tensors: dict, last_logits, predict) -> Trace:
        """A Trace of this model's pass over ``ids``: its recorded ``tensors`` (and the probes
        derived from them), ``last_logits`` and what computes its predictions."""
        return Trace(
            ids,
            self.config,
            tensors,
            last_logits,
            self.pieces(ids),
            {"model": self.name, "family": self.capabilities.family},
            self._derived_probes(tensors),
            self.readout,
            predict,
        )

    @checked_keywords
    @torch.no_grad()
    def trace_many(
        self,
        prompts: Sequence[str | Sequence[int]],
        *,
        names: Iterable[str] | None = None,
        top_k: int = 20,
    ) -> list[Trace]:
        """``trace`` of several prompts from one forward pass, each with its per-position
        predictions: the weights are read once for all of them, which for short prompts costs
        little more than one (a class's first traces). Shorter prompts are padded at the end;
        causal attention never lets a position read a later one, so each prompt's numbers are
        its own pass's, up to the rounding of a matrix product with more rows (about 1e-6)."""
        if isinstance(prompts, str | bytes) or not isinstance(prompts, Iterable):
            raise InvalidInputError("error.trace.many-type", type=type(prompts).__name__)
        all_ids = [self.to_ids(prompt) for prompt in prompts]
        T = max(map(len, all_ids), default=0)
        self._check_trace(T, names is None, top_k)
        if not all_ids:
            return []
        idx = torch.tensor([ids + ids[-1:] * (T - len(ids)) for ids in all_ids], device=self.device)
        recorder = BatchRecorder(names)
        self.net(idx, hook=recorder)
        recorder.check_names()
        rows: list[dict[str, torch.Tensor]] = [{} for _ in all_ids]
        for name in list(recorder.tensors):  # one probe at a time, freed once split
            batch = recorder.tensors.pop(name)
            for b, (row, ids) in enumerate(zip(rows, all_ids, strict=True)):
                row[name] = batch[b, : len(ids)].clone()  # its own memory, kept or freed alone
        logits = recorder.logits
        assert logits is not None  # every pass ends with the logits probe
        traces = []
        for b, (row, ids) in enumerate(zip(rows, all_ids, strict=True)):
            own = self._mask_padding(logits[b, : len(ids)]).float()
            predictions = Predictions.from_logits(own, torch.tensor(ids), top_k)
            traces.append(self._new_trace(ids, row, own[-1].clone(), lambda p=predictions: p))
        return traces

    @checked_keywords
    @torch.no_grad()
    def trace_layer(self, base: Trace, layer: int) -> Trace:
        """Every probe of block ``layer`` for ``base``'s prompt, recorded by running that block
        alone on the input ``base`` recorded for it (``blocks.{layer}.hook_resid_pre``): one
        block's work instead of a whole pass, and the same numbers as
        ``trace(ids, layers=[layer])``. The result shares ``base``'s last logits and
        predictions (the pass is the same)."""
        self._check_own(base)
        layer = checks.layer(self.config, layer)
        name = f"blocks.{layer}.hook_resid_pre"
        if name not in base.tensors:
            raise InvalidInputError("error.trace.block-input", layer=str(layer), name=name)
        idx = torch.tensor([base.ids], device=self.device)
        recorder = Recorder(None, [layer])
        self.net.run_block(layer, idx, base.tensors[name][None], recorder)
        return self._new_trace(
            list(base.ids), recorder.tensors, base.last_logits, lambda: base.predictions
        )

    def _check_own(self, trace) -> None:
        """A Trace this model made (``trace_layer`` and ``start_from`` continue from one)."""
        if not isinstance(trace, Trace):
            raise InvalidInputError("error.trace.not-trace", type=type(trace).__name__)
        if trace.config is not self.config:
            raise InvalidInputError("error.trace.other-model")

    @torch.no_grad()
    def _predictions(self, logits, final_normalized, ids, top_k: int) -> Predictions:
        if logits is None:  # only the last position's logits were computed in the pass
            logits = self.net.unembed(final_normalized)
        return Predictions.from_logits(self._mask_padding(logits), torch.tensor(ids), top_k)

    @torch.no_grad()
    def readout(self, resid: torch.Tensor) -> torch.Tensor:
        """Residual-stream vectors -> logits, through the final norm and the unembedding (the
        tokens' rows only: a padded embedding's extra rows are not tokens)."""
        return self._mask_padding(self.net.unembed(self.net.ln_f(resid, None, "")))

    def _derived_probes(self, tensors: dict) -> dict:
        """Probes that are exact functions of recorded ones, computed when first read: per-head
        results (z_h @ W_O[h], a d_model-wide tensor per head) and the attention scores at each
        stage and the pattern (QK^T from q and k, / sqrt(d_head), masked, softmax). On long
        prompts these would otherwise hold most of a trace's memory."""
        derived = {}
        for layer, block in enumerate(cast("Iterable[PreNormBlock]", self.net.h)):
            attn, derive = f"blocks.{layer}.attn", block.attn
            if f"{attn}.hook_z" in tensors:
                derived[f"{attn}.hook_result"] = partial(
                    derive.head_results, tensors[f"{attn}.hook_z"]
                )
            q_name, k_name = (f"{attn}.{n}" for n in derive.score_inputs)
            raw = partial(_recorded_or, tensors, f"{attn}.hook_attn_scores_raw", None)
            if f"{attn}.hook_attn_scores_raw" not in tensors:
                if q_name not in tensors or k_name not in tensors:
                    continue
                rebuild = partial(derive.raw_scores, tensors[q_name], tensors[k_name])
                raw = partial(_recorded_or, tensors, f"{attn}.hook_attn_scores_raw", rebuild)
                derived[f"{attn}.hook_attn_scores_raw"] = rebuild
            derived[f"{attn}.hook_attn_scores_scaled"] = _then(derive.scale_scores, raw)
            derived[f"{attn}.hook_attn_scores"] = _then(derive.masked_scores, raw)
            derived[f"{attn}.hook_pattern"] = _then(_pattern, _then(derive.masked_scores, raw))
        return {k: v for k, v in derived.items() if k not in tensors}

    @torch.no_grad()  # not inference_mode: callers compute freely with the results
    def logits(self, text_or_ids: str | Sequence[int]) -> torch.Tensor:
        """Full-vocabulary logits for every position, [pos, vocab], on the fast path."""
        idx = torch.tensor([self.to_ids(text_or_ids)], device=self.device)
        return self._mask_padding(self.net(idx)[0][0].float())

    # --- what the precision costs ------------------------------------------------------------
    def float32_reference(self) -> LanguageModel:
        """This model in float32 (itself when it is float32): loaded again from where it came
        from on first use and kept, or, without a loader, these weights upcast."""
        if self.dtype == torch.float32:
            return self
        with _REFERENCE_LOCK:
            if self._reference is None:
                if self.reference_loader is not None:
                    self._reference = self.reference_loader()
                else:
                    net = copy.deepcopy(self.net).float()
                    self._reference = LanguageModel(
                        net, self.tokenizer, self.name, self.source, self.meta
                    )
                    self._reference.reference_loader = None
                    self._reference._upcast = True
        return self._reference

    @torch.no_grad()
    @checked_keywords
    def precision_cost(self, text_or_ids: str | Sequence[int], top_k: int = 5) -> PrecisionCost:
        """Measured on request: this model's logits for the prompt against float32's."""
        checks.at_least_one(top_k, "top_k")
        ids = self.to_ids(text_or_ids)
        reference = self.float32_reference()
        ours, theirs = self.logits(ids), reference.logits(ids)
        delta = (ours - theirs).abs()
        k = min(int(top_k), ours.shape[-1])
        top = ours[-1].topk(k).indices.tolist()
        reference_top = theirs[-1].topk(k).indices.tolist()
        upcast = reference._upcast
        return PrecisionCost(
            dtype=self.precision,
            reference="upcast" if upcast else "float32",
            tokens=len(ids),
            max_abs_delta_logit=float(delta.max()),
            max_abs_delta_last=float(delta[-1].max()),
            top_k=k,
            top_ids=top,
            reference_top_ids=reference_top,
            same_top_k=top == reference_top,
            same_top_k_set=set(top) == set(reference_top),
            top1_changed_positions=int((ours.argmax(-1) != theirs.argmax(-1)).sum()),
        )

    # --- generation: the protocol's start/step over a KV cache ------------------------------
    @torch.no_grad()
    def start(self, ids: list[int]) -> tuple[torch.Tensor, _Continuation]:
        state = _Continuation(self.net.new_cache(), [])
        return self._feed(state, self.check_ids(ids)), state

    @property
    def cache_probes(self) -> tuple[str, str]:
        """The probes (every layer) that hold what the KV cache holds: the keys attention
        reads (Llama: after RoPE) and the values. A trace recording them can start generation
        (``start_from``)."""
        key = cast("PreNormBlock", self.net.h[0]).attn.score_inputs[1]
        return f"blocks.*.attn.{key}", "blocks.*.attn.hook_v"

    @torch.no_grad()
    def start_from(self, trace: Trace) -> tuple[torch.Tensor, _Continuation]:
        """``start(trace.ids)`` with no forward pass: the KV cache filled with the keys and
        values ``trace`` recorded in every layer, and its last logits. A run that follows a
        trace continues from the very numbers the trace shows."""
        self._check_own(trace)
        key, value = (probe.rsplit(".", 1)[1] for probe in self.cache_probes)
        cache = self.net.new_cache()
        for layer in range(self.config.n_layer):
            names = [f"blocks.{layer}.attn.{probe}" for probe in (key, value)]
            missing = [name for name in names if name not in trace.tensors]
            if missing:
                raise InvalidInputError("error.trace.no-cache", name=missing[0])
            # recorded [position, head, d_head]; the cache holds [batch, head, position, d_head]
            k, v = (trace.tensors[name].transpose(0, 1)[None] for name in names)
            if k.dtype != self.dtype:
                raise InvalidInputError("error.trace.dtype", made=str(k.dtype), now=str(self.dtype))
            cache.extend(layer, k, v)
        return trace.last_logits.clone(), _Continuation(cache, list(trace.ids))

    @torch.no_grad()
    def step(self, state: _Continuation, token: int) -> tuple[torch.Tensor, _Continuation]:
        if not isinstance(state, _Continuation):
            raise InvalidInputError("error.model.step-state", type=type(state).__name__)
        (token,) = self.check_ids([token])
        n_ctx = self.config.n_ctx
        if state.cache.length + 1 > n_ctx:  # the window is full: slide it by half
            kept = (state.ids + [token])[-(n_ctx // 2) :]
            state = _Continuation(self.net.new_cache(), [])
            return self._feed(state, kept), state
        if self.net.cache_stale(state.cache.length, 1):  # LongRoPE turns to its long factors
            every = state.ids + [token]
            state = _Continuation(self.net.new_cache(), [])
            return self._feed(state, every), state
        return self._feed(state, [token]), state

    @torch.inference_mode()  # a run's cache may come from one (the generation loop's)
    def step_many(
        self, states: list[_Continuation], tokens: list[int]
    ) -> list[tuple[torch.Tensor, _Continuation]]:
        """``step`` for several generation runs at once, (logits, state) for each: the
        weights are read once for all of them. A run whose window is full slides on its own,
        as does one whose cache goes stale (``step``)."""
        n_ctx = self.config.n_ctx
        together = [
            i
            for i, s in enumerate(states)
            if s.cache.length + 1 <= n_ctx and not self.net.cache_stale(s.cache.length, 1)
        ]
        out: list = [None] * len(states)
        if together:
            idx = torch.tensor([[tokens[i]] for i in together], device=self.device)
            logits = self.net.decode_rows(idx, [states[i].cache for i in together])
            for row, i in enumerate(together):
                states[i].ids.append(tokens[i])
                out[i] = (self._mask_padding(logits[row, -1].float().cpu()), states[i])
        return [
            done if done is not None else self.step(state, token)
            for done, state, token in zip(out, states, tokens, strict=True)
        ]

    def _feed(self, state: _Continuation, new: list[int]) -> torch.Tensor:
        idx = torch.tensor([new], device=self.device)
        state.ids.extend(new)
        logits = self.net(idx, cache=state.cache, last_only=True)[0][0, -1].float().cpu()
        return self._mask_padding(logits)

    def _mask_padding(self, logits: torch.Tensor) -> torch.Tensor:
        """Padding rows of the embedding are not tokens: their logits are dropped, so they can
        never be sampled, ranked or shown."""
        return logits[..., : self.vocab_size]


def _recorded_or(tensors: dict, name: str, rebuild):
    """A probe the trace already holds (recorded, or derived and kept), else rebuilt."""
    return tensors[name] if name in tensors else rebuild()


def _then(function, source):
    return lambda: function(source())


def _pattern(masked: torch.Tensor) -> torch.Tensor:
    return torch.softmax(masked, dim=-1)
