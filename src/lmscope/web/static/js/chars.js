// Readable byte-level tokens. A byte-level BPE splits text into UTF-8 bytes before merging, so
// one character (我 is E6 88 91) may lie across several tokens whose chips show bytes such as
// <0xE6>. The server lists those runs (TraceResponse.chars, lmscope/explain/chars.py); here the
// chips of a run are wrapped together under one label showing the character they form.

import { el, visible } from "./draw.js";
import { paren, t } from "./catalog.js";

// chips: token chips in position order (chip.dataset.position); spans: [{start, end, text,
// complete}]. Returns the nodes to put in the chip row: chips, and groups of chips.
export function groupChips(chips, spans) {
  const byStart = new Map((spans ?? []).map((s) => [s.start, s]));
  const out = [];
  for (let i = 0; i < chips.length; i++) {
    const span = byStart.get(Number(chips[i].dataset.position));
    if (!span) {
      out.push(chips[i]);
      continue;
    }
    const members = chips.slice(i, i + span.end - span.start + 1);
    i += members.length - 1;
    out.push(charGroup(span, members));
  }
  return out;
}

// The text of tokens 0..last as a reader writes it: a character whose bytes lie over several
// tokens is written once as itself, not as their <0xE8><0xA7> pieces; one cut at `last` keeps
// the bytes it has so far.
export function readableText(tokens, spans, last) {
  const byStart = new Map((spans ?? []).filter((s) => s.complete).map((s) => [s.start, s]));
  let text = "";
  for (let i = 0; i <= last && i < tokens.length; i++) {
    const span = byStart.get(i);
    if (span && span.end <= last) {
      text += span.text;
      i = span.end;
    } else {
      text += tokens[i].text;
    }
  }
  return text;
}

// The bytes a token's text stands for: each "<0xE8>" its byte, the rest as UTF-8.
function textBytes(text) {
  const encoder = new TextEncoder();
  return text.split(/(<0x[0-9A-F]{2}>)/).flatMap((part) => {
    const byte = /^<0x([0-9A-F]{2})>$/.exec(part);
    return byte ? [parseInt(byte[1], 16)] : [...encoder.encode(part)];
  });
}

// Bytes of the UTF-8 character that starts with `lead` (1 for a byte that starts none).
function charLength(lead) {
  if (lead >= 0xc2 && lead < 0xe0) return 2;
  if (lead >= 0xe0 && lead < 0xf0) return 3;
  return lead >= 0xf0 && lead < 0xf5 ? 4 : 1;
}

const isContinuation = (b) => b >= 0x80 && b < 0xc0;

// Bytes as text: each whole character as itself, any other byte as <0xE8>.
function bytesText(bytes) {
  const decoder = new TextDecoder("utf-8", { fatal: true });
  let out = "";
  for (let i = 0; i < bytes.length; ) {
    const n = charLength(bytes[i]);
    const piece = bytes.slice(i, i + n);
    let char = null;
    if (piece.length === n && piece.slice(1).every(isContinuation)) {
      try {
        char = decoder.decode(Uint8Array.from(piece));
      } catch {
        char = null; // an overlong or surrogate form: not a character
      }
    }
    if (char === null) {
      out += `<0x${bytes[i].toString(16).toUpperCase().padStart(2, "0")}>`;
      i += 1;
    } else {
      out += char;
      i += n;
    }
  }
  return out;
}

// The last of `texts` (token texts in order) as a reader sees it: a token whose bytes complete
// a character begun before it (<0xE8><0xA7>, then <0x86>) is that character (视); bytes that
// form no character yet stay <0x..>. A token of plain text is itself.
export function lastPiece(texts) {
  const last = texts.at(-1) ?? "";
  if (!/<0x[0-9A-F]{2}>/.test(last)) return last;
  const before = texts.slice(-4, -1).flatMap(textBytes); // a character has at most 4 bytes
  const bytes = [...before, ...textBytes(last)];
  let start = before.length;
  if (isContinuation(bytes[start])) {
    for (let k = start - 1; k >= Math.max(0, start - 3); k--) {
      if (isContinuation(bytes[k])) continue;
      if (charLength(bytes[k]) > start - k) start = k; // its character reaches into the last token
      break;
    }
  }
  return bytesText(bytes.slice(start));
}

// The last of `texts` (token texts in order), quoted; a byte token that completes a character
// begun before it says which: “<0x9F>” (completes “够”).
export function quotedToken(texts) {
  const raw = texts.at(-1) ?? "";
  const shown = `“${visible(raw)}”`;
  const piece = lastPiece(texts);
  if (piece === raw || /<0x[0-9A-F]{2}>/.test(piece)) return shown;
  return shown + paren(t("page.picture.completes-char", { char: visible(piece) }));
}

// What a predicted token's bytes are, when it shows some as <0x..>: `ends`, how many bytes at
// its start finish a character begun before it, and `cut` ({have, of}) when its last character
// is cut short (the next token must bring the rest). Null for a token of whole characters.
export function byteParts(text) {
  if (!/<0x[0-9A-F]{2}>/.test(text)) return null;
  const bytes = textBytes(text);
  let i = 0;
  while (i < bytes.length && isContinuation(bytes[i])) i++;
  const ends = i;
  let cut = null;
  while (i < bytes.length) {
    const n = charLength(bytes[i]);
    if (n > 1 && i + n > bytes.length) {
      cut = { have: bytes.length - i, of: n };
      break;
    }
    i += n;
  }
  return { ends, cut };
}

// One sentence on what a byte token is (null for a token of whole characters).
export function byteNote(text, shown) {
  const parts = byteParts(text);
  if (!parts) return null;
  if (parts.cut) return t("page.picture.byte-starts", { tok: shown, have: parts.cut.have, of: parts.cut.of });
  if (parts.ends) return t("page.picture.byte-ends", { tok: shown, n: parts.ends });
  return null;
}

function charGroup(span, members) {
  const label = el("span", {
    class: `char-label${span.complete ? "" : " partial"}`,
    "data-testid": "char-span",
    "data-start": span.start,
    "data-end": span.end,
    text: span.text.replace(/\n/g, "↵"),
    title: t(span.complete ? "page.picture.char-span-tip" : "page.picture.char-span-partial", { n: span.end - span.start + 1, text: span.text }),
  });
  return el("span", { class: "char-group" }, label, el("span", { class: "char-chips" }, members));
}

// Step 5's paragraph on how this tokenizer cuts text (byte-level BPE, or SentencePiece's BPE
// over characters), with this prompt's own example of a character split into bytes when it
// has one; none for a character vocabulary.
export function tokenizerNote(kind, spans) {
  if (kind === "chars") return [];
  const spm = kind === "sentencepiece-bpe";
  const example = spans?.find((s) => s.complete);
  return [
    el(
      "section",
      { class: "viz byte-note", "data-testid": spm ? "sentencepiece-note" : "byte-level-note" },
      el("h4", { text: t(spm ? "page.picture.spm-title" : "page.picture.byte-title") }),
      el("p", { text: t(spm ? "page.picture.spm-text" : "page.picture.byte-text") }),
      example ? el("p", { class: "hint", text: t("page.picture.byte-here", { text: example.text, n: example.end - example.start + 1, a: example.start, b: example.end }) }) : null,
    ),
  ];
}
