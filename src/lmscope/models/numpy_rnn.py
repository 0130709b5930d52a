"""min-char-rnn in NumPy: a vanilla RNN character model whose backward pass is written by hand.

The whole learning algorithm, small enough to read in one sitting:

    h_t = tanh(Wxh x_t + Whh h_{t-1} + bh)      x_t one-hot, so Wxh x_t is a column of Wxh
    y_t = Why h_t + by                          scores for the next character
    p_t = softmax(y_t);  loss = -sum_t log p_t[target_t]

``loss_and_grads`` runs the forward pass over one chunk and backpropagates through time
(BPTT) to the start of the chunk; the hidden state at the end of the chunk is handed to the
next one, so the model sees the text as one stream although gradients stop at chunk borders
(truncated BPTT). ``train`` adds Adagrad, element-wise clipping at +-5, a smoothed loss and
periodic samples, with the defaults of Karpathy's original (hidden 100, sequence 25,
learning rate 0.1). ``gradient_check`` compares every analytic gradient with centered
differences in float64. ``hello_demo`` trains the four-letter "hello" example.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from lmscope.errors import InvalidInputError
from lmscope.i18n import Message

PARAM_NAMES = ("Wxh", "Whh", "Why", "bh", "by")
CLIP = 5.0  # gradients are clamped element-wise to [-CLIP, CLIP] against exploding BPTT


@dataclass
class Vocab:
    """Characters <-> ids: the sorted distinct characters of a text."""

    chars: tuple[str, ...]

    @classmethod
    def from_text(cls, text: str) -> Vocab:
        if text is not None and not isinstance(text, str):
            raise InvalidInputError("error.minrnn.text-type", type=type(text).__name__)
        if not text:
            raise InvalidInputError("error.minrnn.empty-text")
        return cls(tuple(sorted(set(text))))

    def __len__(self) -> int:
        return len(self.chars)

    def encode(self, text: str) -> list[int]:
        if not isinstance(text, str):
            raise InvalidInputError("error.tokenizer.text-type", type=type(text).__name__)
        index = {c: i for i, c in enumerate(self.chars)}
        unknown = sorted({c for c in text if c not in index})
        if unknown:
            raise InvalidInputError(
                "error.minrnn.unknown-chars", chars=", ".join(map(repr, unknown[:5]))
            )
        return [index[c] for c in text]

    def decode(self, ids: Sequence[int]) -> str:
        return "".join(self.chars[_char_id(i, len(self.chars))] for i in ids)


def _char_id(value, size: int) -> int:
    """A character id in 0..size-1 (a negative one would silently count from the end)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise InvalidInputError("error.minrnn.id-type", got=f"{value!r:.40}")
    if not 0 <= value < size:
        raise InvalidInputError("error.minrnn.id-range", id=str(value), last=str(size - 1))
    return int(value)


