"""The 20 steps as the explanation tells them: titles, a one-line summary and the page's text,
in English and Simplified Chinese, and which choices (layer, head) each step offers.

The list of steps itself (keys, numbers, the probes each reads) is ``lmscope.engine.steps``;
this catalogue adds what people read, once, for the CLI (``lmscope explain``) and the page
(``GET /api/steps``) alike. Placeholders such as ``{n_layer}`` in a text are filled by the page
from the served model's facts.

Texts are written for GPT-2. An architecture that does a step differently (RoPE instead of
learned positions, RMSNorm instead of LayerNorm, ...) adds a variant under its
``capabilities.family`` in ``VARIANTS``: only the fields that differ, per language, and the
probes its step reads when they differ (``explain.variants`` holds them).
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, Field

from lmscope.engine.steps import STEPS, STEPS_BY_KEY, Step
from lmscope.explain.variants import LLAMA, Lang, Variant

__all__ = ["TEXTS", "VARIANTS", "StepCatalogue", "StepDoc", "StepText", "Variant"]


@dataclass(frozen=True)
class StepText:
    title: Lang
    summary: str  # one line, English: the CLI's subtitle
    text: Lang  # the page's explanation
    layer: bool = False  # the step shows one layer (the page offers a layer choice)
    head: bool = False  # ... and one attention head


TEXTS: dict[str, StepText] = {
    "transformer": StepText(
        title={"en": "What is a Transformer", "zh": "什么是 Transformer"},
        summary="A decoder-only Transformer reads tokens and predicts the next one.",
        text={
            "en": (
                "This model is a decoder-only Transformer, the architecture behind "
                "GPT. It reads a sequence of tokens and, at every position, outputs a "
                "probability distribution over the next token. Nothing on this page "
                "is illustrative: every number comes from a forward pass of {model} "
                "on your prompt."
            ),
            "zh": (
                "这个模型是仅解码器（decoder-only）的 Transformer，也就是 GPT "
                "所用的架构。它读入一串 token，并在每个位置输出“下一个 "
                "token”的概率分布。本页没有示意用的假数据：每个数字都来自 {model} "
                "在你的提示词上真实运行的一次前向计算。"
            ),
        },
    ),
    "how-it-works": StepText(
        title={"en": "How Transformers work", "zh": "Transformer 如何工作"},
        summary=(
            "Generation repeats one step: predict a distribution over the next token, "
            "pick one, append it, predict again."
        ),
        text={
            "en": (
                "Text generation repeats one step: run the model on the tokens so "
                "far, take the distribution after the last position, pick a token "
                "(the sampling controls decide how), append it, run again. Thanks to "
                "the causal mask one pass predicts a next token at every position at "
                "once: the table shows what the model expected after each token and "
                "how much probability it gave the token that actually came next."
            ),
            "zh": (
                "文本生成就是同一步骤的重复：用已有的 token 运行模型，"
                "取最后一个位置之后的概率分布，按采样设置选出一个 token，接到末尾，"
                "再运行一次。由于有因果掩码，一次运行就能在每个位置同时预测下一个 "
                "token：下表列出模型在每个 token 之后的预测，以及它给实际出现的下一个 "
                "token 的概率。"
            ),
        },
    ),
    "architecture": StepText(
        title={"en": "Architecture", "zh": "整体架构"},
        summary="Embedding, then N identical blocks, then the output probabilities.",
        text={
            "en": (
                "Three stages. The embedding turns each token id into a vector of "
                "d_model = {d_model} numbers. {n_layer} identical blocks then refine "
                "these vectors: in each, attention lets positions exchange "
                "information and the MLP transforms each position on its own. A final "
                "LayerNorm and the unembedding turn the last vectors into one score "
                "per vocabulary token. Click any part of the pipeline above to open "
                "its step."
            ),
            "zh": (
                "分三段：嵌入层把每个 token id 变成 d_model = {d_model} 维的向量；"
                "随后 {n_layer} 个结构相同的 block 反复加工这些向量，每个 block "
                "里注意力让各位置交换信息，MLP 再对每个位置单独做变换；最后经过最终的 "
                "LayerNorm 和反嵌入，为词表中每个 token 得到一个分数。"
                "点击上方流程图的任意部分即可打开对应步骤。"
            ),
        },
    ),
    "embedding": StepText(
        title={"en": "Embedding", "zh": "嵌入"},
        summary=(
            "Each token becomes a d_model-dimensional vector: token embedding plus "
            "position embedding."
        ),
        text={
            "en": (
                "The model cannot compute with text, so each token becomes a vector: "
                "its row of the token embedding matrix W_E ({vocab} × {d_model}) plus "
                "the row of the position matrix W_P for its position. The sum enters "
                "the first block; it is the start of the residual stream."
            ),
            "zh": (
                "模型无法直接对文字做运算，所以每个 token 都要变成向量：取 token "
                "嵌入矩阵 W_E（{vocab} × {d_model}）中该 token 的那一行，"
                "再加上位置矩阵 W_P 中对应位置的那一行。两者之和进入第一个 block，"
                "也就是残差流的起点。"
            ),
        },
    ),
    "token-embedding": StepText(
        title={"en": "Tokenization and token embedding", "zh": "分词与 token 嵌入"},
        summary=(
            "Text is split into subword tokens; each token id selects a row of the "
            "embedding matrix."
        ),
        text={
            "en": (
                "A byte-level BPE tokenizer cuts text into tokens: frequent words are "
                "one token, rarer ones split into subwords, and any character can "
                "fall back to bytes (a Chinese character often takes two or three "
                "tokens). Starting from single bytes it applies its learned merges, "
                "lowest rank first; the list shows the merges that built the selected "
                "token. The token id then selects one row of W_E."
            ),
            "zh": (
                "字节级 BPE 分词器把文本切成 token：常见词是一个 token，"
                "少见的词拆成子词，任何字符都能退回到字节（一个汉字常常占两三个 token）"
                "。它从单个字节出发，按学到的合并规则从优先级最高（rank 最小）"
                "的开始合并；列表显示拼出所选 token 的那几次合并。随后用 token id 从 "
                "W_E 中取出一行。"
            ),
        },
    ),
    "positional-encoding": StepText(
        title={"en": "Positional encoding", "zh": "位置编码"},
        summary="GPT-2 learns one vector per position and adds it to the token embedding.",
        text={
            "en": (
                "Attention on its own treats its inputs as a set: it has no notion of "
                "order. GPT-2 learns one vector per position, up to the context "
                "length of {n_ctx}, and adds it to the token embedding, so “dog bites "
                "man” and “man bites dog” look different to the model. The chart "
                "shows how similar each position's vector is to the previous one."
            ),
            "zh": (
                "注意力本身把输入当作一个集合，不知道先后顺序。GPT-2 "
                "为每个位置（最多到上下文长度 {n_ctx}）学习一个向量，并把它加到 token "
                "嵌入上，这样“狗咬人”和“人咬狗”在模型看来才会不同。"
                "图中是每个位置向量与前一个位置向量的余弦相似度。"
            ),
        },
    ),
    "blocks": StepText(
        title={"en": "Repeated Transformer blocks", "zh": "重复的 Transformer block"},
        summary=(
            "Each block refines every position's vector: attention mixes positions, the "
            "MLP transforms each one."
        ),
        text={
            "en": (
                "The model stacks {n_layer} blocks with the same shape and different "
                "weights. Each block reads the residual stream and adds two updates "
                "to it, the attention output and the MLP output; nothing is "
                "overwritten. The chart shows the size of the selected position's "
                "vector entering and leaving each block."
            ),
            "zh": (
                "模型堆叠了 {n_layer} 个形状相同、权重不同的 block。每个 block "
                "读取残差流，并往里加上两份更新：注意力的输出和 MLP 的输出；"
                "原有内容不会被覆盖。图中是所选位置的向量进入和离开每个 block "
                "时的大小（L2 范数）。"
            ),
        },
        layer=True,
    ),
    "self-attention": StepText(
        title={"en": "Multi-head self-attention", "zh": "多头自注意力"},
        summary=(
            "Every position gathers information from itself and the earlier positions, weighted by "
            "relevance."
        ),
        text={
            "en": (
                "Attention is the only place where positions exchange information. "
                "Each of the {n_head} heads gives every position a set of weights "
                "over itself and the earlier positions, and takes the weighted "
                "average of their value vectors. Each heatmap row is a query "
                "position; its weights sum to 1. The grid shows every head of this "
                "layer: click one to select it."
            ),
            "zh": (
                "注意力是各位置之间交换信息的唯一途径。{n_head} "
                "个头各自为每个位置算出一组权重，分配给它自己和前面的各个位置，"
                "再按权重对这些位置的 value 向量求加权平均。"
                "热力图的每一行是一个查询位置，行内权重之和为 1。"
                "下方小图列出本层所有的头，点击即可切换。"
            ),
        },
        layer=True,
        head=True,
    ),
    "qkv": StepText(
        title={"en": "Query, key, value", "zh": "Query、Key、Value"},
        summary=(
            "A linear map of the LayerNorm output gives each position a query, a key and a value."
        ),
        text={
            "en": (
                "The block first applies LayerNorm (pre-LN). One linear map W_QKV "
                "then gives every position three vectors: a query (what this position "
                "is looking for), a key (what it can be found by) and a value (what "
                "it passes on when attended to). The score of query position i for "
                "key position j is the dot product of i's query and j's key."
            ),
            "zh": (
                "block 先做 LayerNorm（pre-LN），再用一个线性映射 W_QKV "
                "为每个位置生成三个向量：query（这个位置在找什么）、"
                "key（它能被什么样的查询找到）和 value（被关注时传出的内容）。"
                "查询位置 i 对键位置 j 的分数，就是 i 的 query 与 j 的 key 的点积。"
            ),
        },
        layer=True,
        head=True,
    ),
    "multi-head": StepText(
        title={"en": "Splitting into heads", "zh": "拆分成多个头"},
        summary=(
            "Q, K and V are cut into n_head slices of d_head = d_model / n_head; each "
            "head attends on its own."
        ),
        text={
            "en": (
                "Q, K and V, each d_model = {d_model} numbers, are cut into {n_head} "
                "slices of d_head = {d_head}. Each slice is a head that computes its "
                "own attention pattern, so heads can follow different relations: the "
                "previous token, an earlier copy of a word, punctuation. Each row "
                "below is one head."
            ),
            "zh": (
                "Q、K、V 各有 d_model = {d_model} 个数，被切成 {n_head} 段，每段 "
                "d_head = {d_head} 个数。每段就是一个头，独立计算自己的注意力模式，"
                "因此不同的头可以关注不同的关系：前一个 token、前文出现过的同一个词、"
                "标点符号等。下面每一行是一个头。"
            ),
        },
        layer=True,
        head=True,
    ),
    "masked-attention": StepText(
        title={"en": "Masked self-attention", "zh": "带掩码的自注意力"},
        summary=(
            "Scores QK^T are scaled by 1/sqrt(d_head), future positions are masked to "
            "-inf, and softmax turns each row into weights."
        ),
        text={
            "en": (
                "For one head: raw scores QKᵀ, scaled by 1/√d_head = {scale} so they "
                "do not grow with d_head; then the causal mask sets the score of "
                "every later key to −∞, because a position may not see the future; "
                "then softmax turns each row into weights that sum to 1 (e^−∞ = 0). "
                "The table lists the selected query's row at every stage."
            ),
            "zh": (
                "以一个头为例：先算原始分数 QKᵀ，再乘以 1/√d_head = {scale}，"
                "让分数大小不随 d_head 增长；接着因果掩码把所有“后面位置的 "
                "key”的分数设为 −∞，因为一个位置不能看到未来；最后 softmax "
                "把每一行变成和为 1 的权重（e^−∞ = 0）。"
                "表格列出所选查询位置在每个阶段的那一行。"
            ),
        },
        layer=True,
        head=True,
    ),
    "attention-output": StepText(
        title={"en": "Attention output and concatenation", "zh": "注意力输出与拼接"},
        summary=(
            "Each head's weighted sum of values is concatenated and projected back to d_model."
        ),
        text={
            "en": (
                "Each head's output z is its attention weights times the values: "
                "d_head numbers per position. The heads' outputs are concatenated "
                "back to d_model numbers and multiplied by the output projection W_O, "
                "plus a bias. Equivalently, every head writes its own vector "
                "z_h·W_O[h] and the vectors are summed."
            ),
            "zh": (
                "每个头的输出 z 等于它的注意力权重乘以 value，每个位置得到 d_head "
                "个数。各头的输出拼接回 d_model 个数，再乘以输出投影 W_O 并加上偏置。"
                "等价地说，每个头各自写出向量 z_h·W_O[h]，再把这些向量相加。"
            ),
        },
        layer=True,
        head=True,
    ),
    "mlp": StepText(
        title={"en": "MLP", "zh": "MLP（前馈网络）"},
        summary=(
            "Per position: expand to 4 x d_model, apply GELU, project back. No mixing "
            "across positions."
        ),
        text={
            "en": (
                "The MLP works on each position separately: LayerNorm, a linear map "
                "up to {d_mlp} numbers (4 × d_model), the GELU nonlinearity, which "
                "keeps positive inputs and squashes negative ones towards 0 (not quite "
                "monotonically: it dips to a minimum of about −0.17 near x ≈ −0.75 before "
                "rising back towards 0), and a linear map back to d_model. Attention moves "
                "information between positions; the MLP processes what each position holds."
            ),
            "zh": (
                "MLP 对每个位置单独计算：先做 LayerNorm，再用线性层扩展到 {d_mlp} "
                "维（4 × d_model），经过 GELU 非线性（正值基本保留，负值被压向 0；但它并不"
                "单调：在 x ≈ −0.75 附近先降到约 −0.17 的最小值，再回升趋近 0），"
                "最后用线性层映射回 d_model 维。注意力负责在位置之间搬运信息，MLP "
                "负责加工每个位置自己持有的信息。"
            ),
        },
        layer=True,
    ),
    "logits": StepText(
        title={"en": "Output logits", "zh": "输出 logits"},
        summary=(
            "The final LayerNorm output is multiplied by the (tied) embedding matrix: one "
            "score per vocabulary token."
        ),
        text={
            "en": (
                "After the last block a final LayerNorm normalizes each vector, and "
                "the unembedding multiplies it by the transposed token embedding "
                "matrix: the same W_E as in step 5, because GPT-2 ties the two. The "
                "result is one score, a logit, for each of the {vocab} tokens. Logits "
                "are not probabilities; they can be any real number."
            ),
            "zh": (
                "最后一个 block 之后，先用最终的 LayerNorm 归一化每个向量，再乘以 "
                "token 嵌入矩阵的转置——与第 5 步是同一个 W_E，因为 GPT-2 "
                "让输入嵌入和输出层共享权重。结果是词表中 {vocab} 个 token "
                "各自的一个分数，即 logit。logit 不是概率，可以是任意实数。"
            ),
        },
    ),
    "probabilities": StepText(
        title={"en": "Probabilities", "zh": "概率"},
        summary="Softmax turns logits into a probability distribution over the vocabulary.",
        text={
            "en": (
                "Softmax turns logits into probabilities: p_i = exp(z_i) / Σ_j "
                "exp(z_j). Every probability is positive, they sum to 1, and only "
                "differences between logits matter. The sum runs over the whole "
                "vocabulary of {vocab} tokens, not only the rows shown."
            ),
            "zh": (
                "softmax 把 logits 变成概率：p_i = exp(z_i) / Σ_j exp(z_j)。"
                "每个概率都为正，总和为 1，只有 logit 之间的差值才有意义。"
                "求和覆盖全部 {vocab} 个 token，而不只是表中列出的几行。"
            ),
        },
    ),
    "temperature": StepText(
        title={"en": "Temperature", "zh": "温度"},
        summary=(
            "Dividing logits by T before softmax sharpens (T < 1) or flattens (T > 1) the "
            "distribution."
        ),
        text={
            "en": (
                "Before softmax the logits are divided by a temperature T. T < 1 "
                "sharpens the distribution, T > 1 flattens it, and T → 0 is greedy "
                "decoding. The curves show the top tokens' probabilities for every "
                "temperature; the line marks your setting. Move the temperature "
                "slider: the page recomputes exactly, without asking the server."
            ),
            "zh": (
                "在 softmax 之前，logits 先除以温度 T。T < 1 让分布更尖锐，T > 1 "
                "让分布更平坦，T → 0 就是贪心解码。曲线画出前几名 token "
                "在各个温度下的概率，竖线是当前设置。拖动温度滑块，"
                "页面会在浏览器里精确地重新计算，不需要请求服务器。"
            ),
        },
    ),
    "sampling": StepText(
        title={"en": "Sampling strategies", "zh": "采样策略"},
        summary=(
            "Greedy takes the top token; top-k keeps the k best; top-p keeps the smallest "
            "set whose probability reaches p; min-p drops tokens far below the best."
        ),
        text={
            "en": (
                "Greedy always takes the most likely token. Top-k keeps the k most "
                "likely; top-p (nucleus) keeps the smallest set whose probability "
                "reaches p; min-p drops tokens below min-p times the top probability. "
                "The survivors are renormalised and one is drawn with the seed. "
                "Generate asks the server, which applies the same rules to the full "
                "vocabulary."
            ),
            "zh": (
                "贪心解码总是选概率最高的 token。top-k 只保留最可能的 k 个；"
                "top-p（核采样）保留累计概率达到 p 的最小集合；min-p "
                "去掉概率低于“min-p × 最高概率”的 token。剩下的候选重新归一化，"
                "再用种子随机抽取一个。点“生成”时由服务器在完整词表上执行同样的规则。"
            ),
        },
    ),
    "residual": StepText(
        title={"en": "Residual connections", "zh": "残差连接"},
        summary=(
            "Attention and MLP outputs are added to their input: x + F(x), so information "
            "and gradients flow straight through."
        ),
        text={
            "en": (
                "Around both sublayers the input is added to the output: x + "
                "Attention(LN(x)), then x + MLP(LN(x)). This residual stream carries "
                "information straight through the network and lets gradients flow in "
                "training. Each sum below is exactly the next recorded vector."
            ),
            "zh": (
                "两个子层外面都有残差连接：先 x + Attention(LN(x))，再 x + MLP(LN(x))。"
                "残差流让信息直接穿过整个网络，也让训练时梯度更容易传回去。"
                "下面每个和都恰好等于下一个探针记录的向量。"
            ),
        },
        layer=True,
    ),
    "layernorm": StepText(
        title={"en": "Layer normalization", "zh": "层归一化"},
        summary=(
            "Before attention and before the MLP (pre-LN), each vector is centred, "
            "divided by its standard deviation, then scaled by gamma and shifted by beta."
        ),
        text={
            "en": (
                "LayerNorm rescales one position's vector: subtract its mean, divide "
                "by its standard deviation √(variance + ε), multiply by the learned γ "
                "and add the learned β. GPT-2 applies it before attention and before "
                "the MLP in every block (pre-LN), and once more after the last block."
            ),
            "zh": (
                "LayerNorm 对单个位置的向量做缩放：减去均值，除以标准差 √(方差 + ε)，"
                "再乘以可学习的 γ、加上可学习的 β。GPT-2 在每个 block 里的注意力和 "
                "MLP 之前各做一次（pre-LN），最后一个 block 之后再做一次。"
            ),
        },
        layer=True,
    ),
    "dropout": StepText(
        title={"en": "Dropout", "zh": "Dropout（随机失活）"},
        summary=(
            "During training a random share of activations is zeroed and the rest scaled "
            "by 1/(1-p); at inference dropout is the identity."
        ),
        text={
            "en": (
                "In training, dropout zeroes each activation with probability p and "
                "scales the rest by 1/(1 − p), so the network cannot lean on any "
                "single path. At inference, as here, it is switched off: the "
                "identity. Below, a real attention output and what a training-mode "
                "dropout would do to it (seeded mask)."
            ),
            "zh": (
                "训练时，dropout 以概率 p 把每个激活置零，其余的乘以 1/(1 − p)，"
                "让网络无法依赖某一条固定路径。推理时（比如现在）它是关闭的，"
                "也就是恒等映射。下面是一个真实的注意力输出，以及训练模式下的 dropout "
                "会把它变成什么样（掩码用固定种子生成）。"
            ),
        },
        layer=True,
    ),
}

# family -> step key -> what that architecture does differently
VARIANTS: dict[str, dict[str, Variant]] = {"llama": LLAMA}


class StepDoc(BaseModel):
    """One step as the page and the CLI show it."""

    number: int
    key: str
    probes: list[str] = Field(..., description="probe names; {L} stands for the layer")
    layer: bool = Field(..., description="the step shows one layer")
    head: bool = Field(..., description="the step shows one attention head")
    title: Lang = Field(..., description="per language: en, zh")
    summary: str
    text: Lang = Field(..., description="per language; {placeholders} are model facts")


class StepCatalogue(BaseModel):
    family: str = Field(..., description="the architecture the texts are written for")
    steps: list[StepDoc]


def step_text(key: str, family: str | None = None) -> StepText:
    """The texts of step ``key`` for an architecture (its variant over the default)."""
    base = TEXTS[key]
    variant = VARIANTS.get(family or "", {}).get(key)
    if variant is None:
        return base
    return StepText(
        title=base.title | variant.title,
        summary=variant.summary or base.summary,
        text=base.text | variant.text,
        layer=base.layer if variant.layer is None else variant.layer,
        head=base.head if variant.head is None else variant.head,
    )


def step_probes(key: str, family: str | None = None) -> tuple[str, ...]:
    """The probes step ``key`` reads in an architecture ({L}: the layer)."""
    variant = VARIANTS.get(family or "", {}).get(key)
    if variant is not None and variant.probes is not None:
        return variant.probes
    return STEPS_BY_KEY[key].probes


def probe_names(key: str, family: str | None, layer: int) -> list[str]:
    return [p.format(L=layer) for p in step_probes(key, family)]


def step_doc(step: Step, family: str | None = None) -> StepDoc:
    text = step_text(step.key, family)
    return StepDoc(
        number=step.number,
        key=step.key,
        probes=list(step_probes(step.key, family)),
        layer=text.layer,
        head=text.head,
        title=text.title,
        summary=text.summary,
        text=text.text,
    )


def catalogue(family: str) -> StepCatalogue:
    """Every step, in order, with the texts for ``family``."""
    return StepCatalogue(family=family, steps=[step_doc(s, family) for s in STEPS])


def _check() -> None:
    keys = [s.key for s in STEPS]
    if list(TEXTS) != keys:
        raise RuntimeError(f"explain.catalogue covers {list(TEXTS)}, the steps are {keys}")
    for family, steps in VARIANTS.items():
        unknown = set(steps) - set(keys)
        if unknown:
            raise RuntimeError(f"variants of {family!r} name unknown steps: {sorted(unknown)}")


_check()
