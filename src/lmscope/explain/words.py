"""The words ``lmscope explain`` prints around the numbers, in Chinese: its labels and short
lines (and the one-line summaries of the 20 steps, whose titles and texts are in
``explain.catalogue``). The other terminal views (``lens``, ``ablate``, ``compare``,
``neurons``, ``minrnn``, ``sample``) name their texts in the catalog (``lmscope.i18n``).

English is the key, as the CLI writes it; ``{name}`` stands for a value filled in when the
line is printed, so ``translate("head 3 z", "zh")`` finds the entry ``"head {h} z"`` and
gives ``"头 3 的 z"``. A line without an entry stays English, and the tests that run every
command in Chinese look for English left over. Kept in one table so both languages can be
reviewed side by side; no import beyond the standard library, so ``lmscope --help`` stays
fast.
"""

from __future__ import annotations

import re
from functools import cache

# --- the 20 steps' one-line summaries (English: explain.catalogue and explain.variants) --------
SUMMARIES = {
    "A decoder-only Transformer reads tokens and predicts the next one.": (
        "仅解码器的 Transformer 读入 token，预测下一个 token。"
    ),
    "Generation repeats one step: predict a distribution over the next token, pick one, "
    "append it, predict again.": (
        "生成就是重复同一步：预测下一个 token 的概率分布，选出一个，接到末尾，再预测。"
    ),
    "Embedding, then N identical blocks, then the output probabilities.": (
        "先嵌入，再经过 N 个结构相同的 block，最后输出概率。"
    ),
    "Each token becomes a d_model-dimensional vector: token embedding plus position "
    "embedding.": "每个 token 变成一个 d_model 维向量：token 嵌入加上位置嵌入。",
    "Text is split into subword tokens; each token id selects a row of the embedding "
    "matrix.": "文本被切成子词 token；每个 token id 从嵌入矩阵中选出一行。",
    "Text is split into characters, one token each; each token id selects a row of the "
    "embedding matrix.": "文本被切成字符，每个字符一个 token；每个 token id 从嵌入矩阵中选出一行。",
    "GPT-2 learns one vector per position and adds it to the token embedding.": (
        "GPT-2 为每个位置学习一个向量，并把它加到 token 嵌入上。"
    ),
    "Each block refines every position's vector: attention mixes positions, the MLP "
    "transforms each one.": (
        "每个 block 加工每个位置的向量：注意力在位置之间混合信息，MLP 逐个位置做变换。"
    ),
    "Every position gathers information from itself and the earlier positions, weighted by "
    "relevance.": "每个位置按相关程度，从它自己和前面的各个位置收集信息。",
    "A linear map of the LayerNorm output gives each position a query, a key and a value.": (
        "对 LayerNorm 的输出做一次线性映射，为每个位置得到 query、key 和 value。"
    ),
    "Q, K and V are cut into n_head slices of d_head = d_model / n_head; each head attends "
    "on its own.": (
        "Q、K、V 被切成 n_head 段，每段 d_head = d_model / n_head 个数；每个头独立计算注意力。"
    ),
    "Scores QK^T are scaled by 1/sqrt(d_head), future positions are masked to -inf, and "
    "softmax turns each row into weights.": (
        "分数 QK^T 乘以 1/sqrt(d_head)，未来位置被掩成 -inf，再由 softmax 把每一行变成权重。"
    ),
    "Each head's weighted sum of values is concatenated and projected back to d_model.": (
        "各个头对 value 的加权和拼接起来，再投影回 d_model 维。"
    ),
    "Per position: expand to 4 x d_model, apply GELU, project back. No mixing across "
    "positions.": "逐个位置计算：扩展到 4 × d_model 维，经过 GELU，再投影回来。位置之间不混合。",
    "The final LayerNorm output is multiplied by the (tied) embedding matrix: one score per "
    "vocabulary token.": (
        "最终 LayerNorm 的输出乘以（与输入共享的）嵌入矩阵：词表中每个 token 得到一个分数。"
    ),
    "Softmax turns logits into a probability distribution over the vocabulary.": (
        "softmax 把 logits 变成词表上的概率分布。"
    ),
    "Dividing logits by T before softmax sharpens (T < 1) or flattens (T > 1) the "
    "distribution.": "softmax 之前把 logits 除以 T：T < 1 让分布更尖锐，T > 1 让它更平坦。",
    "Greedy takes the top token; top-k keeps the k best; top-p keeps the smallest set whose "
    "probability reaches p; min-p drops tokens far below the best.": (
        "贪心解码取概率最高的 token；top-k 保留最好的 k 个；top-p 保留累计概率达到 p 的最小"
        "集合；min-p 去掉远低于最高概率的 token。"
    ),
    "Attention and MLP outputs are added to their input: x + F(x), so information and "
    "gradients flow straight through.": (
        "注意力和 MLP 的输出加回各自的输入：x + F(x)，信息和梯度因此能直接穿过网络。"
    ),
    "Before attention and before the MLP (pre-LN), each vector is centred, divided by its "
    "standard deviation, then scaled by gamma and shifted by beta.": (
        "在注意力和 MLP 之前（pre-LN），每个向量先减去均值、除以标准差，再乘以 gamma、加上 beta。"
    ),
    "During training a random share of activations is zeroed and the rest scaled by "
    "1/(1-p); at inference dropout is the identity.": (
        "训练时随机把一部分激活置零，其余的乘以 1/(1-p)；推理时 dropout 是恒等映射。"
    ),
}