def _number(value, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise InvalidInputError("error.value.number", name=what, got=f"{value!r:.40}")
    return float(value)


def _whole(value, what: object, low: int) -> int:
    """A whole number >= ``low`` (not a bool, not a float that happens to be whole)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise InvalidInputError(
            "error.value.whole-at-least", name=what, low=low, got=f"{value!r:.40}"
        )
    return int(value)


def _count(value, what: object) -> int:
    return _whole(value, what, 0)


def _seed(value) -> int:
    return _whole(value, "seed", 0)


def _positive(value, what: object) -> int:
    return _whole(value, what, 1)


class MinCharRNN:
    """Weights of a vanilla RNN plus Adagrad memory. Vectors are 1-D arrays."""

    def __init__(self, vocab_size: int, hidden: int = 100, *, seed: int = 0, dtype=np.float64):
        self.vocab_size = _positive(vocab_size, Message("error.minrnn.part.vocab-size"))
        self.hidden = _positive(hidden, "--hidden")
        rng = np.random.default_rng(_seed(seed))
        v, h = self.vocab_size, self.hidden
        # Small random weights (std 0.01) as in the original: tanh starts in its linear range.
        self.params = {
            "Wxh": rng.standard_normal((h, v)) * 0.01,
            "Whh": rng.standard_normal((h, h)) * 0.01,
            "Why": rng.standard_normal((v, h)) * 0.01,
            "bh": np.zeros(h),
            "by": np.zeros(v),
        }
        self.params = {k: p.astype(dtype) for k, p in self.params.items()}
        self.memory = {k: np.zeros_like(p) for k, p in self.params.items()}  # Adagrad's sum g^2

    @property
    def dtype(self):
        return self.params["Wxh"].dtype

    @property
    def num_params(self) -> int:
        return sum(p.size for p in self.params.values())

    def zero_state(self) -> np.ndarray:
        return np.zeros(self.hidden, dtype=self.dtype)

    def loss_and_grads(
        self,
        inputs: Sequence[int] | np.ndarray,
        targets: Sequence[int] | np.ndarray,
        h0: np.ndarray,
    ) -> tuple[float, dict[str, np.ndarray], np.ndarray]:
        """Forward over one chunk and BPTT back to its start.

        Returns the summed cross-entropy (nats), the gradient of every parameter (unclipped),
        and the last hidden state (to carry into the next chunk).
        """
        p = self.params
        Wxh, Whh, Why, bh, by = (p[k] for k in PARAM_NAMES)
        inputs, targets = np.asarray(inputs), np.asarray(targets)
        steps = len(inputs)
        if steps == 0 or len(targets) != steps:
            raise InvalidInputError("error.minrnn.inputs-targets")
        for ids in (inputs, targets):
            if ids.dtype.kind not in "iu" or ids.min() < 0 or ids.max() >= self.vocab_size:
                raise InvalidInputError("error.minrnn.inputs-range", last=str(self.vocab_size - 1))
        if np.shape(h0) != (self.hidden,):
            raise InvalidInputError(
                "error.minrnn.hidden-shape", hidden=str(self.hidden), shape=str(np.shape(h0))
            )
        hs = np.empty((steps + 1, self.hidden), dtype=self.dtype)  # hs[t + 1] is h_t
        hs[0] = h0
        for t in range(steps):
            hs[t + 1] = np.tanh(Wxh[:, inputs[t]] + Whh @ hs[t] + bh)
        # Outputs do not feed back, so they are computed for the whole chunk at once.
        scores = hs[1:] @ Why.T + by
        scores -= scores.max(axis=1, keepdims=True)
        log_probs = scores - np.log(np.exp(scores).sum(axis=1, keepdims=True))
        loss = -float(log_probs[np.arange(steps), targets].sum())

        dy = np.exp(log_probs)  # d loss / d scores = softmax - one_hot(target)
        dy[np.arange(steps), targets] -= 1.0
        grads = {
            "Why": dy.T @ hs[1:],
            "by": dy.sum(axis=0),
            "Wxh": np.zeros_like(Wxh),
            "Whh": np.zeros_like(Whh),
            "bh": np.zeros_like(bh),
        }
        dh_from_output = dy @ Why  # [steps, hidden]
        draws = np.empty_like(hs[1:])  # gradient at the tanh input, per step
        dh_next = np.zeros(self.hidden, dtype=self.dtype)  # from step t+1 back into h_t
        for t in reversed(range(steps)):
            dh = dh_from_output[t] + dh_next
            draws[t] = (1.0 - hs[t + 1] ** 2) * dh  # tanh' = 1 - tanh^2
            dh_next = Whh.T @ draws[t]
        grads["Whh"] = draws.T @ hs[:-1]
        grads["bh"] = draws.sum(axis=0)
        np.add.at(grads["Wxh"].T, inputs, draws)  # one-hot input: only seen columns get gradient
        return loss, grads, hs[-1].copy()

    def loss(self, inputs: Sequence[int], targets: Sequence[int], h0: np.ndarray) -> float:
        """The summed cross-entropy of one chunk (forward only)."""
        p = self.params
        h, total = h0, 0.0
        for x, y in zip(inputs, targets, strict=True):
            h = np.tanh(p["Wxh"][:, x] + p["Whh"] @ h + p["bh"])
            scores = p["Why"] @ h + p["by"]
            top = scores.max()
            total -= scores[y] - top - math.log(np.exp(scores - top).sum())
        return float(total)

    def adagrad_step(self, grads: dict[str, np.ndarray], lr: float) -> None:
        """Clip element-wise at +-CLIP, then Adagrad: each weight's step shrinks with the sum of
        its squared gradients so far."""
        for name, param in self.params.items():
            g = np.clip(grads[name], -CLIP, CLIP)
            self.memory[name] += g * g
            param -= lr * g / np.sqrt(self.memory[name] + 1e-8)

    def step_probs(self, h: np.ndarray, x: int, temperature: float = 1.0):
        """Feed one character; return (next-character probabilities, new hidden state)."""
        x = _char_id(x, self.vocab_size)
        temperature = _number(temperature, "temperature")
        if not (temperature > 0 and math.isfinite(temperature)):
            raise InvalidInputError("error.minrnn.temperature", got=str(temperature))
        if np.shape(h) != (self.hidden,):
            raise InvalidInputError(
                "error.minrnn.hidden-shape", hidden=str(self.hidden), shape=str(np.shape(h))
            )
        p = self.params
        with np.errstate(over="ignore", invalid="ignore"):  # sample() refuses the NaN it makes
            h = np.tanh(p["Wxh"][:, x] + p["Whh"] @ h + p["bh"])
            scores = (p["Why"] @ h + p["by"]) / temperature
            e = np.exp(scores - scores.max())
            return e / e.sum(), h

    def sample(
        self,
        h: np.ndarray,
        first: int,
        n: int,
        rng: np.random.Generator,
        temperature: float = 1.0,
    ) -> list[int]:
        """``n`` ids drawn one at a time, each fed back in, starting after id ``first``."""
        temperature = _number(temperature, "temperature")
        if not (temperature > 0 and math.isfinite(temperature)):
            raise InvalidInputError("error.minrnn.temperature", got=str(temperature))
        out, x = [], first
        for _ in range(_count(n, Message("error.minrnn.part.sample-length"))):
            probs, h_next = self.step_probs(h, x, temperature)
            if not np.isfinite(probs).all():
                if temperature < 1 and np.isfinite(self.step_probs(h, x)[0]).all():
                    raise InvalidInputError(  # the division by a tiny temperature overflowed
                        "error.minrnn.temperature-too-low", t=f"{temperature:g}"
                    )
                raise _ScoresOverflow("error.minrnn.scores-overflow")
            h = h_next
            x = int(rng.choice(self.vocab_size, p=probs))
            out.append(x)
        return out


class _ScoresOverflow(InvalidInputError):
    """Scores too large for floats at temperature 1: the weights, not the temperature."""


# --- training ---------------------------------------------------------------------------------


EXPLODED = 100  # a loss this many times a uniform guess's means training diverged


def _diverged(what: Message, iteration: int, lr: float) -> InvalidInputError:
    """Training that blew up: a too-large learning rate (gradients are clipped already)."""
    return InvalidInputError("error.minrnn.diverged", what=what, i=str(iteration), lr=f"{lr:g}")


def _step(model: MinCharRNN, inputs, targets, h, lr: float, iteration: int):
    """One forward/backward pass and Adagrad step; refuses a loss or weights that stop being
    finite numbers (computed with NumPy's overflow warnings off: the check says it instead)."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        loss, grads, h = model.loss_and_grads(inputs, targets, h)
        if not math.isfinite(loss):
            raise _diverged(Message("error.minrnn.part.loss-became", loss=str(loss)), iteration, lr)
        # a uniform guess costs log(vocab) nats a character; a hundred times that can only
        # come from weights that have blown up, while they are still finite numbers
        per_char = loss / max(len(inputs), 1)
        if per_char > EXPLODED * max(math.log(model.vocab_size), 1.0):
            reached = Message("error.minrnn.part.loss-reached", loss=f"{per_char:.3g}")
            raise _diverged(reached, iteration, lr)
        model.adagrad_step(grads, lr)
    if not all(np.isfinite(p).all() for p in model.params.values()):
        raise _diverged(Message("error.minrnn.part.weights-overflowed"), iteration, lr)
    return loss, h


@dataclass
class TrainEvent:
    """One training iteration as ``train`` reports it."""

    iteration: int  # 1-based
    loss: float  # this chunk's summed cross-entropy (nats)
    smooth_loss: float  # exponential moving average of ``loss`` (0.999 old, 0.001 new)
    position: int  # where in the text this chunk began
    seq: int  # characters per chunk
    sample: str | None = None  # set every ``sample_every`` iterations (and at the first)

    @property
    def smooth_per_char(self) -> float:
        """The smoothed loss per character (nats), comparable across --seq settings."""
        return self.smooth_loss / self.seq


def train(
    text: str,
    *,
    iters: int = 10_000,
    hidden: int = 100,
    seq: int = 25,
    lr: float = 0.1,
    sample_every: int = 1000,
    sample_length: int = 200,
    seed: int = 0,
    model: MinCharRNN | None = None,
) -> Iterator[TrainEvent]:
    """Train on ``text`` as min-char-rnn does: an iterator of one event per iteration.

    The text is read in consecutive chunks of ``seq`` characters; the hidden state flows from
    one chunk into the next and is reset to zeros when the text runs out and reading restarts.
    """
    iters = _count(iters, "--iters")
    seq = _positive(seq, "--seq")
    hidden = _positive(hidden, "--hidden")
    lr = _number(lr, "--lr")
    if not lr > 0 or not math.isfinite(lr):
        raise InvalidInputError("error.value.number-above", name="--lr", low=0, got=str(lr))
    sample_every = _count(sample_every, "--sample-every")
    sample_length = _count(sample_length, Message("error.minrnn.part.sample-length"))
    seed = _seed(seed)
    if model is not None and not isinstance(model, MinCharRNN):
        raise InvalidInputError("error.minrnn.model-type", type=type(model).__name__)
    if not isinstance(text, str):
        raise InvalidInputError("error.minrnn.text-type", type=type(text).__name__)
    vocab = Vocab.from_text(text)
    if len(text) < seq + 1:
        raise InvalidInputError("error.minrnn.text-too-short", n=len(text), seq=seq, need=seq + 1)
    data = np.array(vocab.encode(text))
    if model is None:
        model = MinCharRNN(len(vocab), hidden, seed=seed)
    elif model.vocab_size != len(vocab):
        raise InvalidInputError(
            "error.minrnn.vocab-mismatch", model=str(model.vocab_size), text=str(len(vocab))
        )
    # Checked above, run below: a bad setting fails at the call, not at the first next().
    return _train_loop(model, vocab, data, iters, seq, lr, sample_every, sample_length, seed)


def _train_loop(model, vocab, data, iters, seq, lr, sample_every, sample_length, seed):
    rng = np.random.default_rng(seed)
    smooth = -math.log(1.0 / len(vocab)) * seq  # the loss of a uniform guess
    pos, h = 0, model.zero_state()
    for it in range(1, iters + 1):
        if pos + seq + 1 > len(data):
            pos, h = 0, model.zero_state()  # back to the start: nothing to carry over
        inputs, targets = data[pos : pos + seq], data[pos + 1 : pos + seq + 1]
        loss, h = _step(model, inputs, targets, h, lr, it)
        smooth = smooth * 0.999 + loss * 0.001
        sample = None
        if sample_every and (it % sample_every == 0 or it == 1):
            try:
                ids = model.sample(h, int(targets[-1]), sample_length, rng)
            except _ScoresOverflow:
                raise _diverged(Message("error.minrnn.part.scores-overflowed"), it, lr) from None
            sample = vocab.decode(ids)
        yield TrainEvent(it, loss, smooth, pos, seq, sample)
        pos += seq


# --- the gradient check -----------------------------------------------------------------------


@dataclass
class GradCheck:
    """How one parameter's analytic gradient compares with centered differences."""

    name: str
    rel_error: float  # |a - n| / (|a| + |n|) over the checked entries, as vectors
    max_abs_diff: float  # the largest |a - n| of one entry
    checked: int  # how many entries were nudged


def relative_error(analytic: np.ndarray, numeric: np.ndarray) -> float:
    """||a - n|| / (||a|| + ||n||), 0 when both are 0 (a chunk may never use some weights).

    Taken over a parameter's entries together rather than entry by entry: a saturated tanh unit
    has gradients near 1e-8, where float64's rounding of the loss (about 1e-9 per difference)
    would dominate any per-entry ratio without saying anything about the backward pass.
    """
    a, n = np.asarray(analytic, np.float64), np.asarray(numeric, np.float64)
    denom = float(np.linalg.norm(a) + np.linalg.norm(n))
    return 0.0 if denom == 0.0 else float(np.linalg.norm(a - n)) / denom


def gradient_check(
    model: MinCharRNN,
    inputs: Sequence[int],
    targets: Sequence[int],
    h0: np.ndarray | None = None,
    *,
    delta: float = 1e-5,
    per_param: int | None = None,
    seed: int = 0,
    on_entry: Callable[[], None] | None = None,
) -> dict[str, GradCheck]:
    """Compare BPTT's gradient with centered differences, parameter by parameter.

    Each checked weight w is nudged to w + delta and w - delta and the loss slope
    (L+ - L-) / (2 delta) compared with the analytic gradient. Use a float64 model: in
    float32 the differences drown in rounding. ``per_param`` checks that many random entries
    of each parameter instead of all of them; ``on_entry`` is called after each entry.
    """
    if model.dtype != np.float64:
        raise InvalidInputError("error.minrnn.gradcheck-float64")
    delta = _number(delta, "delta")
    if not (delta > 0 and math.isfinite(delta)):
        raise InvalidInputError("error.minrnn.delta", got=str(delta))
    if per_param is not None:
        per_param = _positive(per_param, "per_param")
    h0 = model.zero_state() if h0 is None else np.asarray(h0, dtype=np.float64)
    _, grads, _ = model.loss_and_grads(inputs, targets, h0)
    rng = np.random.default_rng(seed)
    results = {}
    for name in PARAM_NAMES:
        flat, gflat = model.params[name].reshape(-1), grads[name].reshape(-1)
        if per_param is None or per_param >= flat.size:
            entries = np.arange(flat.size)
        else:
            entries = np.sort(rng.choice(flat.size, size=per_param, replace=False))
        numeric = np.empty(len(entries))
        for k, i in enumerate(entries):
            saved = flat[i]
            flat[i] = saved + delta
            up = model.loss(inputs, targets, h0)
            flat[i] = saved - delta
            down = model.loss(inputs, targets, h0)
            flat[i] = saved
            numeric[k] = (up - down) / (2 * delta)
            if on_entry is not None:
                on_entry()
        analytic = gflat[entries]
        results[name] = GradCheck(
            name,
            relative_error(analytic, numeric),
            float(np.abs(analytic - numeric).max()),
            len(entries),
        )
    return results


# --- the "hello" example ----------------------------------------------------------------------


@dataclass
class HelloStep:
    input: str
    target: str
    probs: dict[str, float]  # next-character probabilities after reading ``input``

    @property
    def predicted(self) -> str:
        return max(self.probs, key=self.probs.__getitem__)


def hello_demo(
    *, iters: int = 300, hidden: int = 8, lr: float = 0.1, seed: int = 0
) -> tuple[list[HelloStep], list[float]]:
    """Train on "hello" (input "hell", target "ello") from a zero state each iteration.

    The two "l" inputs are identical, yet the first must predict "l" and the second "o": only
    the hidden state, which has seen one "l" already, can tell them apart. Returns the
    prediction at each step after training, and the loss of every iteration.
    """
    iters = _count(iters, "--iters")
    lr = _number(lr, "--lr")
    if not lr > 0 or not math.isfinite(lr):
        raise InvalidInputError("error.value.number-above", name="--lr", low=0, got=str(lr))
    vocab = Vocab(("h", "e", "l", "o"))
    inputs, targets = vocab.encode("hell"), vocab.encode("ello")
    model = MinCharRNN(len(vocab), hidden, seed=seed)
    losses = []
    for it in range(1, iters + 1):
        loss, _ = _step(model, inputs, targets, model.zero_state(), lr, it)
        losses.append(loss)
    steps, h = [], model.zero_state()
    for x, y in zip(inputs, targets, strict=True):
        probs, h = model.step_probs(h, x)
        if not np.isfinite(probs).all():
            raise _diverged(Message("error.minrnn.part.scores-overflowed"), iters, lr)
        steps.append(
            HelloStep(
                vocab.chars[x], vocab.chars[y], dict(zip(vocab.chars, probs.tolist(), strict=True))
            )
        )
    return steps, losses
