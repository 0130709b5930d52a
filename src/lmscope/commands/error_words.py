"""The most common error lines in Chinese, for ``--lang zh`` (and $LMSCOPE_LANG).

The library raises one English line; ``cli.main`` rewords its advice for the command line
(``cli.in_cli_words``) and then, in Chinese, looks the line up here. A line that no pattern
matches stays English. Each entry: the English line as a pattern (named groups are its
values), the Chinese with those values, and the Chinese of optional parts.
"""

from __future__ import annotations

import re

# (English pattern, Chinese, {optional group: its Chinese, with {value}})
_ENTRIES: tuple[tuple[str, str, dict[str, str]], ...] = (
    (
        r"(?P<n>[\d,]+) character\(s\) are not in the (?P<name>.+?) vocabulary: (?P<chars>.+?)"
        r"; remove them from the text(?P<skip>, or pass --skip-unknown to drop them)?",
        "有 {n} 个字符不在 {name} 词表里：{chars}；请从文本中删去它们{skip}",
        {"skip": "，或加上 --skip-unknown 跳过它们"},
    ),
    (
        r"the prompt has (?P<n>\d+) character\(s\) the model never saw: (?P<shown>.+); remove "
        r"them or pass --skip-unknown",
        "提示词里有 {n} 个模型从没见过的字符：{shown}；删掉它们或加上 --skip-unknown",
        {},
    ),
    (
        r"the prompt is (?P<n>[\d,]+) tokens(?: plus (?P<room>\d+) to generate)?; the model's "
        r"context is (?P<context>[\d,]+)\. Shorten it(?: or use --truncate to keep the last "
        r"(?P<limit>[\d,]+))?",
        "提示词有 {n} 个 token{room}，而模型的上下文是 {context}。请缩短它{limit}",
        {"room": "（另加 {room} 个要生成的）", "limit": "，或用 --truncate 只保留最后 {limit} 个"},
    ),
    (
        r"the prompt is empty; (?:type some text|give at least one token)",
        "提示词是空的；请输入一些文字",
        {},
    ),
    (
        r"no character of the prompt is in the model's vocabulary",
        "提示词中没有一个字符在模型的词表里",
        {},
    ),
    (
        r"unknown model (?P<name>.+?): not a folder, a \.gguf file, .*",
        "未知模型 {name}：它不是文件夹或 .gguf 文件，也不是 smollm2、随附的模型、GPT-2 简称"
        "（gpt2、distilgpt2 等）或 hub id（owner/name）",
        {},
    ),
    (r"no such file or folder: (?P<name>.+)", "没有这个文件或文件夹：{name}", {}),
    (
        r"the weights in (?P<source>.+) are not finite: (?P<key>\S+) holds (?P<n>[\d,]+) "
        r"(?P<kind>NaN|infinite) values?\. Pass --allow-nonfinite to study a broken model anyway",
        "{source} 中的权重不全是有限值：{key} 含有 {n} 个 {kind} 值。加上 --allow-nonfinite "
        "可以照样研究这个损坏的模型",
        {},
    ),
    (
        r"layer (?P<value>-?\d+) does not exist; this model has layers 0\.\.(?P<last>\d+)",
        "第 {value} 层不存在；这个模型的层编号是 0 到 {last}",
        {},
    ),
    (
        r"head (?P<value>-?\d+) does not exist; this model has heads 0\.\.(?P<last>\d+)",
        "头 {value} 不存在；这个模型的头编号是 0 到 {last}",
        {},
    ),
    (
        r"position (?P<value>-?\d+) does not exist; the sequence has positions "
        r"0\.\.(?P<last>\d+)",
        "位置 {value} 不存在；这段序列的位置是 0 到 {last}",
        {},
    ),
    (
        r"(?P<name>.+) is a char-(?P<arch>\w+); 'lmscope (?P<command>\w+)' needs a Transformer "
        r"\(char-RNNs work with generate, sample and compare\)",
        "{name} 是字符级 {arch}；'lmscope {command}' 需要 Transformer（字符级 RNN 可以用 "
        "generate、sample 和 compare）",
        {},
    ),
)
_COMPILED = [(re.compile(en, re.S), zh, parts) for en, zh, parts in _ENTRIES]


def in_lang(message: str, lang: str) -> str:
    """``message`` in ``lang``: Chinese where a pattern matches it, else as it is."""
    if lang == "en":
        return message
    for pattern, chinese, parts in _COMPILED:
        found = pattern.fullmatch(message)
        if found:
            values = {k: v or "" for k, v in found.groupdict().items()}
            for name, words in parts.items():
                values[name] = words.format(**values) if values.get(name) else ""
            return chinese.format(**values)
    return message
