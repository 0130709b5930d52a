// Strings of the "look inside" views (logit lens, ablation, compare) and the position
// scrubber, in English and Simplified Chinese. Importing this module registers them.

import { addStrings } from "./i18n.js";

const en = {
  lookInside: "Look inside",
  view_lens: "Logit lens",
  view_ablation: "Ablation",
  view_compare: "Compare models",
  view_lens_explain:
    "What would the model predict if it stopped early? The logit lens reads the residual " +
    "stream after the embedding and after every block through the model's own final " +
    "LayerNorm and unembedding. Each cell shows the top next-token prediction at that depth; " +
    "its colour is that token's probability. The last row is the model's real output. Hover a " +
    "cell for the top tokens and for where the final prediction ranks at that depth.",
  view_ablation_explain:
    "Switch parts of the model off and watch the prediction change. Click a head in the grid " +
    "to switch it off (click again to switch it back on), or switch off a whole attention or " +
    "MLP layer. Zero replaces the part's output with zeros; mean replaces it with its average " +
    "over the prompt's positions. The server reruns the model and shows the next-token " +
    "probabilities before and after, and the KL divergence between them.",
  view_compare_explain:
    "Two models read the same text. Each token is coloured by how surprised each model was " +
    "(its loss, −log p, in nats), and by the difference. When the models split the text into " +
    "different tokens, each token's loss is spread evenly over its characters and the " +
    "comparison is per character.",

  lensWindow: "positions {a}–{b} of {n}",
  lensEarlier: "← Earlier",
  lensLater: "Later →",
  lensInput: "input →",
  lensEmbed: "embedding",
  lensBlock: "block {l}",
  lensOutput: "= output",
  lensActual: "actual next",
  lensTipTop: "top {k} after {stage}:",
  lensTipFinal: "final prediction “{tok}”: rank {r}, {p}",
  lensLegend:
    "Colour: probability of the cell's top token. Bold: it already is the model's final " +
    "prediction. Click a column to select that position.",

  ablMode: "Replace with",
  ablZero: "zero",
  ablMean: "mean",
  ablReset: "Reset: switch everything on",
  ablOffCount: "{n} switched off",
  ablNoneOff: "Everything is on. Click a head, or a layer's attention or MLP, to switch it off.",
  ablGrid: "Every head's attention over positions {a}–{b}; click a head to switch it off",
  ablHeadOff: "layer {l}, head {h}: off (click to switch on)",
  ablHeadOn: "layer {l}, head {h}: click to switch off",
  ablCovered: "layer {l}, head {h}: off with the whole attention layer",
  ablAttn: "attention",
  ablMlp: "MLP",
  ablAttnOn: "block {l}: switch the whole attention output off",
  ablAttnOff: "block {l}: the whole attention output is off (click to switch on)",
  ablMlpOn: "block {l}: switch the whole MLP output off",
  ablMlpOff: "block {l}: the whole MLP output is off (click to switch on)",
  ablByName: "Switch off by name",
  ablAdd: "Switch off",
  ablEffect: "Next-token probabilities after position {p} {tok}: before → after",
  ablKl: "KL(before ‖ after) = {kl} nats",
  ablOffList: "Switched off ({mode}):",
  ablLegend: "Grey: before. Coloured: after (green rose, red fell).",
  ablBefore: "before",
  ablAfter: "after",
  ablUpdating: "Running the model with these parts switched off…",

  cmpNone:
    "This server has no second model. Start it with “lmscope serve --compare MODEL” " +
    "(repeatable) to compare.",
  cmpWith: "Compare with",
  cmpText: "Scored text: the prompt and any generated tokens ({n} characters).",
  cmpPerToken: "Per token: both models split the text into the same tokens.",
  cmpPerChar:
    "Per character: the models split the text into different tokens, so each token's loss is " +
    "spread evenly over its characters (nats per character).",
  cmpMeans: "Mean loss: A {a} · B {b} nats per {unit}",
  cmpToken: "token",
  cmpChar: "character",
  cmpRowA: "A: {name} — loss (white → red: more surprised)",
  cmpRowB: "B: {name}",
  cmpRowDiff: "B − A: red where B is more surprised, blue where A is",
  cmpUnscored: "not scored (nothing comes before it to predict it)",

  scrub: "Position",
  scrubHint: "drag, or ← → on a token",
  scrubHintLong: "Drag the slider, or press ← → (Home, End) on a token, to step through the positions.",
  scrubNext: "next {tok} {p}",
  scrubTop: "top {tok} {p}",
  scrubLast: "next: not generated yet",
  scrubOwn: " (model, T = 1)", // the space is English's: Chinese brackets need none
  scrubOwnLong: "The model's own probabilities (T = 1, no top-k, top-p or min-p); the sampling panel shows them after your settings.",
  attnTint: "tint: attention from {p} (L{l} H{h})",
  attnTintLong: "The chips are tinted by how much position {p} attends to each token (layer {l}, head {h}).",
};