# ... and the Llama family's (explain.variants)
SUMMARIES |= {
    "A decoder-only Transformer of the Llama family: GPT-2's plan, with RoPE, RMSNorm, "
    "grouped-query attention and a SwiGLU MLP.": (
        "Llama 家族的仅解码器 Transformer：整体思路与 GPT-2 相同，换成了 RoPE、RMSNorm、"
        "分组查询注意力和 SwiGLU MLP。"
    ),
    "Embedding (no position vectors), then N blocks, a final RMSNorm, the logits.": (
        "先嵌入（不加位置向量），再经过 N 个 block、最终的 RMSNorm，得到 logits。"
    ),
    "Each token becomes its row of the embedding matrix; no position vector is added.": (
        "每个 token 变成嵌入矩阵中它的那一行；不加位置向量。"
    ),
    "No position vectors: each query and key is rotated by angles proportional to its "
    "position, so q·k depends only on the distance between the two positions.": (
        "没有位置向量：每个 query 和 key 按与其位置成正比的角度旋转，所以 q·k 只取决于两个"
        "位置之间的距离。"
    ),
    "RMSNorm, then three matrices: W_Q gives n_head query heads, W_K and W_V only n_kv_head "
    "key and value heads.": (
        "先做 RMSNorm，再用三个矩阵：W_Q 给出 n_head 个 query 头，W_K 和 W_V 只给出 n_kv_head "
        "个 key 头和 value 头。"
    ),
    "Queries are cut into n_head heads; groups of them share n_kv_head key/value heads, which "
    "makes the KV cache smaller.": (
        "query 被切成 n_head 个头；它们分组共享 n_kv_head 个 key/value 头，KV 缓存因此更小。"
    ),
    "Per position: gate and up projections to d_mlp, SiLU(gate) × up, then a down projection "
    "back to d_model. No mixing across positions.": (
        "逐个位置计算：gate 和 up 两个投影扩展到 d_mlp 维，算 SiLU(gate) × up，再用 down "
        "投影回 d_model 维。位置之间不混合。"
    ),
    "The final RMSNorm output times the unembedding (the embedding matrix when tied, else "
    "lm_head): one score per vocabulary token.": (
        "最终 RMSNorm 的输出乘以反嵌入矩阵（共享权重时就是嵌入矩阵，否则是 lm_head）：词表中"
        "每个 token 得到一个分数。"
    ),
    "Attention and MLP outputs are added to their input: x + Attention(RMSNorm(x)), then x + "
    "MLP(RMSNorm(x)).": (
        "注意力和 MLP 的输出加回各自的输入：先 x + Attention(RMSNorm(x))，再 x + MLP(RMSNorm(x))。"
    ),
    "Before attention and before the MLP, each vector is divided by its root mean square and "
    "multiplied by a learned gain: no centring, no shift.": (
        "在注意力和 MLP 之前，每个向量除以它的均方根，再乘以可学习的增益：不减均值，也不平移。"
    ),
}

