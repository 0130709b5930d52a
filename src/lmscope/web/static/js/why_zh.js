// Chinese for what the lab's result files say in English only: the column headers of their
// tables, the text in their cells (model shapes, why a run stopped) and the machine line. The
// explanations, verdicts and titles are bilingual in the files themselves. A header missing
// here would stay English: tests/web check every header of the shipped results has one.

import { lang } from "./i18n.js";

export const HEADERS = {
  N: "N",
  a: "a",
  "1,024 tokens, float16": "1,024 个 token，float16",
  "1,024 tokens, float32": "1,024 个 token，float32",
  "64 floats, NumPy": "64 个浮点数，NumPy",
  "64 floats, lists": "64 个浮点数，列表",
  "Blelloch = serial": "Blelloch = 串行",
  "Blelloch depth": "Blelloch 深度",
  "Blelloch rounds": "Blelloch 轮数",
  "Blelloch scan": "Blelloch 扫描",
  "Blelloch work": "Blelloch 运算量",
  "H-S = serial": "H-S = 串行",
  "H-S depth": "H-S 深度",
  "H-S rounds": "H-S 轮数",
  "H-S work": "H-S 运算量",
  "Hillis-Steele scan": "Hillis-Steele 扫描",
  "LSTM peak": "LSTM 峰值",
  "LSTM state": "LSTM 状态",
  "LSTM time": "LSTM 用时",
  "NumPy / scalar": "NumPy / 标量",
  "N²·heads·bytes": "N²·头数·字节",
  "SDPA peak": "SDPA 峰值",
  "SDPA time": "SDPA 用时",
  "achieved GFLOP/s": "实测 GFLOP/s",
  "additions (both)": "加法次数（两者）",
  "assoc.": "结合律",
  "bytes/token, float16": "字节/token，float16",
  "bytes/token, float32": "字节/token，float32",
  chunked: "分块",
  "closed form non-finite from N =": "闭式解从 N = 起非有限",
  d_model: "d_model",
  device: "设备",
  dtype: "数据类型",
  "epochs done": "完成的轮数",
  equal: "相等",
  "err assoc.": "误差（结合律）",
  "err chunked": "误差（分块）",
  "factor per step": "每步的倍数",
  "first N that did not": "第一个放不下的 N",
  "forward FLOPs/token": "前向 FLOPs/token",
  "k=256 / k=1": "k=256 / k=1",
  "largest N that fit": "放得下的最大 N",
  layers: "层数",
  "lists / scalar": "列表 / 标量",
  loop: "循环",
  "loop/chunked": "循环/分块",
  "loop/sum": "循环/求和",
  "max rel. diff": "最大相对差",
  "max rel. diff Blelloch": "最大相对差 Blelloch",
  "max rel. diff H-S": "最大相对差 H-S",
  method: "方法",
  model: "模型",
  "naive / theory": "朴素 / 理论",
  "naive peak": "朴素实现峰值",
  "naive time": "朴素实现用时",
  "ns/item (rec.)": "纳秒/项（递归）",
  "ns/item (sum)": "纳秒/项（求和）",
  parameters: "参数量",
  recurrence: "递归",
  "recurrence / sum": "递归 / 求和",
  "recurrence depth": "递归深度",
  "recurrence steps": "递归步数",
  "scalar h": "标量 h",
  "serial depth": "串行深度",
  "serial work": "串行运算量",
  "shallower by": "浅了",
  shape: "结构",
  step: "步",
  steps: "步数",
  "sum/len": "sum/len",
  "time per epoch": "每轮用时",
  "tokens seen": "见过的 token",
  "tokens/s": "token/秒",
  "train loss": "训练损失",
  "training time": "训练用时",
  "tree depth": "树的深度",
  "val loss": "验证损失",
  "val loss at the end": "最终验证损失",
  "why it stopped": "停止原因",
  "x.sum()": "x.sum()",
  "µs/step NumPy": "微秒/步 NumPy",
  "µs/step lists": "微秒/步 列表",
  "size (GPT width)": "规模（GPT 宽度）",
  "fixed state": "固定状态",
  "KV cache per character": "每个字符的 KV 缓存",
  "answer loss at the end": "最终答案损失",
  "distance N": "距离 N",
  "symbols P": "符号数 P",
  "accuracy [95% interval]": "准确率 [95% 区间]",
  "memory at the answer": "答题时的记忆",
};

// k=1, k=2, ...: a distance, the same in both languages
const SAME = /^k=\d+$/;

const CELLS = [
  [/^out of memory: could not allocate (.+) more$/, "内存不足：无法再分配 $1"],
  [/^all sizes fit$/, "所有规模都放得下"],
  [/^naive$/, "朴素实现"],
  [/^sdpa$/, "SDPA"],
  [/^cpu$/, "CPU"],
  [/^cuda$/, "CUDA"],
  [/^vanilla RNN$/, "普通 RNN"],
  [/^Transformer \(char GPT\)$/, "Transformer（字符级 GPT）"],
  [/^lstm$/, "LSTM"],
  [/^gru$/, "GRU"],
  [/^rnn$/, "RNN"],
  [/(\d+) layers?/g, "$1 层"],
  [/(\d+) heads?/g, "$1 个头"],
  [/hidden (\d+)/g, "隐藏层 $1"],
  [/embed (\d+)/g, "嵌入 $1"],
  [/, /g, "，"],
];

export function header(label) {
  if (lang() !== "zh" || SAME.test(label)) return label;
  return HEADERS[label] ?? label;
}

export function cellText(text) {
  if (lang() !== "zh") return text;
  let out = text;
  for (const [pattern, zh] of CELLS) {
    const next = out.replace(pattern, zh);
    if (next !== out && pattern.flags.indexOf("g") < 0) return next; // a whole-cell phrase
    out = next;
  }
  return out;
}

// "Intel Xeon (...), 2 cores, torch 2.13 (1 thread), 2026-11-30" in Chinese
export function machineText(line) {
  if (lang() !== "zh") return line;
  return line
    .replace(/family (\d+) model (\d+)/, "系列 $1 型号 $2")
    .replace(/(\d+) cores/, "$1 核")
    .replace(/\((\d+) threads?\)/, "（$1 线程）")
    .replace(/, /g, "，");
}
