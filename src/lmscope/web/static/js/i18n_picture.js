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
  byteTitle: "Byte-level BPE: why some chips show <0x..>",
  byteText:
    "This tokenizer works on the UTF-8 bytes of the text, not on its characters. Its vocabulary " +
    "starts with all 256 byte values, so any text at all can be written, and training merged " +
    "frequent neighbours into longer tokens. A character that the merges did not cover, such as " +
    "many Chinese characters (我 is the three bytes E6 88 91), is split across tokens: each chip " +
    "then shows bytes like <0xE6> that are no character on their own, and the label above those " +
    "chips shows the character they form together. The model sees only the token ids.",
  byteHere: "In this prompt: “{text}” is made of {n} tokens (positions {a}–{b}).",
};

const zh = {
  maskedKeys: "键 {a}–{b}：在查询之后，被掩码",
  strongestKeys: "权重最大的 {n} 个键（共 {of} 个），按位置排列：",
  allKeys: "全部 {n} 个键",
  ablScope: "只有这个面板会变：旁边的下一个 token 概率、“生成”和 20 个步骤仍然运行完整的模型。",
  ablScopeSide: "这是完整模型的概率：在“消融”中关闭的 {n} 个部分只改变“消融”面板。",
  charSpanTip: "“{text}”：这 {n} 个 token 各自包含它的一部分 UTF-8 字节",
  charSpanPartial: "“{text}”：字节在一个字符的中间结束（后面还应有字节）",
  byteTitle: "字节级 BPE：为什么有些小块显示 <0x..>",
  byteText:
    "这个分词器处理的是文本的 UTF-8 字节，而不是字符。它的词表从全部 256 个字节值开始，所以任何" +
    "文本都能表示；训练时再把常一起出现的相邻片段合并成更长的 token。合并没有覆盖到的字符（例如" +
    "许多汉字，“我”是 E6 88 91 三个字节）会被拆到几个 token 里：每个小块显示 <0xE6> 这样的字节，" +
    "单独看不是字符，而这些小块上方的标签显示它们合起来组成的字。模型看到的只是 token 的 id。",
  byteHere: "在这个提示词里：“{text}”由 {n} 个 token 组成（位置 {a}–{b}）。",
};

addStrings(en, zh);