# --- lmscope explain: the header, panels and the labels of each step -------------------------
EXPLAIN = {
    "ablated: {parts} ({mode})": "已关闭：{parts}（{mode}）",
    "{model} · {n} tokens · layer {layer} · head {head} · position {position}": (
        "{model} · {n} 个 token · 第 {layer} 层 · 第 {head} 个头 · 位置 {position}"
    ),
    "Step {number}/20 · {title}": "第 {number}/20 步 · {title}",
    "none": "无",
    "shape [{n}]  [{values}, ...]  norm {norm}  mean {mean}  std {std}": (
        "形状 [{n}]  [{values}, ...]  范数 {norm}  均值 {mean}  标准差 {std}"
    ),
    "token": "token",
    "probability": "概率",
    "logit": "logit",
    "model": "模型",
    "{name}: {n_layer} layers, {n_head} heads, d_model {d_model}, vocab {vocab}, context "
    "{n_ctx}, {n_params} parameters": (
        "{name}：{n_layer} 层，{n_head} 个头，d_model {d_model}，词表 {vocab}，上下文 "
        "{n_ctx}，{n_params} 个参数"
    ),
    "next token": "下一个 token",
    "repeat": "重复",
    "after {n} tokens the model predicts:": "读完 {n} 个 token 后，模型预测：",
    "flow": "流程",
    "residual norm by layer": "各层残差范数",
    "token embedding": "token 嵌入",
    "position embedding": "位置嵌入",
    "sum (block 0 input)": "和（block 0 的输入）",
    "pos": "位置",
    "embedding norm": "嵌入范数",
    "embedding matrix {shape}": "嵌入矩阵 {shape}",
    "BPE merges (left + right → rank)": "BPE 合并（左 + 右 → rank）",
    "(single byte)": "（单个字节）",
    "(no merges)": "（没有合并）",
    "one token per character; the vocabulary is the {n} characters seen in training, and a "
    "character outside it cannot be read": (
        "每个字符一个 token；词表是训练时见过的 {n} 个字符，词表之外的字符模型读不了"
    ),
    "position vector": "位置向量",
    "norm per position": "各位置的范数",
    "layer": "层",
    "input norm": "输入范数",
    "output norm": "输出范数",
    "change": "变化",
    "layer {layer} head {head} attention pattern": "第 {layer} 层第 {head} 个头的注意力模式",
    "attends most to": "最关注",
    "attention output": "注意力输出",
    "LayerNorm output": "LayerNorm 输出",
    "norm output": "归一化输出",
    "query": "query",
    "key": "key",
    "value": "value",
    "heads": "头",
    "{n} heads × d_head {d_head}": "{n} 个头 × d_head {d_head}",
    "Q shape [pos, head, d_head]": "Q 的形状 [位置, 头, d_head]",
    "|q| per head": "各头的 |q|",
    "key (kv head {kv} of {n})": "key（第 {kv} 个 kv 头，共 {n} 个）",
    "value (kv head {kv} of {n})": "value（第 {kv} 个 kv 头，共 {n} 个）",
    "{n} query heads × d_head {d_head}; {kv} key/value heads": (
        "{n} 个 query 头 × d_head {d_head}；{kv} 个 key/value 头"
    ),
    "Q, K shapes [pos, head, d_head]": "Q、K 的形状 [位置, 头, d_head]",
    "groups of {n}": "每组 {n} 个",
    "KV cache per token ({dtype})": "每个 token 的 KV 缓存（{dtype}）",
    "{size}; with one kv head per query head {full}": (
        "{size}；若每个 query 头各有一个 kv 头则为 {full}"
    ),
    "KV cache at {n} tokens": "{n} 个 token 的 KV 缓存",
    "{size} vs {full}; at the context of {context}: {at} vs {at_full} ({saved} saved)": (
        "{size} 对 {full}；上下文满 {context} 时：{at} 对 {at_full}（省下 {saved}）"
    ),
    "scaled scores with the causal mask (future keys are -inf):": (
        "缩放后加上因果掩码的分数（未来的 key 为 -inf）："
    ),
    "query position": "查询位置",
    "QKᵀ (raw)": "QKᵀ（原始）",
    "+ causal mask": "+ 因果掩码",
    "softmax": "softmax",
    "head {h} z": "头 {h} 的 z",
    "concat": "拼接",
    "{n} values": "{n} 个值",
    "|head result|": "|各头结果|",
    "projected (attn_out)": "投影后（attn_out）",
    "input": "输入",
    "W2 → output": "W2 → 输出",
    "mean {mean} std {std} min {min} max {max} {hist}": (
        "均值 {mean} 标准差 {std} 最小 {min} 最大 {max} {hist}"
    ),
    "mean {mean} std {std} positive {share} {hist}": "均值 {mean} 标准差 {std} 正值 {share} {hist}",
    "final LayerNorm": "最终 LayerNorm",
    "final {norm}": "最终 {norm}",
    "logits": "logits",
    "{n} scores, mean {mean} std {std} max {max}": (
        "{n} 个分数，均值 {mean} 标准差 {std} 最大 {max}"
    ),
    "unembedding": "反嵌入",
    "W_Eᵀ (tied to the embedding)": "W_Eᵀ（与嵌入共享）",
    "T = 0: greedy": "T = 0：贪心",
    "p at T={t}": "T={t} 时的 p",
    "params": "参数",
    "greedy": "贪心",
    "temperature {t}": "温度 {t}",
    "temperature {t} (greedy)": "温度 {t}（贪心）",
    "survivors": "留下的 token",
    "vocab": "词表",
    "nonzero": "非零",
    "tokenize": "分词",
    "embed": "嵌入",
    "blocks": "blocks",
    "sample": "采样",
    "append": "追加",
    "tokens [{n}]": "token [{n}]",
    "embedding [{shape}]": "嵌入 [{shape}]",
    "{n} blocks": "{n} 层",
    "block {n}": "第 {n} 层",  # a logit lens row (engine.lens stages)
    "W1 → {d_mlp}": "W1 → {d_mlp}",
    "check": "核对",
    "resid_pre + attn_out − resid_mid = {error}": "resid_pre + attn_out − resid_mid = {error}",
    "before": "之前",
    "std (with eps)": "标准差（含 eps）",
    "normalized": "归一化后",
    "gamma": "gamma",
    "beta": "beta",
    "after": "之后",
    "at inference": "推理时",
    "identity (dropout is off)": "恒等映射（dropout 关闭）",
    "model's training rate": "模型训练时的比率",
    "example, p={p}": "示例，p={p}",
    "{n} of {total} values zeroed, the rest × {scale}": "{total} 个值中 {n} 个置零，其余 × {scale}",
    # the Llama family's views (RoPE, grouped-query attention, SwiGLU, RMSNorm)
    "none: positions rotate q and k (step 6)": "无：位置靠旋转 q 和 k 起作用（第 6 步）",
    "positions": "位置",
    "no vector is added; q and k are rotated inside attention": (
        "不加任何向量；q 和 k 在注意力内部被旋转"
    ),
    "rotation per position, {n} pairs": "每个位置的旋转，{n} 对",
    "every": "周期",
    "θ = {theta}: rad/position (and positions per turn) {freqs}": (
        "θ = {theta}：每个位置转过的弧度（括号里是转一圈的位置数）{freqs}"
    ),
    "q, head {h}, before": "q，第 {h} 个头，旋转前",
    "q after rotating to {p}": "q 旋转到位置 {p} 之后",
    "k, kv head {h}, before": "k，第 {h} 个 kv 头，旋转前",
    "k after rotating to {p}": "k 旋转到位置 {p} 之后",
    "max |difference| {e}": "最大 |差| {e}",
    "q of position {q} and k of position {k} (recorded QKᵀ {score}), rotated to other "
    "positions:": "位置 {q} 的 q 和位置 {k} 的 k（记录的 QKᵀ 为 {score}），旋转到其他位置：",
    "query at": "query 位置",
    "key at": "key 位置",
    "distance": "距离",
    "q·k (rotated)": "q·k（旋转后）",
    "same distance": "距离相同",
    "query moved": "query 移动",
    "same distance → same score: max |difference| {e} (relative {r}, float32 precision)": (
        "距离相同 → 分数相同：最大 |差| {e}（相对 {r}，float32 精度）"
    ),
    "input (RMSNorm 2)": "输入（RMSNorm 2）",
    "output = post·W_down {shape}": "输出 = post·W_down {shape}",
    "checks": "核对",
    "the {n} features with the largest |post| (of {d}):": "|post| 最大的 {n} 个特征（共 {d} 个）：",
    "mean (kept)": "均值（保留）",
    "normalized = x / rms": "归一化 = x / rms",
    "gain": "增益",
    "bias": "偏置",
    "none (RMSNorm has no β)": "无（RMSNorm 没有 β）",
    "after = normalized × gain": "之后 = 归一化 × 增益",
    "|normalized × gain − after| ≤ {e}": "|归一化 × 增益 − 之后| ≤ {e}",
    "(positions {first}–{last} of {n}; a wider terminal shows more, --json shows all)": (
        "（显示位置 {first}–{last}，共 {n} 个；终端更宽时显示更多，--json 显示全部）"
    ),
    "(keys {first}–{last} of {n}; a wider terminal shows more, --json shows all)": (
        "（显示 key {first}–{last}，共 {n} 个；终端更宽时显示更多，--json 显示全部）"
    ),
    "(first {shown} of {n}; --json shows all)": "（显示前 {shown} 个，共 {n} 个；--json 显示全部）",
    "character": "字符",
    "feature": "特征",
    "zero": "置零",
}