const zh = {
  lookInside: "深入模型内部",
  view_lens: "Logit 透镜",
  view_ablation: "消融实验",
  view_compare: "模型对比",
  view_lens_explain:
    "如果模型提前停下，它会预测什么？Logit 透镜把嵌入之后、以及每一层之后的残差流，送进" +
    "模型自己的最终 LayerNorm 和反嵌入矩阵读出。每个格子显示这一深度对下一个 token 的首选预测，" +
    "颜色表示它的概率。最后一行就是模型真实的输出。鼠标悬停在格子上，可以看到前几名候选，以及" +
    "模型的最终预测在这一深度排第几。",
  view_ablation_explain:
    "把模型的某些部分关掉，看预测如何变化。在网格里点击一个注意力头即可关闭它（再点一次恢复），" +
    "也可以关闭某一层的整个注意力或 MLP。“置零”把该部分的输出换成 0；“均值”把它换成它在提示词" +
    "各位置上的平均值。服务器会重新运行模型，给出关闭前后下一个 token 的概率，以及两者之间的 KL 散度。",
  view_compare_explain:
    "两个模型读同一段文本。每个 token 按各个模型对它的“意外程度”着色（即损失 −log p，单位 nats），" +
    "第三行是两者之差。如果两个模型的分词方式不同，就把每个 token 的损失平均分给它包含的字符，" +
    "改为按字符比较。",

  lensWindow: "位置 {a}–{b}（共 {n} 个）",
  lensEarlier: "← 往前",
  lensLater: "往后 →",
  lensInput: "输入 →",
  lensEmbed: "嵌入",
  lensBlock: "第 {l} 层",
  lensOutput: "= 输出",
  lensActual: "实际的下一个",
  lensTipTop: "{stage}之后的前 {k} 名：",
  lensTipFinal: "最终预测“{tok}”：排第 {r} 名，概率 {p}",
  lensLegend: "颜色：格中首选 token 的概率。粗体：它已经是模型的最终预测。点击某一列可选中该位置。",

  ablMode: "替换为",
  ablZero: "置零",
  ablMean: "均值",
  ablReset: "重置：全部恢复",
  ablOffCount: "已关闭 {n} 项",
  ablNoneOff: "所有部分都开着。点击一个注意力头，或某一层的注意力 / MLP，即可关闭它。",
  ablGrid: "各注意力头在位置 {a}–{b} 上的注意力；点击某个头即可关闭它",
  ablHeadOff: "第 {l} 层第 {h} 个头：已关闭（点击恢复）",
  ablHeadOn: "第 {l} 层第 {h} 个头：点击关闭",
  ablCovered: "第 {l} 层第 {h} 个头：随整层注意力一起关闭",
  ablAttn: "注意力",
  ablMlp: "MLP",
  ablAttnOn: "第 {l} 层：关闭整个注意力输出",
  ablAttnOff: "第 {l} 层：整个注意力输出已关闭（点击恢复）",
  ablMlpOn: "第 {l} 层：关闭整个 MLP 输出",
  ablMlpOff: "第 {l} 层：整个 MLP 输出已关闭（点击恢复）",
  ablByName: "按名称关闭",
  ablAdd: "关闭",
  ablEffect: "位置 {p} {tok} 之后下一个 token 的概率：关闭前 → 关闭后",
  ablKl: "KL(关闭前 ‖ 关闭后) = {kl} nats",
  ablOffList: "已关闭（{mode}）：",
  ablLegend: "灰色：关闭前。彩色：关闭后（绿色表示上升，红色表示下降）。",
  ablBefore: "关闭前",
  ablAfter: "关闭后",
  ablUpdating: "正在关闭这些部分并重新运行模型……",

  cmpNone: "这个服务器没有用于对比的第二个模型。启动时加上“lmscope serve --compare 模型”（可重复）即可对比。",
  cmpWith: "对比模型",
  cmpText: "评分文本：提示词及已生成的 token（共 {n} 个字符）。",
  cmpPerToken: "按 token 比较：两个模型的分词结果相同。",
  cmpPerChar: "按字符比较：两个模型的分词结果不同，因此把每个 token 的损失平均分给它的各个字符（单位：nats/字符）。",
  cmpMeans: "平均损失：A {a} · B {b} nats/{unit}",
  cmpToken: "token",
  cmpChar: "字符",
  cmpRowA: "A：{name} — 损失（白 → 红：越意外）",
  cmpRowB: "B：{name}",
  cmpRowDiff: "B − A：红色表示 B 更意外，蓝色表示 A 更意外",
  cmpUnscored: "未评分（它前面没有内容可用来预测它）",

  scrub: "位置",
  scrubHint: "拖动，或在 token 上按 ← →",
  scrubHintLong: "拖动滑块，或在 token 上按 ← →（Home、End），逐个查看各位置。",
  scrubNext: "下一个 {tok} {p}",
  scrubOwn: "（模型原始概率，T = 1）",
  scrubOwnLong: "模型自身的概率（T = 1，不做 top-k、top-p、min-p 截断）；采样面板显示的是按你的设置调整后的概率。",
  scrubTop: "首选 {tok} {p}",
  scrubLast: "下一个：尚未生成",
  attnTint: "底色：位置 {p} 的注意力（L{l} H{h}）",
  attnTintLong: "token 的底色表示位置 {p} 对它的注意力（第 {l} 层，第 {h} 个头）。",
};

addStrings(en, zh);
