"""How an architecture tells a step differently from GPT-2, for ``explain.catalogue``.

``LLAMA`` covers the Llama family (Llama, SmolLM2, Qwen2, Mistral), every one of the 20 steps:
each text says what GPT-2 does and what this model does instead (or that it does the same).
Placeholders such as ``{n_kv_head}`` are filled by the page from the served model's facts.
"""

from __future__ import annotations

from dataclasses import dataclass, field

Lang = dict[str, str]  # language ("en", "zh") -> text


@dataclass(frozen=True)
class Variant:
    """What one architecture says differently about a step; None/empty keeps the default."""

    title: Lang = field(default_factory=dict)
    summary: str | None = None
    text: Lang = field(default_factory=dict)
    probes: tuple[str, ...] | None = None  # the probes this architecture's step reads
    layer: bool | None = None  # the step shows one layer here (None: as the default says)
    head: bool | None = None  # ... and one attention head


LLAMA: dict[str, Variant] = {
    "transformer": Variant(
        title={
            "en": "What is a Transformer (Llama family)",
            "zh": "什么是 Transformer（Llama 家族）",
        },
        summary=(
            "A decoder-only Transformer of the Llama family: GPT-2's plan, with RoPE, "
            "RMSNorm, grouped-query attention and a SwiGLU MLP."
        ),
        text={
            "en": (
                "{model} is a decoder-only Transformer of the Llama family (Llama, SmolLM2, "
                "Qwen2, Mistral). Its plan is GPT-2's: read a sequence of tokens and, at every "
                "position, output a probability distribution over the next token. Four parts "
                "differ: positions rotate the queries and keys (RoPE) instead of adding a "
                "vector to the embedding; RMSNorm replaces LayerNorm; several query heads "
                "share one key/value head (grouped-query attention); and the MLP is gated "
                "(SwiGLU) instead of using GELU. Every number on this page comes from a "
                "forward pass of {model} on your prompt."
            ),
            "zh": (
                "{model} 是 Llama 家族（Llama、SmolLM2、Qwen2、Mistral）的仅解码器 "
                "Transformer。整体思路与 GPT-2 相同：读入一串 token，在每个位置输出下一个 "
                "token 的概率分布。有四处不同：位置信息靠旋转 query 和 key 注入（RoPE），"
                "而不是把位置向量加到嵌入上；用 RMSNorm 代替 LayerNorm；多个 query 头共享"
                "一个 key/value 头（分组查询注意力，GQA）；MLP 是带门控的 SwiGLU，不再用 "
                "GELU。本页每个数字都来自 {model} 在你的提示词上真实运行的一次前向计算。"
            ),
        },
    ),
    "how-it-works": Variant(
        text={
            "en": (
                "Generation works as in GPT-2: run the model on the tokens so far, take the "
                "distribution after the last position, pick a token, append it, run again; "
                "one pass predicts a next token at every position at once. What differs is "
                "the training: an instruction-tuned model such as SmolLM2 learned from "
                "conversations. Switch on Chat to wrap your prompt in its chat template: the "
                "tokens then show the special markers (<|im_start|>, <|im_end|>) it really "
                "reads, and Generate stops at the end of its turn."
            ),
            "zh": (
                "生成过程与 GPT-2 相同：用已有的 token 运行模型，取最后一个位置之后的分布，"
                "选出一个 token 接到末尾，再运行一次；一次运行就能在每个位置同时预测下一个 "
                "token。不同之处在训练：SmolLM2 这类指令微调模型是在对话上训练的。打开“对话"
                "模式”，提示词会被套进它的对话模板，token 中会出现它真正读到的特殊标记"
                "（<|im_start|>、<|im_end|>），生成也会在它这一轮回答结束时停下。"
            ),
        },
    ),
    "architecture": Variant(
        summary="Embedding (no position vectors), then N blocks, a final RMSNorm, the logits.",
        text={
            "en": (
                "Three stages, as in GPT-2. The embedding turns each token id into a vector of "
                "d_model = {d_model} numbers, but adds no position vector (GPT-2 does; here "
                "positions act inside attention). {n_layer} blocks then refine the vectors, "
                "each as RMSNorm → grouped-query attention with rotary positions → add, then "
                "RMSNorm → SwiGLU MLP → add. A final RMSNorm and the unembedding give one "
                "score per vocabulary token. Click any part of the pipeline above to open its "
                "step."
            ),
            "zh": (
                "和 GPT-2 一样分三段。嵌入层把每个 token id 变成 d_model = {d_model} "
                "维的向量，但不加位置向量（GPT-2 会加；这里位置信息在注意力内部起作用）。"
                "随后 {n_layer} 个 block 反复加工这些向量，每个 block 依次是 RMSNorm → "
                "带旋转位置编码的分组查询注意力 → 残差相加，再 RMSNorm → SwiGLU MLP → "
                "残差相加。最后经过最终的 RMSNorm 和反嵌入，为每个词表 token 得到一个分数。"
                "点击上方流程图的任意部分即可打开对应步骤。"
            ),
        },
    ),
    "embedding": Variant(
        summary="Each token becomes its row of the embedding matrix; no position vector is added.",
        text={
            "en": (
                "As in GPT-2, each token id selects its row of the token embedding matrix W_E "
                "({vocab} × {d_model}). GPT-2 then adds a learned position vector from W_P; "
                "this model adds nothing, so the vector entering the first block is the token "
                "embedding alone, the same at position 0 or 500. Where a token stands enters "
                "later, inside every attention layer, as a rotation of queries and keys "
                "(step 6)."
            ),
            "zh": (
                "与 GPT-2 一样，每个 token id 从 token 嵌入矩阵 W_E（{vocab} × {d_model}）"
                "中取出自己的一行。GPT-2 接着会加上 W_P 中学到的位置向量；这个模型什么也不加，"
                "所以进入第一个 block 的就是 token 嵌入本身，同一个 token 在第 0 位和第 500 "
                "位完全一样。token 的位置要到后面才起作用：在每一层注意力里以旋转 query 和 "
                "key 的方式注入（第 6 步）。"
            ),
        },
        probes=("hook_embed", "blocks.0.hook_resid_pre"),
    ),
    "token-embedding": Variant(
        text={
            "en": (
                "Tokenization works as in GPT-2: a byte-level BPE tokenizer starts from single "
                "bytes and applies its learned merges, lowest rank first; the list shows the "
                "merges that built the selected token. This model's vocabulary is its own "
                "({vocab} tokens, learned from its training data), so it cuts text differently "
                "from GPT-2's 50,257 tokens. Special tokens such as <|im_start|> are whole "
                "tokens that never come from merges. The token id then selects one row of W_E."
            ),
            "zh": (
                "分词方式与 GPT-2 相同：字节级 BPE 分词器从单个字节出发，按学到的合并规则从 "
                "rank 最小的开始合并；列表显示拼出所选 token 的那几次合并。这个模型有自己的"
                "词表（{vocab} 个 token，从它的训练数据中学得），所以切分文本的方式与 GPT-2 "
                "的 50,257 词表不同。<|im_start|> 这类特殊 token 是完整的单个 token，"
                "不来自任何合并。随后用 token id 从 W_E 中取出一行。"
            ),
        },
    ),
    "positional-encoding": Variant(
        title={"en": "Positional encoding: rotary (RoPE)", "zh": "位置编码：旋转位置编码（RoPE）"},
        summary=(
            "No position vectors: each query and key is rotated by angles proportional to its "
            "position, so q·k depends only on the distance between the two positions."
        ),
        text={
            "en": (
                "GPT-2 adds a learned vector per position to the embedding. This model adds "
                "nothing; instead every attention layer rotates each query and key by its "
                "position (RoPE). A head's d_head = {d_head} numbers form d_head / 2 pairs "
                "(dimension i with i + d_head / 2), and pair i turns by θ^(−2i/d_head) radians "
                "per position: the first pair a full radian, the last ones barely at all (the "
                "chart). Because both are rotated, the score of a query at position i and a key "
                "at position j depends only on i − j. The check takes this head's real q and k, "
                "rotates them to positions shifted by the same amount and gets the same score "
                "to float precision; moving the query alone changes it."
            ),
            "zh": (
                "GPT-2 为每个位置学习一个向量并加到嵌入上。这个模型什么也不加，而是在每一层"
                "注意力里按位置旋转每个 query 和 key（RoPE）。一个头的 d_head = {d_head} "
                "个数组成 d_head / 2 对（第 i 维与第 i + d_head / 2 维），第 i 对每前进一个"
                "位置转过 θ^(−2i/d_head) 弧度：第一对转 1 弧度，最后几对几乎不动（见图）。"
                "由于 query 和 key 都被旋转，位置 i 的 query 与位置 j 的 key 的分数只取决于"
                "距离 i − j。下面的检验取这个头真实的 q 和 k，把两者平移同样的距离后重新旋转，"
                "得到的分数在浮点精度内完全相同；只移动 query 时分数就变了。"
            ),
        },
        probes=(
            "blocks.{L}.attn.hook_q",
            "blocks.{L}.attn.hook_rot_q",
            "blocks.{L}.attn.hook_k",
            "blocks.{L}.attn.hook_rot_k",
            "blocks.{L}.attn.hook_attn_scores_raw",
        ),
        layer=True,  # the rotation acts on a layer's queries and keys, per head
        head=True,
    ),
    "blocks": Variant(
        text={
            "en": (
                "As in GPT-2, the model stacks {n_layer} blocks with the same shape and "
                "different weights, and each adds two updates to the residual stream, the "
                "attention output and the MLP output; nothing is overwritten. Inside a block "
                "the norms are RMSNorm, attention shares key/value heads and the MLP is "
                "SwiGLU. The chart shows the size of the selected position's vector entering "
                "and leaving each block."
            ),
            "zh": (
                "与 GPT-2 一样，模型堆叠了 {n_layer} 个形状相同、权重不同的 block，每个 "
                "block 往残差流里加上两份更新：注意力输出和 MLP 输出，原有内容不会被覆盖。"
                "不同的是 block 内部：归一化用 RMSNorm，注意力共享 key/value 头，MLP 是 "
                "SwiGLU。图中是所选位置的向量进入和离开每个 block 时的大小（L2 范数）。"
            ),
        },
    ),
    "self-attention": Variant(
        text={
            "en": (
                "Attention works as in GPT-2: each head gives every position weights over "
                "itself and the earlier positions (each row sums to 1) and averages their "
                "value vectors. The heads differ: in GPT-2 every head has its own keys and "
                "values; here the {n_head} query heads share {n_kv_head} key/value heads, "
                "{kv_group} query heads to each (grouped-query attention), so the heads of a "
                "group look at the same keys and values with different queries. The grid shows "
                "every query head of this layer: click one to select it."
            ),
            "zh": (
                "注意力的工作方式与 GPT-2 相同：每个头为每个位置算出一组分配给它自己和前面"
                "各位置的权重（每行之和为 1），再对这些位置的 value 向量求加权平均。不同在于"
                "头的组织：GPT-2 的每个头都有自己的 key 和 value；这里 {n_head} 个 query 头"
                "共享 {n_kv_head} 个 key/value 头，每 {kv_group} 个 query 头共用一个"
                "（分组查询注意力），同组的头用不同的 query 去看同一组 key 和 value。"
                "下方小图列出本层所有的 query 头，点击即可切换。"
            ),
        },
    ),
    "qkv": Variant(
        summary=(
            "RMSNorm, then three matrices: W_Q gives n_head query heads, W_K and W_V only "
            "n_kv_head key and value heads."
        ),
        text={
            "en": (
                "GPT-2 applies LayerNorm and one matrix W_QKV that gives q, k and v, each "
                "d_model wide. Here RMSNorm comes first, then three separate matrices: W_Q "
                "gives {n_head} query heads of {d_head} numbers, while W_K and W_V give only "
                "{n_kv_head} key and value heads each, so k and v are narrower than q. The key "
                "and value shown belong to the key/value head the selected query head reads. "
                "These q and k are taken before the rotation; RoPE turns them before the "
                "scores are computed (step 6)."
            ),
            "zh": (
                "GPT-2 先做 LayerNorm，再用一个矩阵 W_QKV 同时得到 q、k、v，各为 d_model "
                "维。这里先做 RMSNorm，再用三个独立的矩阵：W_Q 给出 {n_head} 个 query 头，"
                "每个 {d_head} 维；W_K 和 W_V 各只给出 {n_kv_head} 个 key 头和 value 头，"
                "所以 k 和 v 比 q 窄。图中的 key 和 value 属于所选 query 头读取的那个 "
                "key/value 头。这里的 q 和 k 是旋转之前的；计算分数之前 RoPE 会先旋转它们"
                "（第 6 步）。"
            ),
        },
    ),
    "multi-head": Variant(
        title={"en": "Heads and grouped-query attention", "zh": "多头与分组查询注意力（GQA）"},
        summary=(
            "Queries are cut into n_head heads; groups of them share n_kv_head key/value "
            "heads, which makes the KV cache smaller."
        ),
        text={
            "en": (
                "As in GPT-2, the queries are cut into {n_head} heads of d_head = {d_head} "
                "numbers. Unlike GPT-2, keys and values have only {n_kv_head} heads: query "
                "heads come in consecutive groups of {kv_group} and each group reads one "
                "key/value head. While generating, a model keeps every past key and value "
                "(the KV cache), so sharing them makes the cache {kv_group} times smaller than "
                "multi-head attention with one key/value head per query head. The numbers "
                "below are this model's, per token and for your prompt."
            ),
            "zh": (
                "与 GPT-2 一样，query 被切成 {n_head} 个头，每个 d_head = {d_head} 维。"
                "与 GPT-2 不同，key 和 value 只有 {n_kv_head} 个头：query 头按顺序每 "
                "{kv_group} 个分成一组，每组读取同一个 key/value 头。生成时模型要保存所有"
                "已经算过的 key 和 value（KV 缓存），共享它们让缓存比“每个 query 头各有一个 "
                "key/value 头”的多头注意力小 {kv_group} 倍。下面是这个模型每个 token "
                "以及你的提示词所需的真实字节数。"
            ),
        },
    ),
    "masked-attention": Variant(
        text={
            "en": (
                "As in GPT-2: raw scores QKᵀ, scaled by 1/√d_head = {scale}, then the causal "
                "mask sets every later key to −∞ and softmax turns each row into weights that "
                "sum to 1. Two differences hide in QKᵀ: q and k are the rotated ones "
                "(hook_rot_q, hook_rot_k), so each score already reflects the distance between "
                "the two positions, and k comes from the key/value head this query head shares "
                "with its group. The table lists the selected query's row at every stage."
            ),
            "zh": (
                "与 GPT-2 相同：先算原始分数 QKᵀ，乘以 1/√d_head = {scale}，因果掩码把所有"
                "后面位置的 key 设为 −∞，softmax 把每一行变成和为 1 的权重。QKᵀ 里藏着两处"
                "不同：q 和 k 是旋转之后的（hook_rot_q、hook_rot_k），所以每个分数已经包含了"
                "两个位置之间的距离；k 来自这个 query 头与同组共享的 key/value 头。"
                "表格列出所选查询位置在每个阶段的那一行。"
            ),
        },
    ),
    "attention-output": Variant(
        text={
            "en": (
                "As in GPT-2, each head's output z is its attention weights times the values "
                "of the key/value head it reads, d_head numbers per position; the {n_head} "
                "outputs are concatenated back to {n_head} × {d_head} numbers and multiplied by "
                "the output projection W_O. GPT-2 adds a bias after W_O; this family usually "
                "has none (a bias is drawn only if the model has one). Equivalently, every head "
                "writes its own vector z_h·W_O[h] and the vectors are summed."
            ),
            "zh": (
                "与 GPT-2 一样，每个头的输出 z 等于它的注意力权重乘以它所读取的 key/value "
                "头的 value，每个位置 d_head 个数；{n_head} 个头的输出拼接回 {n_head} × "
                "{d_head} 个数，再乘以输出投影 W_O。GPT-2 在 W_O 之后还加一个偏置；这个家族"
                "通常没有（只有模型真有偏置时才会画出来）。等价地说，每个头各自写出向量 "
                "z_h·W_O[h]，再把这些向量相加。"
            ),
        },
    ),
    "mlp": Variant(
        title={"en": "MLP: SwiGLU", "zh": "MLP：SwiGLU（门控前馈网络）"},
        summary=(
            "Per position: gate and up projections to d_mlp, SiLU(gate) × up, then a down "
            "projection back to d_model. No mixing across positions."
        ),
        text={
            "en": (
                "GPT-2's MLP is an up-projection to 4 × d_model, GELU, and a down-projection. "
                "This model's is gated (SwiGLU): the RMSNorm output goes through two "
                "projections to d_mlp = {d_mlp} numbers, the gate and the up; SiLU(gate) = "
                "gate · sigmoid(gate) decides how much of each up feature passes (their "
                "product), and W_down maps the product back to d_model = {d_model}. With three "
                "matrices instead of two, d_mlp is smaller than 4 × d_model for a similar "
                "number of weights. The chart puts this position's real gate values on the "
                "SiLU curve."
            ),
            "zh": (
                "GPT-2 的 MLP 是：线性层扩展到 4 × d_model，GELU，再线性层映射回来。这个模型"
                "的 MLP 带门控（SwiGLU）：RMSNorm 的输出经过两个投影，各得到 d_mlp = {d_mlp} "
                "个数，分别是 gate（门）和 up；SiLU(gate) = gate · sigmoid(gate) 决定每个 "
                "up 特征能通过多少（两者相乘），再由 W_down 把乘积映射回 d_model = {d_model} "
                "维。因为用了三个矩阵而不是两个，d_mlp 比 4 × d_model 小，权重总数相近。"
                "图中把该位置真实的 gate 值画在 SiLU 曲线上。"
            ),
        },
        probes=(
            "blocks.{L}.ln2.hook_out",
            "blocks.{L}.mlp.hook_pre",
            "blocks.{L}.mlp.hook_pre_linear",
            "blocks.{L}.mlp.hook_post",
            "blocks.{L}.hook_mlp_out",
        ),
    ),
    "logits": Variant(
        summary=(
            "The final RMSNorm output times the unembedding (the embedding matrix when tied, "
            "else lm_head): one score per vocabulary token."
        ),
        text={
            "en": (
                "As in GPT-2, a final norm and the unembedding turn the last vector into one "
                "score per token, {vocab} logits; the norm is RMSNorm instead of LayerNorm. "
                "GPT-2 always reuses the token embedding matrix W_E (transposed) as the "
                "unembedding; a Llama-family model does so only if it ties them (SmolLM2 "
                "does), otherwise it has a separate matrix, lm_head (Llama 2 and 3 do). "
                "Logits are not probabilities; they can be any real number."
            ),
            "zh": (
                "与 GPT-2 一样，最终的归一化和反嵌入把最后的向量变成每个 token 一个分数，"
                "共 {vocab} 个 logit；归一化用 RMSNorm 而不是 LayerNorm。GPT-2 总是复用 "
                "token 嵌入矩阵 W_E（转置）作反嵌入；Llama 家族的模型只有在共享权重时才这样做"
                "（SmolLM2 是），否则有一个单独的矩阵 lm_head（Llama 2 和 3 就是）。"
                "logit 不是概率，可以是任意实数。"
            ),
        },
    ),
    "probabilities": Variant(
        text={
            "en": (
                "Exactly as in GPT-2, softmax turns logits into probabilities: p_i = exp(z_i) "
                "/ Σ_j exp(z_j). Every probability is positive, they sum to 1, and only "
                "differences between logits matter. The sum runs over this model's whole "
                "vocabulary of {vocab} tokens, special tokens included, not only the rows shown."
            ),
            "zh": (
                "与 GPT-2 完全相同，softmax 把 logits 变成概率：p_i = exp(z_i) / Σ_j "
                "exp(z_j)。每个概率都为正，总和为 1，只有 logit 之间的差值才有意义。求和覆盖"
                "这个模型的全部 {vocab} 个 token（包括特殊 token），而不只是表中列出的几行。"
            ),
        },
    ),
    "temperature": Variant(
        text={
            "en": (
                "Temperature works exactly as in GPT-2: the logits are divided by T before "
                "softmax. T < 1 sharpens the distribution, T > 1 flattens it, and T → 0 is "
                "greedy decoding. The curves show the top tokens' probabilities for every "
                "temperature; the line marks your setting. The page recomputes exactly, in "
                "the browser, as you move the slider."
            ),
            "zh": (
                "温度的作用与 GPT-2 完全相同：softmax 之前把 logits 除以 T。T < 1 "
                "让分布更尖锐，T > 1 让分布更平坦，T → 0 就是贪心解码。曲线画出前几名 token "
                "在各个温度下的概率，竖线是当前设置。拖动滑块时页面在浏览器里精确地重新计算。"
            ),
        },
    ),
    "sampling": Variant(
        text={
            "en": (
                "The strategies are the same as for GPT-2: greedy takes the most likely token, "
                "top-k keeps the k most likely, top-p the smallest set whose probability "
                "reaches p, min-p drops tokens below min-p times the top probability; the "
                "survivors are renormalised and one is drawn with the seed. An "
                "instruction-tuned model ends its answer with an end-of-turn token "
                "(<|im_end|> for SmolLM2), and Generate stops there."
            ),
            "zh": (
                "采样策略与 GPT-2 相同：贪心解码取概率最高的 token；top-k 保留最可能的 k 个；"
                "top-p 保留累计概率达到 p 的最小集合；min-p 去掉低于“min-p × 最高概率”的 "
                "token；剩下的重新归一化，再用种子抽取一个。指令微调模型用一个回合结束 token "
                "结束回答（SmolLM2 是 <|im_end|>），点“生成”时到那里就会停下。"
            ),
        },
    ),
    "residual": Variant(
        summary=(
            "Attention and MLP outputs are added to their input: x + Attention(RMSNorm(x)), "
            "then x + MLP(RMSNorm(x))."
        ),
        text={
            "en": (
                "As in GPT-2, the input of both sublayers is added to their output, but the "
                "norm inside is RMSNorm: x + Attention(RMSNorm(x)), then x + MLP(RMSNorm(x)). "
                "The residual stream carries information straight through the network and "
                "lets gradients flow in training. Each sum below is exactly the next recorded "
                "vector."
            ),
            "zh": (
                "与 GPT-2 一样，两个子层的输入都加到输出上，只是里面的归一化换成了 RMSNorm："
                "先 x + Attention(RMSNorm(x))，再 x + MLP(RMSNorm(x))。残差流让信息直接穿过"
                "整个网络，也让训练时梯度更容易传回去。下面每个和都恰好等于下一个探针记录的向量。"
            ),
        },
    ),
    "layernorm": Variant(
        title={"en": "RMS normalization (RMSNorm)", "zh": "均方根归一化（RMSNorm）"},
        summary=(
            "Before attention and before the MLP, each vector is divided by its root mean "
            "square and multiplied by a learned gain: no centring, no shift."
        ),
        text={
            "en": (
                "GPT-2's LayerNorm subtracts the mean, divides by the standard deviation, "
                "multiplies by γ and adds β. RMSNorm keeps only the scaling: divide by the root "
                "mean square √(mean(x²) + ε), multiply by a learned gain. No mean is "
                "subtracted and there is no β, so it is cheaper, and the input's mean stays in "
                "the normalized vector (its root mean square, not its standard deviation, is "
                "1). As in GPT-2 it comes before attention and before the MLP in every block, "
                "and once more after the last block."
            ),
            "zh": (
                "GPT-2 的 LayerNorm 先减去均值，再除以标准差，乘以 γ，加上 β。RMSNorm 只保留"
                "缩放：除以均方根 √(mean(x²) + ε)，再乘以可学习的增益（gain）。不减均值，也"
                "没有 β，所以计算更省；输入的均值会保留在归一化后的向量里（它的均方根为 1，"
                "而不是标准差为 1）。与 GPT-2 一样，每个 block 在注意力和 MLP 之前各做一次，"
                "最后一个 block 之后再做一次。"
            ),
        },
    ),
    "dropout": Variant(
        text={
            "en": (
                "As in GPT-2, dropout is switched off at inference: it is the identity. "
                "Llama-family models are usually pretrained without dropout at all (this "
                "model's rate is shown below); in training, dropout would zero each activation "
                "with probability p and scale the rest by 1/(1 − p). The example applies a rate "
                "of 0.1 to a real attention output (seeded mask) to show what that does."
            ),
            "zh": (
                "与 GPT-2 一样，推理时 dropout 是关闭的，也就是恒等映射。Llama 家族的模型"
                "预训练时通常根本不用 dropout（下面显示这个模型的比率）；训练时 dropout "
                "会以概率 p 把每个激活置零，其余乘以 1/(1 − p)。示例对一个真实的注意力输出"
                "施加 0.1 的比率（掩码用固定种子生成），展示它会怎样改变数值。"
            ),
        },
    ),
}
