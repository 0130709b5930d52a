"""The response of ``GET /api/models``: the models this server explains (the page's model menu
switches between them with ``?model=``), and the other models on this machine with the command
that serves each, or why lmscope cannot open it (the listing of ``lmscope models``)."""

from __future__ import annotations

from pydantic import BaseModel, Field


class ServedModel(BaseModel):
    """A model this server explains."""

    name: str = Field(..., description="its name here: what ?model= takes on every API route")
    model: str = Field(..., description="the model's own name")
    family: str = Field(..., description="its architecture's family: gpt2, llama, gemma3...")
    n_params: int
    n_layer: int
    default: bool = Field(..., description="the one explained when a request names none")


class Problem(BaseModel):
    """Why lmscope cannot open a model: a catalog message, said in the request's language."""

    id: str = Field(..., description="catalog message id, e.g. error.store.family-cannot-run")
    said: str = Field(..., description="the message in the request's language (?lang=)")


class DiskModel(BaseModel):
    """A model on this machine that this server does not explain (``lmscope models --json``
    lists the same)."""

    name: str = Field(..., description="what --model takes: ollama:qwen3:0.6b, a path...")
    store: str = Field(..., description="shipped, package, hf-cache, ollama or lmstudio")
    format: str = Field(..., description="gguf or folder")
    family: str | None = None
    n_params: int | None = None
    quantization: str | None = None
    size_bytes: int = 0
    experts: int | None = None
    command: str | None = Field(
        None, description="the command that serves it beside the served models (null: it cannot)"
    )
    page: str = Field(
        "/", description="the page that shows it: / (the explainer), or /rnn for a char model"
    )
    on_page: bool = Field(
        False, description="this server already shows it there (a char model on /rnn)"
    )
    problem: Problem | None = Field(None, description="why lmscope cannot open it (null: it can)")


class ModelsResponse(BaseModel):
    """The served models, then the others on this machine."""

    served: list[ServedModel]
    ready: bool = Field(
        ..., description="whether the machine's stores were read: false while the server looks"
    )
    on_disk: list[DiskModel] = Field(default_factory=list)
    error: Problem | None = Field(None, description="why the stores could not be read")
