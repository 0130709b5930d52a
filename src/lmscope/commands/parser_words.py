"""The option parser's own error lines in Chinese, for ``--lang zh`` (and $LMSCOPE_LANG).

argparse says what is wrong with a command line in English (``argument --temperature/-t:
invalid float value: 'abc'``); lmscope's parser (``cli.Parser.error``) passes that message here
before printing it. Option names, values and the usage block stay as typed: they are what the
user types. A message ``argument NAME: ...`` is said as ``参数 NAME：...``; what follows is
argparse's (the table below) or an option's type function's (``error_words``). A line that no
pattern matches stays English.
"""

from __future__ import annotations

import re

from lmscope.commands.error_words import in_lang

# (argparse's English as a pattern, the Chinese with its named groups)
_ENTRIES: tuple[tuple[str, str], ...] = (
    (r"invalid (?P<type>\S+) value: (?P<value>.+)", "{value} 不是有效的{type}"),
    (
        r"invalid choice: (?P<value>.+?) \(choose from (?P<choices>.+)\)",
        "无效的选择 {value}（可选：{choices}）",
    ),
    (r"expected one argument", "需要一个值"),
    (r"expected at most one argument", "最多只能给一个值"),
    (r"expected at least one argument", "至少需要一个值"),
    (r"expected (?P<n>\d+) arguments?", "需要 {n} 个值"),
    (r"the following arguments are required: (?P<names>.+)", "缺少必需的参数：{names}"),
    (r"one of the arguments (?P<names>.+) is required", "必须给出以下参数之一：{names}"),
    (r"unrecognized arguments: (?P<names>.+)", "无法识别的参数：{names}"),
    (r"not allowed with argument (?P<other>.+)", "不能与参数 {other} 同时使用"),
    (r"ignored explicit argument (?P<value>.+)", "这个选项不带值，却给了 {value}"),
    (
        r"ambiguous option: (?P<option>\S+) could match (?P<matches>.+)",
        "有歧义的选项 {option}：可以是 {matches}",
    ),
    (r"unexpected option string: (?P<option>.+)", "意外的选项 {option}"),
    (r"can't open (?P<name>.+?): (?P<reason>.+)", "无法打开 {name}：{reason}"),
)
_COMPILED = [(re.compile(en, re.S), zh) for en, zh in _ENTRIES]
_ARGUMENT = re.compile(r"argument (?P<name>.+?): (?P<message>.+)", re.S)
# the type in "invalid TYPE value": argparse names the type function
_TYPES = {"int": "整数", "float": "浮点数", "str": "字符串", "Path": "路径"}


def parser_message_in(message: str, lang: str) -> str:
    """argparse's ``message`` in ``lang``: Chinese where a pattern matches it, else as it is."""
    if lang == "en":
        return message
    argument = _ARGUMENT.fullmatch(message)
    if argument:
        return f"参数 {argument['name']}：{_said(argument['message'], lang)}"
    return _said(message, lang)


def _said(message: str, lang: str) -> str:
    for pattern, chinese in _COMPILED:
        found = pattern.fullmatch(message)
        if found:
            values = found.groupdict()
            if "type" in values:
                values["type"] = _type_words(values["type"])
            return chinese.format(**values)
    return in_lang(message, lang)  # an option's type function said it (lmscope's own words)


def _type_words(name: str) -> str:
    """A type function's name as the kind of value it reads: int as 整数; another class as
    itself (Fraction); a function's name (parse, seed_value) says nothing to a user: 值."""
    if name in _TYPES:
        return _TYPES[name]
    return f" {name} 值" if name[:1].isupper() else "值"
