// Strings of the "Why Transformers" page, in English and Simplified Chinese. The tables,
// explanations and verdicts come from the result files themselves (both languages inside);
// these are the page's own words and the lesson's claim that each experiment tests.
// Importing this module registers them.

import { addStrings } from "./i18n.js";

const en = {
  whyLink: "Why Transformers",
  whyTagline: "why Transformers replaced RNNs, measured on real hardware",
  whyBack: "GPT explainer",
  whyTitle: "Why Transformers replaced RNNs",
  whyIntro:
    "Until 2017 the best sequence models were recurrent networks (RNN, LSTM, GRU). The lesson " +
    "names their weaknesses: computation that must run one step after another, gradients " +
    "that fade over distance, and a fixed-width state; attention removes the first two at " +
    "the price of memory that grows with the square of the sequence length. Each experiment " +
    "below puts one claim to the test. Every table and plot comes from a saved result file " +
    "that names the hardware it was measured on.",
  whyHowTo:
    "Shipped examples were measured when lmscope was built. To measure your own machine, run " +
    "the command shown under an experiment (a progress bar shows how far it is), then reload " +
    "this page: results written to {dir} appear as “your machine”.",
  claim_serial_depth:
    "The lesson: an RNN computes h_t = f(h_{t-1}, x_t), so N tokens are N steps that must " +
    "run one after another, while attention's weighted sum over positions has no such chain. " +
    "On parallel hardware it is this dependency depth, not the number of operations, that " +
    "sets the time. One figure of the lesson is wrong: it gives a parallel scan a depth of " +
    "O(1). Combining N numbers two at a time takes at least log2 N rounds, so the depth is " +
    "log2 N, far below the recurrence's N but not constant (the table below counts it).",
  claim_memory_wall:
    "The lesson: the Transformer's price is memory. Attention over N positions builds an " +
    "N × N score matrix per head, O(N²), while an RNN's state stays the same size; fused " +
    "kernels such as Flash Attention hide the constant, not the scaling. That holds for the " +
    "computation, not for the memory: with a fused kernel (SDPA below) memory grows as O(N), " +
    "because the score matrix is never stored whole, while the work stays O(N²), every query " +
    "still meeting every earlier key, so the time still grows with the square.",
  claim_race:
    "The lesson: “at N = 512 on the same hardware the Transformer trains 5–10× faster per " +
    "epoch”, and the gap widens with sequence length. Here a char LSTM and a char GPT with " +
    "equal parameter counts train on the same text, in the same order, for the same time.",
  claim_gradient_flow:
    "The lesson: information from 50 tokens back has passed through 50 nonlinear steps, so " +
    "its gradient fades; gates (LSTM, GRU) slow the fading but do not remove it, while " +
    "attention reaches any earlier position in one step.",
  claim_recall:
    "The lesson: an RNN must squeeze the whole past into a hidden state of fixed size, " +
    "however long that past is, while attention keeps a key and a value for every earlier " +
    "position (the KV cache) and looks back at them directly, at the price of memory that " +
    "grows with every token read. Here an LSTM, a GRU and a GPT of equal size must recall " +
    "a list of symbols after N filler characters.",
  whyShipped: "shipped example",
  whyLocal: "your machine",
  whyMeasured: "measured on {machine}",
  whyCreated: "created {date}",
  whyRerun: "Re-run on your machine",
  whyCopy: "Copy",
  whyCopied: "Copied",
  whyNotYet: "No result yet: run the command below to make one.",
  whyTable: "Table: {n} rows",
  whyPlotAlt: "Plot: {title}",
  whyYes: "yes",
  whyNo: "NO",
};

const zh = {
  whyLink: "为什么是 Transformer",
  whyTagline: "为什么 Transformer 取代了 RNN：在真实硬件上实测",
  whyBack: "GPT 解析器",
  whyTitle: "为什么 Transformer 取代了 RNN",
  whyIntro:
    "2017 年以前，最好的序列模型是循环网络（RNN、LSTM、GRU）。课程指出了它们的弱点：计算必须" +
    "一步接一步地进行，梯度随距离衰减，隐藏状态宽度固定；注意力去掉了前两个弱点，代价是随序列" +
    "长度平方增长的显存。下面每个实验检验其中一个说法。所有表格和图都来自保存的结果文件，文件里" +
    "写明了测量所用的硬件。",
  whyHowTo:
    "随附示例在构建 lmscope 时测得。要测量你自己的机器，请运行实验下方给出的命令（终端里的进度" +
    "条会显示进度），然后刷新本页：写入 {dir} 的结果会以“你的机器”出现。",
  claim_serial_depth:
    "课程：RNN 计算 h_t = f(h_{t-1}, x_t)，N 个 token 就是 N 个必须依次执行的步骤；注意力对各" +
    "位置的加权求和没有这样的依赖链。在并行硬件上，决定时间的是依赖深度，而不是运算总数。" +
    "课程有一个数字是错的：它说并行扫描的深度是 O(1)。两两合并 N 个数至少需要 log2 N 轮，" +
    "所以深度是 log2 N，远小于循环的 N，但不是常数（下表实际数出了它）。",
  claim_memory_wall:
    "课程：Transformer 的代价是显存。对 N 个位置做注意力，每个头都要一张 N × N 的分数矩阵，" +
    "即 O(N²)；RNN 的状态大小不变。Flash Attention 这类融合 kernel 隐藏了常数，没有改变增长率。" +
    "这句话对计算量成立，对显存却不成立：用融合 kernel（下面的 SDPA）时显存按 O(N) 增长，" +
    "因为分数矩阵从不完整保存；计算量仍是 O(N²)，每个查询仍要和前面每个键相乘，所以耗时仍按" +
    "平方增长。",
  claim_race:
    "课程：“在 N=512、相同硬件条件下，Transformer 每个 epoch 训练快 5–10 倍”，而且差距随序列" +
    "长度扩大。这里让参数量相同的字符级 LSTM 和字符级 GPT 在同一文本上、以相同顺序、训练相同" +
    "时间。",
  claim_gradient_flow:
    "课程：50 个 token 之前的信息已经过 50 次非线性变换，它的梯度随之衰减；门控（LSTM、GRU）" +
    "减缓了衰减但没有消除它，而注意力一步就能到达任何更早的位置。",
  claim_recall:
    "课程：无论过去有多长，RNN 都必须把整个过去压进一个固定大小的隐藏状态；注意力则为之前的" +
    "每个位置保留一个键和一个值（KV cache），直接回看它们，代价是内存随读过的每个 token 增长。" +
    "这里让参数量相同的 LSTM、GRU 和 GPT 在 N 个填充字符之后回忆一个符号列表。",
  whyShipped: "随附示例",
  whyLocal: "你的机器",
  whyMeasured: "测量于 {machine}",
  whyCreated: "生成于 {date}",
  whyRerun: "在你的机器上重新运行",
  whyCopy: "复制",
  whyCopied: "已复制",
  whyNotYet: "还没有结果：运行下面的命令来生成。",
  whyTable: "表格：{n} 行",
  whyPlotAlt: "图：{title}",
  whyYes: "是",
  whyNo: "否",
};

addStrings(en, zh);
