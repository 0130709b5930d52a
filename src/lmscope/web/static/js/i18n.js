// Interface strings and the 20 steps' explanations, in English and Simplified Chinese.
// Placeholders like {n_layer} are filled from the loaded model's config.

const UI = {
  en: {
    tagline: "see inside a language model by running it",
    api: "API",
    prompt: "Prompt",
    promptPlaceholder: "Type a prompt; the model re-runs as you type",
    examples: "Examples",
    tokensOf: "{n} of {ctx} tokens",
    traced: "traced in {ms} ms",
    loading: "Running the model…",
    error: "Error",
    layers: "layers",
    heads: "heads",
    dModel: "d_model",
    vocab: "vocabulary",
    context: "context",
    params: "parameters",
    steps: "The 20 steps",
    tour: "Guided tour",
    prev: "← Previous",
    next: "Next →",
    layer: "Layer",
    head: "Head",
    position: "Position",
    probes: "Probes",
    sampling: "Next-token probabilities",
    after: "after position {p}: {tok}",
    temperature: "Temperature",
    topK: "Top-k",
    topP: "Top-p",
    minP: "Min-p",
    off: "off",
    greedy: "Greedy",
    seed: "Seed",
    randomSeed: "New random seed",
    generate: "Generate",
    generateN: "Generate",
    tokensWord: "tokens",
    stop: "Stop",
    pool: "Pool: {n} of {vocab} tokens",
    poolPlus: "Pool: more than {n} of {vocab} tokens (reaches past the top {n})",
    poolNote: "Bars: probability after temperature; → value: probability after the filters.",
    others: "{n} other tokens",
    survives: "kept",
    filtered: "filtered out",
    fromEnd: "Generate continues from the last token.",
    sameSeed: "Same seed and settings give the same tokens.",
    topKError: "Top-k must be a whole number from 0 (off) to {vocab}.",
    seedError: "The seed must be a whole number from 0 to 9007199254740991.",
    nError: "Generate between 1 and 256 tokens at a time.",
    stopped: "Stopped: {reason}.",
    overview: "Pipeline",
    tokens: "Tokens",
    embedding: "Embedding",
    block: "Block",
    finalLn: "Final LN",
    logits: "Logits",
    probabilities: "Probabilities",
    attention: "Attention",
    mlp: "MLP",
    norm: "norm",
    mean: "mean",
    std: "std",
    value: "value",
    dim: "dim",
    query: "query",
    key: "key",
    token: "token",
    prob: "probability",
    logit: "logit",
    nextProb: "P(actual next)",
    topPrediction: "top prediction",
    noNext: "(end)",
    shape: "shape",
    merges: "BPE merges",
    pretoken: "pre-token chunk",
    noMerges: "no merges: this token is a single unit of the vocabulary",
    rank: "rank",
    tokenEmb: "token embedding W_E[{id}]",
    posEmb: "position embedding W_P[{p}]",
    sum: "sum = input to block 0",
    cosPrev: "cosine(position p, position p − 1)",
    residIn: "block input",
    residOut: "block output",
    residNormChart: "|residual| of the selected position after each block",
    rawScores: "QKᵀ (raw)",
    scaledScores: "× 1/√d_head (scaled)",
    maskedScores: "causal mask (−∞ above the diagonal)",
    softmaxScores: "softmax (attention weights)",
    allHeads: "All heads in layer {l}",
    queryRow: "Row of query {p} at each stage",
    attendsTo: "Position {p} attends most to",
    lnInput: "LayerNorm input",
    lnOutput: "LayerNorm output",
    normalized: "normalized: (x − mean) / std",
    gamma: "γ (gain)",
    beta: "β (bias)",
    qVec: "query q",
    kVec: "key k",
    vVec: "value v",
    qkvAll: "all heads at this position ({n_head} × {d_head})",
    kWindow: "keys of positions {a}–{b}, head {h}",
    vWindow: "values of positions {a}–{b}, head {h}",
    zHeads: "z per head: weights × values",
    concat: "concat(z) → {d} numbers",
    headResults: "|z_h · W_O[h]| per head",
    attnBias: "output bias b_O",
    attnOut: "attention output = Σ_h z_h·W_O[h] + b_O",
    mlpIn: "LayerNorm 2 output (MLP input, {d})",
    mlpPre: "W_in · x + b ({d_mlp}), before GELU",
    mlpPost: "after GELU ({d_mlp})",
    mlpOut: "W_out · GELU(…) + b → MLP output ({d})",
    geluScatter: "{act}: this position's {n} pre-activations (dots) on the curve",
    histPre: "before GELU",
    histPost: "after GELU",
    fracPos: "{pct} positive",
    finalLnTitle: "final LayerNorm at position {p}",
    logitsTop: "Highest logits (of {vocab})",
    logitsHist: "All {vocab} logits",
    softmaxTable: "softmax over all {vocab} logits (logsumexp = {lse})",
    expCol: "exp(z − max)",
    tempCurve: "Probability of the top tokens as temperature varies",
    atT1: "T = 1",
    atT: "T = {t}",
    stages: "Survivors after each stage",
    stageVocab: "vocabulary",
    stageTopK: "top-k",
    stageTopP: "top-p",
    stageMinP: "min-p",
    stageGreedy: "greedy",
    residPre: "resid_pre (block input)",
    residMid: "resid_mid",
    residPost: "resid_post (block output)",
    attnOutShort: "attn_out",
    mlpOutShort: "mlp_out",
    plus: "+",
    equals: "=",
    lnWhich: "Which LayerNorm",
    ln1: "ln1 (before attention)",
    ln2: "ln2 (before the MLP)",
    lnf: "final",
    dropBefore: "attn_out (inference: dropout is the identity, this is what flows on)",
    dropMask: "training-mode mask at p = {p}: {z} of {n} zeroed (dark)",
    dropAfter: "after dropout: kept values × 1/(1 − p)",
    modelRate: "This model's dropout rate: {r}",
    loop: "tokens → embed → {n} blocks → logits → softmax → sample → append",
    predictedNext: "Predicted next token",
    modelFacts: "Model",
    shapes: "Shapes for this prompt",
    hoverHint: "Hover for exact values.",
    generatedTag: "generated",
    clickPosition: "Click a token to inspect its position.",
    window: "window: positions {a}–{b}",
    approx: "≈ (the pool reaches past the top tokens sent; tail values estimated)",
    noTokenizer: "no tokenizer",
    contextFull: "the context is full",
    maskCol: "+ mask",
    idsOnly: "This model has no tokenizer: type token ids separated by spaces.",
  },
  zh: {
    tagline: "运行真实的语言模型，看清它的内部",
    api: "API",
    prompt: "提示词",
    promptPlaceholder: "输入提示词；边输入边重新运行模型",
    examples: "示例",
    tokensOf: "{n} / {ctx} 个 token",
    traced: "用时 {ms} 毫秒",
    loading: "正在运行模型……",
    error: "错误",
    layers: "层",
    heads: "头",
    dModel: "d_model",
    vocab: "词表",
    context: "上下文",
    params: "参数量",
    steps: "20 个步骤",
    tour: "导览",
    prev: "← 上一步",
    next: "下一步 →",
    layer: "层",
    head: "头",
    position: "位置",
    probes: "探针",
    sampling: "下一个 token 的概率",
    after: "位置 {p} 之后：{tok}",
    temperature: "温度",
    topK: "Top-k",
    topP: "Top-p",
    minP: "Min-p",
    off: "关闭",
    greedy: "贪心",
    seed: "种子",
    randomSeed: "换一个随机种子",
    generate: "生成",
    generateN: "生成",
    tokensWord: "个 token",
    stop: "停止",
    pool: "候选池：{vocab} 个 token 中的 {n} 个",
    poolPlus: "候选池：超过 {n} 个（共 {vocab} 个，超出了发送的前 {n} 名）",
    poolNote: "条形：温度调整后的概率；→ 后的数值：过滤并重新归一化后的概率。",
    others: "其余 {n} 个 token",
    survives: "保留",
    filtered: "被过滤",
    fromEnd: "“生成”总是从最后一个 token 接着写。",
    sameSeed: "种子和设置相同，生成的 token 就相同。",
    topKError: "Top-k 必须是 0（关闭）到 {vocab} 之间的整数。",
    seedError: "种子必须是 0 到 9007199254740991 之间的整数。",
    nError: "每次生成 1 到 256 个 token。",
    stopped: "已停止：{reason}。",
    overview: "流程总览",
    tokens: "Token",
    embedding: "嵌入",
    block: "Block",
    finalLn: "最终 LN",
    logits: "Logits",
    probabilities: "概率",
    attention: "注意力",
    mlp: "MLP",
    norm: "范数",
    mean: "均值",
    std: "标准差",
    value: "数值",
    dim: "维度",
    query: "查询",
    key: "键",
    token: "token",
    prob: "概率",
    logit: "logit",
    nextProb: "P(实际的下一个)",
    topPrediction: "最可能的预测",
    noNext: "（结尾）",
    shape: "形状",
    merges: "BPE 合并过程",
    pretoken: "预分词片段",
    noMerges: "没有合并：这个 token 本身就是词表中的最小单位",
    rank: "优先级",
    tokenEmb: "token 嵌入 W_E[{id}]",
    posEmb: "位置嵌入 W_P[{p}]",
    sum: "两者之和 = block 0 的输入",
    cosPrev: "余弦相似度（位置 p，位置 p − 1）",
    residIn: "block 输入",
    residOut: "block 输出",
    residNormChart: "所选位置在每个 block 之后的残差向量范数",
    rawScores: "QKᵀ（原始分数）",
    scaledScores: "× 1/√d_head（缩放后）",
    maskedScores: "因果掩码（对角线上方为 −∞）",
    softmaxScores: "softmax（注意力权重）",
    allHeads: "第 {l} 层的所有头",
    queryRow: "查询位置 {p} 在各阶段的那一行",
    attendsTo: "位置 {p} 最关注的位置",
    lnInput: "LayerNorm 输入",
    lnOutput: "LayerNorm 输出",
    normalized: "归一化：(x − 均值) / 标准差",
    gamma: "γ（增益）",
    beta: "β（偏置）",
    qVec: "query q",
    kVec: "key k",
    vVec: "value v",
    qkvAll: "该位置所有头（{n_head} × {d_head}）",
    kWindow: "位置 {a}–{b} 的 key，头 {h}",
    vWindow: "位置 {a}–{b} 的 value，头 {h}",
    zHeads: "每个头的 z：权重 × value",
    concat: "拼接(z) → {d} 个数",
    headResults: "每个头的 |z_h · W_O[h]|",
    attnBias: "输出偏置 b_O",
    attnOut: "注意力输出 = Σ_h z_h·W_O[h] + b_O",
    mlpIn: "LayerNorm 2 的输出（MLP 输入，{d} 维）",
    mlpPre: "W_in · x + b（{d_mlp} 维），GELU 之前",
    mlpPost: "GELU 之后（{d_mlp} 维）",
    mlpOut: "W_out · GELU(…) + b → MLP 输出（{d} 维）",
    geluScatter: "{act}：该位置的 {n} 个激活前数值（点）落在曲线上",
    histPre: "GELU 之前",
    histPost: "GELU 之后",
    fracPos: "{pct} 为正",
    finalLnTitle: "位置 {p} 的最终 LayerNorm",
    logitsTop: "最高的 logits（共 {vocab} 个）",
    logitsHist: "全部 {vocab} 个 logits 的分布",
    softmaxTable: "对全部 {vocab} 个 logits 做 softmax（logsumexp = {lse}）",
    expCol: "exp(z − 最大值)",
    tempCurve: "前几名 token 的概率随温度的变化",
    atT1: "T = 1",
    atT: "T = {t}",
    stages: "每个阶段之后剩下的 token 数",
    stageVocab: "词表",
    stageTopK: "top-k",
    stageTopP: "top-p",
    stageMinP: "min-p",
    stageGreedy: "贪心",
    residPre: "resid_pre（block 输入）",
    residMid: "resid_mid",
    residPost: "resid_post（block 输出）",
    attnOutShort: "attn_out",
    mlpOutShort: "mlp_out",
    plus: "+",
    equals: "=",
    lnWhich: "选择 LayerNorm",
    ln1: "ln1（注意力之前）",
    ln2: "ln2（MLP 之前）",
    lnf: "最终",
    dropBefore: "attn_out（推理时 dropout 是恒等映射，传下去的就是它）",
    dropMask: "训练模式下 p = {p} 的掩码：{n} 个中有 {z} 个被置零（深色）",
    dropAfter: "dropout 之后：保留的值 × 1/(1 − p)",
    modelRate: "本模型的 dropout 比率：{r}",
    loop: "token → 嵌入 → {n} 个 block → logits → softmax → 采样 → 接到末尾",
    predictedNext: "预测的下一个 token",
    modelFacts: "模型",
    shapes: "本提示词下各张量的形状",
    hoverHint: "鼠标悬停可查看精确数值。",
    generatedTag: "生成的",
    clickPosition: "点击任意 token 查看该位置。",
    window: "窗口：位置 {a}–{b}",
    approx: "≈（候选池超出了发送的前几名 token，尾部数值为估计）",
    noTokenizer: "没有分词器",
    contextFull: "上下文已满",
    maskCol: "+ 掩码",
    idsOnly: "这个模型没有分词器：请输入用空格分隔的 token id。",
  },
};