ZH: dict[str, str] = {**SUMMARIES, **EXPLAIN}

_FIELD = re.compile(r"\{(\w+)\}")
# What a field holds in a filled-in line: anything without Latin letters (numbers, shapes such
# as "[14, 192]", Chinese), then at most one word ("6.0 KiB"), so a field never swallows the
# English around it.
_VALUE = r"[^A-Za-z]*?\S*?"


@cache
def _patterns() -> list[tuple[re.Pattern, str]]:
    """The entries with ``{fields}`` as patterns that match a filled-in line, the longest
    fixed text first (so ``"final {norm}"`` does not take what a longer entry says)."""
    out = []
    for english, chinese in ZH.items():
        if not _FIELD.search(english) or not _FIELD.sub("", english).strip():
            continue
        parts = _FIELD.split(english)  # text, field, text, field, ..., text
        regex = "".join(
            re.escape(p) if i % 2 == 0 else f"(?P<{p}>{_VALUE})" for i, p in enumerate(parts)
        )
        out.append((len(_FIELD.sub("", english)), re.compile(regex, re.S), chinese))
    out.sort(key=lambda item: -item[0])
    return [(pattern, chinese) for _, pattern, chinese in out]


def translate(text: str, lang: str, **values) -> str:
    """``text`` (English, as the CLI writes it) in ``lang``, with ``{fields}`` filled from
    ``values``; a line already filled in is matched against the entries' patterns."""
    if lang != "en":
        chinese = ZH.get(text)
        if chinese is None and not values:
            for pattern, candidate in _patterns():
                found = pattern.fullmatch(text)
                if found:
                    return candidate.format(**found.groupdict())
        text = chinese or text
    return text.format(**values) if values else text
