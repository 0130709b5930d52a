// Errors in the reader's language. The server answers every failure with one English line, a
// code and the numbers in the line (lmscope/web/error_codes.py); the page says the known ones in
// its own words, in English or Chinese, naming only controls it has. An unknown code keeps the
// server's line in English and gets a generic line in Chinese (the English one as its tooltip).

import { addStrings, lang, t } from "./i18n.js";

const en = {
  err_empty_prompt: "The prompt is empty; type some text.",
  err_too_long: "The prompt is {n} tokens, but this model's context holds at most {context}. Shorten the prompt.",
  err_context_full: "The text already fills the model's context of {context} tokens: shorten the prompt to generate more.",
  err_trace_too_long: "The prompt is {n} tokens: too long to record every layer at once. Shorten the prompt.",
  err_unknown_id: "Token id {id} is not in the vocabulary (0 to {last}).",
  err_no_known_chars: "No character of the prompt is in this model's vocabulary.",
  err_unknown_chars:
    "{n} character(s) of the prompt are not in this model's vocabulary: {chars}{more}. Remove them from the prompt.",
  more_chars: " and {more} more",
  err_no_tokenizer: "This model has no tokenizer: type token ids separated by spaces.",
  err_out_of_range: "{what} {value} does not exist; this model has {what} 0 to {last}.",
  err_ablation_out_of_range: "“{spec}”: {what} {value} does not exist; this model's are numbered 0 to {last}.",
  err_ablation_unreadable:
    "Cannot read “{spec}”: write L5H3 (a head), L5H* (a layer's heads), attn5 or mlp5 (a whole sublayer), attn* or mlp* (every layer), separated by commas or spaces.",
  err_busy: "The server is busy; try again in a moment.",
  err_busy_retry: "The server is busy; try again in {retry} s.",
  err_busy_alone:
    "This prompt alone needs about {need} s of model work, so the server runs it only when nothing else is queued; try again in {retry} s.",
  retry_by_itself: "The page tries again by itself.",
  err_body_too_large: "The request is too large (the limit is {kib} KiB).",
  err_unreachable: "Cannot reach the lmscope server: is `lmscope serve` still running?",
  err_internal: "The server failed unexpectedly; please report it.",
  err_generic: "The server refused the request ({code}).",
  what_layer: "layer",
  what_head: "head",
  what_position: "position",
  what_unit: "unit",
  reason_end_of_text: "end of text",
  reason_context_full: "the context is full",
  reason_done: "done",
  reason_stopped: "you pressed Stop", // not "Stopped: Stop."
};

const zh = {
  err_empty_prompt: "提示词是空的；请输入一些文字。",
  err_too_long: "提示词有 {n} 个 token，而这个模型最多读 {context} 个。请缩短提示词。",
  err_context_full: "文本已占满模型 {context} 个 token 的上下文：缩短提示词才能继续生成。",
  err_trace_too_long: "提示词有 {n} 个 token，太长，无法一次记录每一层。请缩短提示词。",
  err_unknown_id: "token id {id} 不在词表中（0 到 {last}）。",
  err_no_known_chars: "提示词中没有一个字符在这个模型的词表里。",
  err_unknown_chars: "提示词中有 {n} 个字符不在这个模型的词表里：{chars}{more}。请从提示词中删去它们。",
  more_chars: "，另有 {more} 个",
  err_no_tokenizer: "这个模型没有分词器：请输入用空格分隔的 token id。",
  err_out_of_range: "{what} {value} 不存在；这个模型的{what}编号是 0 到 {last}。",
  err_ablation_out_of_range: "“{spec}”：{what} {value} 不存在；这个模型的{what}编号是 0 到 {last}。",
  err_ablation_unreadable:
    "无法识别“{spec}”：请写 L5H3（一个头）、L5H*（一层的所有头）、attn5 或 mlp5（整个子层）、attn* 或 mlp*（每一层），用逗号或空格分隔。",
  err_busy: "服务器正忙，请稍后再试。",
  err_busy_retry: "服务器正忙，请 {retry} 秒后再试。",
  err_busy_alone: "这个提示词单独就需要约 {need} 秒的模型计算，服务器只在没有别的任务排队时运行它；请 {retry} 秒后再试。",
  retry_by_itself: "页面会自动重试。",
  err_body_too_large: "请求太大（上限是 {kib} KiB）。",
  err_unreachable: "连接不到 lmscope 服务器：`lmscope serve` 还在运行吗？",
  err_internal: "服务器意外出错，请报告这个问题。",
  err_generic: "服务器拒绝了这个请求（{code}）。",
  what_layer: "层",
  what_head: "头",
  what_position: "位置",
  what_unit: "单元",
  reason_end_of_text: "文本结束",
  reason_context_full: "上下文已满",
  reason_done: "完成",
  reason_stopped: "按下了“停止”",
};

addStrings(en, zh);

// Codes whose page text is used in both languages: the server's line may name options
// (truncate=...) that only the Python API has.
const OWN_WORDS = new Set(Object.keys(en).filter((k) => k.startsWith("err_")).map((k) => k.slice(4)));
OWN_WORDS.delete("generic");

function number(v) {
  return /^\d+$/.test(v) ? Number(v).toLocaleString("en-US") : v;
}

// The line to show for an error with this code, params and server message.
export function errorText(code, params = {}, message = "") {
  if (code && OWN_WORDS.has(code)) {
    const vars = {};
    for (const [k, v] of Object.entries(params ?? {})) vars[k] = number(String(v));
    if (vars.what) vars.what = t(`what_${vars.what}`);
    if (code === "unknown_chars") vars.more = vars.more ? t("more_chars", { more: vars.more }) : "";
    // a refusal that says when to come back (and, for a prompt too long to wait behind
    // others, how long it takes alone) is said with those numbers
    const busy = code === "busy" && vars.retry ? (vars.need ? "busy_alone" : "busy_retry") : null;
    return t(`err_${busy ?? code}`, vars);
  }
  if (lang() === "en" && message) return message;
  return t("err_generic", { code: code ?? "error" });
}

// Why a generation stopped ("end of text", "context full", "done"), in the page's language.
export function reasonText(reason) {
  const key = `reason_${String(reason).replace(/ /g, "_")}`;
  const text = t(key);
  return text === key ? reason : text;
}