const STEPS = {
  en: {
    transformer: [
      "What is a Transformer",
      "This model is a decoder-only Transformer, the architecture behind GPT. It reads a " +
        "sequence of tokens and, at every position, outputs a probability distribution over " +
        "the next token. Nothing on this page is illustrative: every number comes from a " +
        "forward pass of {model} on your prompt.",
    ],
    "how-it-works": [
      "How Transformers work",
      "Text generation repeats one step: run the model on the tokens so far, take the " +
        "distribution after the last position, pick a token (the sampling controls decide " +
        "how), append it, run again. Thanks to the causal mask one pass predicts a next token " +
        "at every position at once: the table shows what the model expected after each token " +
        "and how much probability it gave the token that actually came next.",
    ],
    architecture: [
      "Architecture",
      "Three stages. The embedding turns each token id into a vector of d_model = " +
        "{d_model} numbers. {n_layer} identical blocks then refine these vectors: in each, " +
        "attention lets positions exchange information and the MLP transforms each position " +
        "on its own. A final LayerNorm and the unembedding turn the last vectors into one " +
        "score per vocabulary token. Click any part of the pipeline above to open its step.",
    ],
    embedding: [
      "Embedding",
      "The model cannot compute with text, so each token becomes a vector: its row of the " +
        "token embedding matrix W_E ({vocab} × {d_model}) plus the row of the position matrix " +
        "W_P for its position. The sum enters the first block; it is the start of the " +
        "residual stream.",
    ],
    "token-embedding": [
      "Tokenization and token embedding",
      "A byte-level BPE tokenizer cuts text into tokens: frequent words are one token, rarer " +
        "ones split into subwords, and any character can fall back to bytes (a Chinese " +
        "character often takes two or three tokens). Starting from single bytes it applies " +
        "its learned merges, lowest rank first; the list shows the merges that built the " +
        "selected token. The token id then selects one row of W_E.",
    ],
    "positional-encoding": [
      "Positional encoding",
      "Attention on its own treats its inputs as a set: it has no notion of order. GPT-2 " +
        "learns one vector per position, up to the context length of {n_ctx}, and adds it to " +
        "the token embedding, so “dog bites man” and “man bites dog” look different to the " +
        "model. The chart shows how similar each position's vector is to the previous one.",
    ],
    blocks: [
      "Repeated Transformer blocks",
      "The model stacks {n_layer} blocks with the same shape and different weights. Each " +
        "block reads the residual stream and adds two updates to it, the attention output " +
        "and the MLP output; nothing is overwritten. The chart shows the size of the selected " +
        "position's vector entering and leaving each block.",
    ],
    "self-attention": [
      "Multi-head self-attention",
      "Attention is the only place where positions exchange information. Each of the " +
        "{n_head} heads gives every position a set of weights over itself and the earlier " +
        "positions, and takes the weighted average of their value vectors. Each heatmap row " +
        "is a query position; its weights sum to 1. The grid shows every head of this layer: " +
        "click one to select it.",
    ],
    qkv: [
      "Query, key, value",
      "The block first applies LayerNorm (pre-LN). One linear map W_QKV then gives every " +
        "position three vectors: a query (what this position is looking for), a key (what it " +
        "can be found by) and a value (what it passes on when attended to). The score of " +
        "query position i for key position j is the dot product of i's query and j's key.",
    ],
    "multi-head": [
      "Splitting into heads",
      "Q, K and V, each d_model = {d_model} numbers, are cut into {n_head} slices of d_head " +
        "= {d_head}. Each slice is a head that computes its own attention pattern, so heads " +
        "can follow different relations: the previous token, an earlier copy of a word, " +
        "punctuation. Each row below is one head.",
    ],
    "masked-attention": [
      "Masked self-attention",
      "For one head: raw scores QKᵀ, scaled by 1/√d_head = {scale} so they do not grow with " +
        "d_head; then the causal mask sets the score of every later key to −∞, because a " +
        "position may not see the future; then softmax turns each row into weights that sum " +
        "to 1 (e^−∞ = 0). The table lists the selected query's row at every stage.",
    ],
    "attention-output": [
      "Attention output and concatenation",
      "Each head's output z is its attention weights times the values: d_head numbers per " +
        "position. The heads' outputs are concatenated back to d_model numbers and multiplied " +
        "by the output projection W_O, plus a bias. Equivalently, every head writes its own " +
        "vector z_h·W_O[h] and the vectors are summed.",
    ],
    mlp: [
      "MLP",
      "The MLP works on each position separately: LayerNorm, a linear map up to {d_mlp} " +
        "numbers (4 × d_model), the GELU nonlinearity, which keeps positive inputs and " +
        "squashes negative ones towards 0, and a linear map back to d_model. Attention moves " +
        "information between positions; the MLP processes what each position holds.",
    ],
    logits: [
      "Output logits",
      "After the last block a final LayerNorm normalizes each vector, and the unembedding " +
        "multiplies it by the transposed token embedding matrix: the same W_E as in step 5, " +
        "because GPT-2 ties the two. The result is one score, a logit, for each of the " +
        "{vocab} tokens. Logits are not probabilities; they can be any real number.",
    ],
    probabilities: [
      "Probabilities",
      "Softmax turns logits into probabilities: p_i = exp(z_i) / Σ_j exp(z_j). Every " +
        "probability is positive, they sum to 1, and only differences between logits " +
        "matter. The sum runs over the whole vocabulary of {vocab} tokens, not only the rows " +
        "shown.",
    ],
    temperature: [
      "Temperature",
      "Before softmax the logits are divided by a temperature T. T < 1 sharpens the " +
        "distribution, T > 1 flattens it, and T → 0 is greedy decoding. The curves show the " +
        "top tokens' probabilities for every temperature; the line marks your setting. Move " +
        "the temperature slider: the page recomputes exactly, without asking the server.",
    ],
    sampling: [
      "Sampling strategies",
      "Greedy always takes the most likely token. Top-k keeps the k most likely; top-p " +
        "(nucleus) keeps the smallest set whose probability reaches p; min-p drops tokens " +
        "below min-p times the top probability. The survivors are renormalised and one is " +
        "drawn with the seed. Generate asks the server, which applies the same rules to the " +
        "full vocabulary.",
    ],
    residual: [
      "Residual connections",
      "Around both sublayers the input is added to the output: x + Attention(LN(x)), then " +
        "x + MLP(LN(x)). This residual stream carries information straight through the " +
        "network and lets gradients flow in training. Each sum below is exactly the next " +
        "recorded vector.",
    ],
    layernorm: [
      "Layer normalization",
      "LayerNorm rescales one position's vector: subtract its mean, divide by its standard " +
        "deviation √(variance + ε), multiply by the learned γ and add the learned β. GPT-2 " +
        "applies it before attention and before the MLP in every block (pre-LN), and once " +
        "more after the last block.",
    ],
    dropout: [
      "Dropout",
      "In training, dropout zeroes each activation with probability p and scales the rest " +
        "by 1/(1 − p), so the network cannot lean on any single path. At inference, as here, " +
        "it is switched off: the identity. Below, a real attention output and what a " +
        "training-mode dropout would do to it (seeded mask).",
    ],
  },
  zh: {
    transformer: [
      "什么是 Transformer",
      "这个模型是仅解码器（decoder-only）的 Transformer，也就是 GPT 所用的架构。它读入一串 " +
        "token，并在每个位置输出“下一个 token”的概率分布。本页没有示意用的假数据：每个数字都来自 " +
        "{model} 在你的提示词上真实运行的一次前向计算。",
    ],
    "how-it-works": [
      "Transformer 如何工作",
      "文本生成就是同一步骤的重复：用已有的 token 运行模型，取最后一个位置之后的概率分布，按采样设置" +
        "选出一个 token，接到末尾，再运行一次。由于有因果掩码，一次运行就能在每个位置同时预测下一个 " +
        "token：下表列出模型在每个 token 之后的预测，以及它给实际出现的下一个 token 的概率。",
    ],
    architecture: [
      "整体架构",
      "分三段：嵌入层把每个 token id 变成 d_model = {d_model} 维的向量；随后 {n_layer} 个结构相同的 " +
        "block 反复加工这些向量，每个 block 里注意力让各位置交换信息，MLP 再对每个位置单独做变换；最后" +
        "经过最终的 LayerNorm 和反嵌入，为词表中每个 token 得到一个分数。点击上方流程图的任意部分即可" +
        "打开对应步骤。",
    ],
    embedding: [
      "嵌入",
      "模型无法直接对文字做运算，所以每个 token 都要变成向量：取 token 嵌入矩阵 W_E（{vocab} × " +
        "{d_model}）中该 token 的那一行，再加上位置矩阵 W_P 中对应位置的那一行。两者之和进入第一个 " +
        "block，也就是残差流的起点。",
    ],
    "token-embedding": [
      "分词与 token 嵌入",
      "字节级 BPE 分词器把文本切成 token：常见词是一个 token，少见的词拆成子词，任何字符都能退回到" +
        "字节（一个汉字常常占两三个 token）。它从单个字节出发，按学到的合并规则从优先级最高（rank 最" +
        "小）的开始合并；列表显示拼出所选 token 的那几次合并。随后用 token id 从 W_E 中取出一行。",
    ],
    "positional-encoding": [
      "位置编码",
      "注意力本身把输入当作一个集合，不知道先后顺序。GPT-2 为每个位置（最多到上下文长度 {n_ctx}）" +
        "学习一个向量，并把它加到 token 嵌入上，这样“狗咬人”和“人咬狗”在模型看来才会不同。图中是每个" +
        "位置向量与前一个位置向量的余弦相似度。",
    ],
    blocks: [
      "重复的 Transformer block",
      "模型堆叠了 {n_layer} 个形状相同、权重不同的 block。每个 block 读取残差流，并往里加上两份更新：" +
        "注意力的输出和 MLP 的输出；原有内容不会被覆盖。图中是所选位置的向量进入和离开每个 block 时的" +
        "大小（L2 范数）。",
    ],
    "self-attention": [
      "多头自注意力",
      "注意力是各位置之间交换信息的唯一途径。{n_head} 个头各自为每个位置算出一组权重，分配给它自己和" +
        "前面的各个位置，再按权重对这些位置的 value 向量求加权平均。热力图的每一行是一个查询位置，行内" +
        "权重之和为 1。下方小图列出本层所有的头，点击即可切换。",
    ],
    qkv: [
      "Query、Key、Value",
      "block 先做 LayerNorm（pre-LN），再用一个线性映射 W_QKV 为每个位置生成三个向量：query（这个" +
        "位置在找什么）、key（它能被什么样的查询找到）和 value（被关注时传出的内容）。查询位置 i 对键" +
        "位置 j 的分数，就是 i 的 query 与 j 的 key 的点积。",
    ],
    "multi-head": [
      "拆分成多个头",
      "Q、K、V 各有 d_model = {d_model} 个数，被切成 {n_head} 段，每段 d_head = {d_head} 个数。每段" +
        "就是一个头，独立计算自己的注意力模式，因此不同的头可以关注不同的关系：前一个 token、前文出现过" +
        "的同一个词、标点符号等。下面每一行是一个头。",
    ],
    "masked-attention": [
      "带掩码的自注意力",
      "以一个头为例：先算原始分数 QKᵀ，再乘以 1/√d_head = {scale}，让分数大小不随 d_head 增长；接着" +
        "因果掩码把所有“后面位置的 key”的分数设为 −∞，因为一个位置不能看到未来；最后 softmax 把每一行" +
        "变成和为 1 的权重（e^−∞ = 0）。表格列出所选查询位置在每个阶段的那一行。",
    ],
    "attention-output": [
      "注意力输出与拼接",
      "每个头的输出 z 等于它的注意力权重乘以 value，每个位置得到 d_head 个数。各头的输出拼接回 " +
        "d_model 个数，再乘以输出投影 W_O 并加上偏置。等价地说，每个头各自写出向量 z_h·W_O[h]，再把" +
        "这些向量相加。",
    ],
    mlp: [
      "MLP（前馈网络）",
      "MLP 对每个位置单独计算：先做 LayerNorm，再用线性层扩展到 {d_mlp} 维（4 × d_model），经过 " +
        "GELU 非线性（正值基本保留，负值被压向 0），最后用线性层映射回 d_model 维。注意力负责在位置之间" +
        "搬运信息，MLP 负责加工每个位置自己持有的信息。",
    ],
    logits: [
      "输出 logits",
      "最后一个 block 之后，先用最终的 LayerNorm 归一化每个向量，再乘以 token 嵌入矩阵的转置——与第 " +
        "5 步是同一个 W_E，因为 GPT-2 让输入嵌入和输出层共享权重。结果是词表中 {vocab} 个 token 各自的" +
        "一个分数，即 logit。logit 不是概率，可以是任意实数。",
    ],
    probabilities: [
      "概率",
      "softmax 把 logits 变成概率：p_i = exp(z_i) / Σ_j exp(z_j)。每个概率都为正，总和为 1，只有 " +
        "logit 之间的差值才有意义。求和覆盖全部 {vocab} 个 token，而不只是表中列出的几行。",
    ],
    temperature: [
      "温度",
      "在 softmax 之前，logits 先除以温度 T。T < 1 让分布更尖锐，T > 1 让分布更平坦，T → 0 就是贪心" +
        "解码。曲线画出前几名 token 在各个温度下的概率，竖线是当前设置。拖动温度滑块，页面会在浏览器里" +
        "精确地重新计算，不需要请求服务器。",
    ],
    sampling: [
      "采样策略",
      "贪心解码总是选概率最高的 token。top-k 只保留最可能的 k 个；top-p（核采样）保留累计概率达到 p " +
        "的最小集合；min-p 去掉概率低于“min-p × 最高概率”的 token。剩下的候选重新归一化，再用种子随机" +
        "抽取一个。点“生成”时由服务器在完整词表上执行同样的规则。",
    ],
    residual: [
      "残差连接",
      "两个子层外面都有残差连接：先 x + Attention(LN(x))，再 x + MLP(LN(x))。残差流让信息直接穿过" +
        "整个网络，也让训练时梯度更容易传回去。下面每个和都恰好等于下一个探针记录的向量。",
    ],
    layernorm: [
      "层归一化",
      "LayerNorm 对单个位置的向量做缩放：减去均值，除以标准差 √(方差 + ε)，再乘以可学习的 γ、加上" +
        "可学习的 β。GPT-2 在每个 block 里的注意力和 MLP 之前各做一次（pre-LN），最后一个 block 之后" +
        "再做一次。",
    ],
    dropout: [
      "Dropout（随机失活）",
      "训练时，dropout 以概率 p 把每个激活置零，其余的乘以 1/(1 − p)，让网络无法依赖某一条固定路径。" +
        "推理时（比如现在）它是关闭的，也就是恒等映射。下面是一个真实的注意力输出，以及训练模式下的 " +
        "dropout 会把它变成什么样（掩码用固定种子生成）。",
    ],
  },
};

