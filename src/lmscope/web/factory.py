"""The app of ``lmscope serve``, built from its settings: in the serving process itself, or
in each worker process of ``lmscope serve --workers N``.

With several workers, uvicorn's own process manager runs N processes behind one port (the
kernel hands each new connection to one of them); each imports ``app_from_env`` by name,
reads the settings that ``lmscope serve`` put in the environment (``LMSCOPE_SERVE``, JSON)
and loads its own model, trace cache and work queue. N workers answer about N times the
model work of one where there are cores for them, for N times the memory.
"""

from __future__ import annotations

import gc
import json
import os
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

from lmscope import i18n
from lmscope.engine.weight_memory import give_back_freed_memory

ENV = "LMSCOPE_SERVE"

__all__ = [
    "ENV",
    "ServeSettings",
    "app_from_env",
    "build_app",
    "explainable",
    "explained",
    "rnn_models",
    "settle",
]


@dataclass
class ServeSettings:
    model: str | None = None  # the first --model (None: the default model)
    compare: list[str] = field(default_factory=list)
    rnn: list[str] = field(default_factory=list)
    cache_mb: int = 1024
    threads: int | None = None
    max_wait: float = 60.0
    dtype: str = "float32"  # the Transformer's precision (lmscope serve --dtype)
    more: list[str] = field(default_factory=list)  # the further --model values, explained too

    def specs(self) -> list[str]:
        """What opened each model to explain, in order (the default model by its name)."""
        from lmscope.engine.loading import default_model

        return [self.model or default_model(), *self.more]

    def to_env(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_env(cls, text: str) -> ServeSettings:
        return cls(**json.loads(text))


def _warn(text: str) -> None:
    print(i18n.text("report.serve.warning", text=text), file=sys.stderr)


def rnn_models(names: list[str], warn: Callable[[str], None] = _warn) -> list:
    """The char models for /rnn: those named, else the shipped char models (the page can
    switch between them: War and Peace for prose, the stdlib LSTM for code); 'none': none."""
    from lmscope.engine.loading import load_char_model, shipped_char_models
    from lmscope.errors import LmscopeError

    if [n.lower() for n in names] == ["none"]:
        return []
    if names:
        return [load_char_model(n) for n in names]
    models = []
    for name in shipped_char_models():
        try:
            models.append(load_char_model(name))
        except LmscopeError as err:  # the main page still works: say why a model is missing
            warn(i18n.text("report.serve.rnn-model-skipped", name=name, error=err))
    return models


def build_app(settings: ServeSettings, model=None, warn: Callable[[str], None] = _warn, more=None):
    """The web app for ``settings`` (``model`` and ``more``: already loaded, else loaded
    here). The listing of this machine's models starts when first asked for (``lmscope
    serve`` starts it as it begins to serve)."""
    import lmscope
    from lmscope.web.app import create_app

    if model is None:
        model = lmscope.load(settings.model, dtype=settings.dtype)
    if more is None:
        more = [explained(name, settings.dtype) for name in settings.more]
    others = [lmscope.load(name) for name in settings.compare]  # any family: char-RNNs too
    app = create_app(
        model,
        cache_bytes=settings.cache_mb << 20,
        compare=others,
        rnn=rnn_models(settings.rnn, warn),
        wait_s=settings.max_wait,
        more=more,
        specs=settings.specs(),
    )
    app.state.store.work.on_idle = give_back_freed_memory  # see limits.keep_freed_memory
    return app


def explained(name: str, dtype: str = "float32"):
    """A further model to explain (``--model``), in the served precision: one line when it
    cannot be (a char model has /rnn: ``--rnn``)."""
    import lmscope

    return explainable(lmscope.load(name), name, dtype)


def explainable(model, name: str | None, dtype: str = "float32"):
    """``model`` (opened as ``name``) in the served precision, when the explainer can show it;
    a char model is refused in one line saying how /rnn serves it."""
    from lmscope.errors import InvalidInputError

    if not model.capabilities.trace:
        raise InvalidInputError(
            "error.serve.needs-transformer",
            name=model.name,
            arch=model.capabilities.family.upper(),
            command=f"lmscope serve --rnn {name}",
        )
    if dtype != "float32":
        model.to_precision(dtype)
    return model


def settle() -> None:
    """Move everything loaded so far (the model, its tokenizer's tables, the libraries: some
    200,000 objects) out of the garbage collector's sight: a full collection then takes
    milliseconds instead of the ~0.4 s that froze every request, cheap ones too, under load."""
    gc.collect()
    gc.freeze()


def app_from_env():
    """The app of one worker of ``lmscope serve --workers N`` (uvicorn calls this by name)."""
    import torch

    from lmscope.web.limits import keep_freed_memory, limit_malloc_arenas

    settings = ServeSettings.from_env(os.environ[ENV])
    limit_malloc_arenas()
    keep_freed_memory()
    if settings.threads is not None:
        torch.set_num_threads(settings.threads)
    app = build_app(settings, warn=lambda text: None)  # the serving command said it once
    app.state.served.on_disk.start()  # the model menu's listing, in the background
    settle()
    return app
