// Strings of the page's pictures (the flow view, attention as connections, characters of
// byte-level tokens, embedding neighbours) and of the walk-through's fixes, in English and
// Simplified Chinese. Importing this module registers them.

import { addStrings } from "./i18n.js";

const en = {
  maskedKeys: "keys {a}–{b}: after the query, masked",
  strongestKeys: "The {n} keys with the most weight (of {of}), in position order:",
  allKeys: "All {n} keys",
  ablScope:
    "Only this panel changes: the next-token probabilities beside it, Generate and the 20 steps " +
    "still run the whole model.",
  ablScopeSide: "The whole model's probabilities: the {n} part(s) switched off in Ablation change only the Ablation panel.",
  charSpanTip: "“{text}”: these {n} tokens each hold some of its UTF-8 bytes",
  charSpanPartial: "“{text}”: the bytes stop inside a character (more would follow)",
  byteStarts:
    "{tok} is the first {have} of the {of} UTF-8 bytes of a character: it becomes that character " +
    "only when a next token brings the rest (byte-level BPE, step 5).",
  completesChar: "completes “{char}”",
  byteEnds: "{tok} finishes a character begun before it: its last {n} UTF-8 byte(s) (byte-level BPE, step 5).",
  byteTitle: "Byte-level BPE: why some chips show <0x..>",
  byteText:
    "This tokenizer works on the UTF-8 bytes of the text, not on its characters. Its vocabulary " +
    "starts with all 256 byte values, so any text at all can be written, and training merged " +
    "frequent neighbours into longer tokens. A character that the merges did not cover, such as " +
    "many Chinese characters (我 is the three bytes E6 88 91), is split across tokens: each chip " +
    "then shows bytes like <0xE6> that are no character on their own, and the label above those " +
    "chips shows the character they form together. The model sees only the token ids.",
  byteHere: "In this prompt: “{text}” is made of {n} tokens (positions {a}–{b}).",
  spmTitle: "SentencePiece-style BPE: spaces as ▁, characters as <0x..> bytes",
  spmText:
    "This tokenizer works on the characters of the text. Before merging, every space becomes ▁ " +
    "(U+2581, shown as · on the chips) and one more goes in front of the text, so the first word " +
    "starts with a space like every later one. Training merged frequent neighbours into longer " +
    "tokens. A character the vocabulary lacks, such as an emoji or a rare Chinese character, falls " +
    "back to its UTF-8 bytes (龘 is the three bytes E9 BE 98), one token such as <0xE9> each, and " +
    "the label above those chips shows the character they form together. The model sees only the " +
    "token ids.",
  linesTitle: "Attention as connections · layer {l}",
  lines_head: "Head {h}",
  lines_all: "All heads",
  lines_mean: "Mean of heads",
  linesKeys: "keys (read)",
  linesQueries: "queries (reading)",
  linesLooks: "{p} “{tok}” looks at ({who}): {list}",
  linesReadBy: "{p} “{tok}” is read most by ({who}): {list}",
  linesHint:
    "Each line joins a query (right) to a key it reads (left); its width and opacity are the " +
    "attention weight. Hover a token: on the right, where it looks; on the left, which later " +
    "tokens read it. Click a token on the right to select its position.",
  linesGqa:
    "Grouped-query attention: the {n} query heads share {kv} sets of keys and values, {g} heads each.",
  linesOutside: "{w} of the weight is on positions before {a}",
  flowControls: "Step through the Transformer",
  flowPrev: "Previous step",
  flowNext: "Next step",
  flowPlay: "Play the 20 steps",
  flowPause: "Pause",
  flowDetails: "The step's numbers ↓",
  flowEarlier: "… {n} earlier tokens",
  flowEmbSum: "token embedding + position embedding: the vector entering block 0",
  flowEmbOnly: "token embedding only: positions enter inside attention (RoPE)",
  flowNoPositions:
    "No position vector is added: this model rotates each head's q and k by an angle that grows with the position (RoPE), inside attention.",
  flowEmb: "emb",
  flowBlocks: "{n} blocks",
  flowStreamOf: "the residual stream of position {p}",
  flowKvGroup: "query heads {a}–{b} share key/value head {g}",
  flowKvOwn: "each head has its own keys and values",
  flowGqa: "{n} query heads, {kv} key/value heads (grouped-query)",
  flowMha: "{n} heads, each with its own q, k, v",
  flowRope: "RoPE rotates q and k by position",
  flowSwiglu: "SiLU(gate) × up: {d} → {f} → {d}",
  flowGelu: "GELU: {d} → {f} → {d}",
  flowFinal: "Final {norm}",
  flowAt: "position {p}",
  flowArchGpt2: "GPT-2 architecture: learned position vectors added to the tokens, LayerNorm, multi-head attention, GELU MLP.",
  tlTitle: "Samples over training",
  tlNote:
    "What the model wrote while it learned {corpus}: {n} characters from the same seed ({seed}) and prime at each iteration, so only its weights differ. Slide from noise to spaced “words” to sentences.",
  tlSlider: "training iteration",
  tlIteration: "iteration {i}",
  tlLoss: "train loss {loss}",
  rnnTopUnit: "Opened on the unit the cell finder ranks first: {feature}, layer {l}, unit {u} ({kind}).",
  nbTitle: "Nearest tokens to “{tok}” (id {id}) in the embedding matrix",
  nbHint:
    "Cosine similarity between this token's row of W_E and every other row ({n} tokens in all): 1 is the same direction, 0 unrelated. Tokens used alike in training tend to end up near each other.",
  flowArchLlama:
    "Llama architecture: no position vectors (RoPE rotates q and k inside attention), RMSNorm, grouped-query attention ({kv} key/value heads), SwiGLU MLP.",
};

