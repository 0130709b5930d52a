"""Request and response of ``POST /api/step``: one of the 20 steps as typed data, the same
pydantic model ``lmscope explain --json`` prints for it (built in ``lmscope.explain``).

Which model a step answers with depends on the architecture (``explain.modern``): GPT-2's
positional encoding is learned vectors, a Llama-family model's is RoPE; its norms are RMSNorm
and its MLP is SwiGLU. Each such model carries a ``kind`` that says which it is. What a family
built on the Llama recipe adds (Gemma 3, Qwen3, Phi-3, a mixture of experts) comes beside the
step's data as ``family_data`` (``explain.family_views``), each view named by its ``kind``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from lmscope.explain import step_data as sd
from lmscope.explain.block import LayerNormView
from lmscope.explain.family_views import FamilyData
from lmscope.explain.modern import RMSNormView, RopeStep, SwiGLUStep
from lmscope.web.schemas import PositionRequest, Sampling

StepData = (
    sd.TransformerStep
    | sd.HowItWorksStep
    | sd.ArchitectureStep
    | sd.EmbeddingStep
    | sd.TokenEmbeddingStep
    | sd.PositionalEncodingStep
    | RopeStep
    | sd.BlocksStep
    | sd.SelfAttentionStep
    | sd.QKVStep
    | sd.MultiHeadStep
    | sd.MaskedAttentionStep
    | sd.AttentionOutputStep
    | sd.MLPStep
    | SwiGLUStep
    | sd.LogitsStep
    | sd.ProbabilitiesStep
    | sd.TemperatureStep
    | sd.SamplingStep
    | sd.ResidualStep
    | LayerNormView
    | RMSNormView
    | sd.DropoutStep
)


class StepRequest(PositionRequest):
    key: str = Field(..., max_length=40, description="a step key of GET /api/steps")
    layer: int = Field(0, ge=0)
    head: int = Field(0, ge=0)
    norm: Literal["ln1", "ln2", "final"] = Field(
        "ln1", description="which norm the layernorm step shows"
    )
    sampling: Sampling = Field(default_factory=Sampling)


class StepResponse(BaseModel):
    number: int
    key: str
    family: str = Field(..., description="the architecture the data and texts are for")
    probes: list[str] = Field(..., description="the probes this step reads, layer filled in")
    data: StepData
    family_data: list[FamilyData] = Field(
        default_factory=list,
        description="what the model's family adds to the step, by kind: embed-scale, sandwich, "
        "qk-norm, geglu, sliding-window, fused, router ([] for GPT-2 and the Llama recipe)",
    )
