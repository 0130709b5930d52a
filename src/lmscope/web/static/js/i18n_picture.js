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
};

const zh = {
  maskedKeys: "键 {a}–{b}：在查询之后，被掩码",
  strongestKeys: "权重最大的 {n} 个键（共 {of} 个），按位置排列：",
  allKeys: "全部 {n} 个键",
  ablScope: "只有这个面板会变：旁边的下一个 token 概率、“生成”和 20 个步骤仍然运行完整的模型。",
  ablScopeSide: "这是完整模型的概率：在“消融”中关闭的 {n} 个部分只改变“消融”面板。",
};

addStrings(en, zh);