const KEY = "lmscope.lang";
let current = "en";
try {
  const saved = localStorage.getItem(KEY);
  if (saved === "en" || saved === "zh") current = saved;
} catch {
  // storage may be blocked (private mode); English stays the default
}
let facts = {};

export function lang() {
  return current;
}

export function setLang(value) {
  current = value === "zh" ? "zh" : "en";
  try {
    localStorage.setItem(KEY, current);
  } catch {
    // not remembered, still switched
  }
  document.documentElement.lang = current === "zh" ? "zh-CN" : "en";
}

// Other modules bring their own strings (both languages) instead of growing this file.
export function addStrings(en, zh) {
  Object.assign(UI.en, en);
  Object.assign(UI.zh, zh);
}

export function setFacts(values) {
  facts = values;
}

function fill(text, vars) {
  return text.replace(/\{(\w+)\}/g, (m, name) =>
    name in vars ? String(vars[name]) : name in facts ? String(facts[name]) : m,
  );
}

export function t(key, vars = {}) {
  const text = UI[current][key] ?? UI.en[key] ?? key;
  return fill(text, vars);
}

export function stepText(key, vars = {}) {
  const [title, body] = STEPS[current][key] ?? STEPS.en[key] ?? [key, ""];
  return { title, body: fill(body, vars) };
}