const zh = {
  maskedKeys: "键 {a}–{b}：在查询之后，被掩码",
  strongestKeys: "权重最大的 {n} 个键（共 {of} 个），按位置排列：",
  allKeys: "全部 {n} 个键",
  ablScope: "只有这个面板会变：旁边的下一个 token 概率、“生成”和 20 个步骤仍然运行完整的模型。",
  ablScopeSide: "这是完整模型的概率：在“消融”中关闭的 {n} 个部分只改变“消融”面板。",
  charSpanTip: "“{text}”：这 {n} 个 token 各自包含它的一部分 UTF-8 字节",
  charSpanPartial: "“{text}”：字节在一个字符的中间结束（后面还应有字节）",
  byteStarts: "{tok} 是一个字符 {of} 个 UTF-8 字节中的前 {have} 个：要等下一个 token 补上其余字节，才成为那个字符（字节级 BPE，见第 5 步）。",
  completesChar: "补完“{char}”",
  byteEnds: "{tok} 补完一个在它之前开头的字符：是那个字符的最后 {n} 个 UTF-8 字节（字节级 BPE，见第 5 步）。",
  byteTitle: "字节级 BPE：为什么有些小块显示 <0x..>",
  byteText:
    "这个分词器处理的是文本的 UTF-8 字节，而不是字符。它的词表从全部 256 个字节值开始，所以任何" +
    "文本都能表示；训练时再把常一起出现的相邻片段合并成更长的 token。合并没有覆盖到的字符（例如" +
    "许多汉字，“我”是 E6 88 91 三个字节）会被拆到几个 token 里：每个小块显示 <0xE6> 这样的字节，" +
    "单独看不是字符，而这些小块上方的标签显示它们合起来组成的字。模型看到的只是 token 的 id。",
  byteHere: "在这个提示词里：“{text}”由 {n} 个 token 组成（位置 {a}–{b}）。",
  spmTitle: "SentencePiece 式 BPE：空格写成 ▁，缺的字符写成 <0x..> 字节",
  spmText:
    "这个分词器直接处理文本的字符。合并之前，每个空格都变成 ▁（U+2581，小块上显示为 ·），文本最前面还要再加一个，" +
    "所以第一个词和后面的词一样以空格开头。训练把常一起出现的相邻片段合并成更长的 token。词表里没有的字符，" +
    "比如表情符号或生僻汉字，会退回到它的 UTF-8 字节（龘 是 E9 BE 98 三个字节），每个字节一个 <0xE9> 这样的 token，" +
    "这些小块上方的标签显示它们合起来的字符。模型看到的只有 token id。",
  linesTitle: "把注意力画成连线 · 第 {l} 层",
  lines_head: "头 {h}",
  lines_all: "所有头",
  lines_mean: "各头平均",
  linesKeys: "键（被读取）",
  linesQueries: "查询（在读取）",
  linesLooks: "{p} “{tok}” 关注（{who}）：{list}",
  linesReadBy: "{p} “{tok}” 最常被这些位置读取（{who}）：{list}",
  linesHint:
    "每条线把一个查询（右）连到它读取的一个键（左）；线的粗细和不透明度就是注意力权重。" +
    "把鼠标移到 token 上：右边的显示它看向哪里，左边的显示哪些后面的 token 读取它。点击右边的 token 可选中该位置。",
  linesGqa: "分组查询注意力：{n} 个查询头共用 {kv} 组键和值，每组 {g} 个头。",
  linesOutside: "{w} 的权重落在位置 {a} 之前",
  flowControls: "逐步浏览 Transformer",
  flowPrev: "上一步",
  flowNext: "下一步",
  flowPlay: "播放 20 个步骤",
  flowPause: "暂停",
  flowDetails: "这一步的数字 ↓",
  flowEarlier: "… 前面还有 {n} 个 token",
  flowEmbSum: "token 嵌入 + 位置嵌入：进入第 0 层的向量",
  flowEmbOnly: "只有 token 嵌入：位置信息在注意力内部加入（RoPE）",
  flowNoPositions: "这里不加位置向量：这个模型在注意力内部把每个头的 q 和 k 旋转一个随位置增大的角度（RoPE）。",
  flowEmb: "嵌入",
  flowBlocks: "{n} 层",
  flowStreamOf: "位置 {p} 的残差流",
  flowKvGroup: "查询头 {a}–{b} 共用键/值头 {g}",
  flowKvOwn: "每个头都有自己的键和值",
  flowGqa: "{n} 个查询头，{kv} 个键/值头（分组查询）",
  flowMha: "{n} 个头，各有自己的 q、k、v",
  flowRope: "RoPE 按位置旋转 q 和 k",
  flowSwiglu: "SiLU(gate) × up：{d} → {f} → {d}",
  flowGelu: "GELU：{d} → {f} → {d}",
  flowFinal: "最终 {norm}",
  flowAt: "位置 {p}",
  flowArchGpt2: "GPT-2 架构：学习到的位置向量加到 token 上，LayerNorm，多头注意力，GELU MLP。",
  tlTitle: "训练过程中的采样",
  tlNote: "模型在学习 {corpus} 时写出的文字：每次迭代都用同一个种子（{seed}）和开头生成 {n} 个字符，只有权重不同。拖动滑块，从噪声到带空格的“单词”再到句子。",
  tlSlider: "训练迭代",
  tlIteration: "第 {i} 次迭代",
  tlLoss: "训练损失 {loss}",
  rnnTopUnit: "打开的是细胞查找器排名第一的单元：{feature}，第 {l} 层，单元 {u}（{kind}）。",
  nbTitle: "嵌入矩阵中离“{tok}”（id {id}）最近的 token",
  nbHint: "这个 token 在 W_E 中的行与其余每一行（共 {n} 个 token）的余弦相似度：1 表示方向相同，0 表示无关。训练中用法相近的 token 往往彼此靠近。",
  flowArchLlama: "Llama 架构：没有位置向量（RoPE 在注意力内部旋转 q 和 k），RMSNorm，分组查询注意力（{kv} 个键/值头），SwiGLU MLP。",
};

addStrings(en, zh);
