"""The most common error lines in Chinese, for ``--lang zh`` (and $LMSCOPE_LANG).

The library raises one English line; ``cli.main`` rewords its advice for the command line
(``cli.in_cli_words``) and then, in Chinese, looks the line up here. A line that no pattern
matches stays English. Each entry: the English line as a pattern (named groups are its
values), the Chinese with those values, and the Chinese of optional parts. The option
parser's own lines have theirs in ``parser_words``; an option's type function speaks here.
``error_line`` is the line printed, ``lmscope: 错误：...`` in Chinese.
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
        r"the weights in (?P<source>.+) are not finite: (?P<key>\S+) holds (?P<n>[\d,]+) "
        r"(?P<kind>NaN|infinite) values?\. Pass --allow-nonfinite to study a broken model anyway",
        "{source} 中的权重不全是有限值：{key} 含有 {n} 个 {kind} 值。加上 --allow-nonfinite "
        "可以照样研究这个损坏的模型",
        {},
    ),
    (
        r"the weights in (?P<source>.+) are not floating-point numbers: (?P<key>\S+) is "
        r"(?P<dtype>\w+); a model's weights are float32, float16 or bfloat16",
        "{source} 中的权重不是浮点数：{key} 的类型是 {dtype}；模型的权重应是 float32、float16 "
        "或 bfloat16",
        {},
    ),
    (
        r"the weights in (?P<source>.+) do not fit the model: missing (?P<names>\[.*\])",
        "{source} 中的权重与模型不符：缺少 {names}",
        {},
    ),
    (
        r"the weights in (?P<source>.+) do not fit the model: unexpected (?P<names>\[.*\])",
        "{source} 中的权重与模型不符：多出 {names}",
        {},
    ),
    (
        r"the weights in (?P<source>.+) do not fit the model: (?P<key>\S+) has shape "
        r"(?P<shape>\(.*?\)), the config implies (?P<implied>\(.*\))",
        "{source} 中的权重与模型不符：{key} 的形状是 {shape}，而配置要求 {implied}",
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
    # --- what a command's options name: steps, ablations, positions, sampling ----------------
    (
        r"--step (?P<text>.+?) is not a step: give a number 1-20 or a key \((?P<keys>.+)\)",
        "--step {text} 不是一个步骤：请给出 1-20 的数字或步骤名（{keys}）",
        {},
    ),
    (
        r"cannot read ablation (?P<spec>.+?); use L5H3 \(a head\), L5H\* \(a layer's heads\), "
        r"attn5 or mlp5 \(a whole sublayer\), attn\* / mlp\* \(every layer\)",
        "无法识别的消融写法 {spec}；可用 L5H3（一个头）、L5H*（一层的所有头）、attn5 或 mlp5"
        "（整个子层）、attn* / mlp*（每一层）",
        {},
    ),
    (
        r"(?P<spec>.+?): layer (?P<value>-?\d+) does not exist \(0\.\.(?P<last>\d+)\)",
        "{spec}：第 {value} 层不存在（0..{last}）",
        {},
    ),
    (
        r"(?P<spec>.+?): head (?P<value>-?\d+) does not exist \(0\.\.(?P<last>\d+)\)",
        "{spec}：头 {value} 不存在（0..{last}）",
        {},
    ),
    (
        r"--positions must be comma-separated integers, got (?P<got>.+)",
        "--positions 必须是用逗号分隔的整数，收到 {got}",
        {},
    ),
    (
        r"--positions: (?P<p>-?\d+) is outside the prompt of (?P<n>[\d,]+) tokens? "
        r"\(0\.\.(?P<last>-?\d+), or (?P<first>-\d+)\.\.-1 from the end\)",
        "--positions：{p} 超出了提示词的 {n} 个 token（0..{last}，或从末尾数 {first}..-1）",
        {},
    ),
    (
        r"position (?P<p>-?\d+) is outside the prompt \(0\.\.(?P<last>-?\d+)\)",
        "位置 {p} 超出了提示词（0..{last}）",
        {},
    ),
    (
        r"(?P<flag>--[\w-]+) must be a number, got (?P<got>.+)",
        "{flag} 必须是一个数，收到 {got}",
        {},
    ),
    (
        r"(?P<flag>--[\w-]+) must be in (?P<range>[(\[]0, 1\]) \((?:(?P<off>leave it out for off)|"
        r"(?P<zero>0 or left out: off))\), got (?P<got>.+)",
        "{flag} 必须在 {range} 范围内（{off}{zero}），收到 {got}",
        {"off": "不设则关闭", "zero": "0 或不设则关闭"},
    ),
    (
        r"(?P<flag>\S+) must be a finite number >= (?P<low>\S+), got (?P<got>.+)",
        "{flag} 必须是不小于 {low} 的有限数，收到 {got}",
        {},
    ),
    (
        r"(?P<flag>\S+) must be an integer >= (?P<low>\S+) \(0 or None = off\), got (?P<got>.+)",
        "{flag} 必须是不小于 {low} 的整数（0 或不设则关闭），收到 {got}",
        {},
    ),
    (
        r"(?P<flag>\S+) must be 0 \(off\) or more, got (?P<got>.+)",
        "{flag} 必须是 0（关闭）或更大，收到 {got}",
        {},
    ),
    (
        r"(?P<name>.+) has no chat template; chat mode needs an instruction-tuned model such as "
        r"smollm2",
        "{name} 没有对话模板；对话模式需要 smollm2 这样的指令微调模型",
        {},
    ),
    # --- models, files and folders ---------------------------------------------------------
    (r"no such text file: (?P<name>.+)", "没有这个文本文件：{name}", {}),
    (
        r"(?P<name>.+) is a char-(?P<arch>\w+); 'lmscope serve --model' needs a Transformer\. "
        r"Char-RNNs have the neurons page: (?P<command>lmscope serve --rnn .+)",
        "{name} 是字符级 {arch}；'lmscope serve --model' 需要 Transformer。字符级 RNN 有神经元"
        "页面：{command}",
        {},
    ),
    (
        r"cannot listen on (?P<where>.+?) \((?P<why>.+)\); --host (?P<host>\S+) is not an "
        r"address of this machine; use 127\.0\.0\.1 \(this machine only\) or 0\.0\.0\.0 "
        r"\(every network interface\)",
        "无法在 {where} 上监听（{why}）；--host {host} 不是这台机器的地址；请用 127.0.0.1"
        "（只有本机能访问）或 0.0.0.0（所有网络接口）",
        {},
    ),
    (
        r"cannot listen on (?P<where>.+?) \((?P<why>.+)\); pick another --port",
        "无法在 {where} 上监听（{why}）；请换一个 --port",
        {},
    ),
    (
        r"give exactly two --model options, got (?P<n>\d+)",
        "请给出恰好两个 --model，收到 {n} 个",
        {},
    ),
    (r"(?P<path>.+) is a folder, not a text file", "{path} 是文件夹，不是文本文件", {}),
    (r"(?P<path>.+) is not a UTF-8 text file", "{path} 不是 UTF-8 文本文件", {}),
    (
        r"(?P<path>.+) is a file, not a folder; choose a folder for --out",
        "{path} 是文件，不是文件夹；请给 --out 一个文件夹",
        {},
    ),
    # where results are written (formats.atomic.cannot_write): train, lab, race, export
    (
        r"--out (?P<out>.+?): (?P<where>.+?) is a file, not a folder"
        r"(?P<choose>; choose another folder)?",
        "--out {out}：{where} 是文件，不是文件夹{choose}",
        {"choose": "；请换一个文件夹"},
    ),
    # empty names, which would have meant the current folder
    (
        r"(?P<flag>--data|--corpus|--text) is empty; (?:(?P<either>name a bundled corpus or a "
        r"text file)|"
        r"(?P<text>name a UTF-8 text file, or '-' for standard input)|name a bundled corpus, "
        r"e\.g\. (?P<example>\S+))",
        "{flag} 是空的；请给出{either}{text}{example}",
        {
            "either": "随附语料的名字或一个文本文件",
            "text": "一个 UTF-8 文本文件，或用 '-' 读标准输入",
            "example": "随附语料的名字，如 {example}",
        },
    ),
    (
        r"RUN is empty; name a model folder or a shipped model to export",
        "RUN 是空的；请给出要导出的模型文件夹或随附模型的名字",
        {},
    ),
    (
        r"OUT is empty; name the folder to write, e\.g\. (?P<example>\S+)",
        "OUT 是空的；请给出要写入的文件夹，如 {example}",
        {},
    ),
    (r"model name is empty", "模型名是空的", {}),
    (
        r"--host is empty; use 127\.0\.0\.1 \(this machine only\) or 0\.0\.0\.0 \(every network "
        r"interface\)",
        "--host 是空的；请用 127.0.0.1（只有本机能访问）或 0.0.0.0（所有网络接口）",
        {},
    ),
    (
        r"--host (?P<host>'.*?') is not a host name or an address \((?P<why>.+)\); use "
        r"127\.0\.0\.1 \(this machine only\) or 0\.0\.0\.0 \(every network interface\)",
        "--host {host} 不是主机名或地址（{why}）；请用 127.0.0.1（只有本机能访问）或 0.0.0.0"
        "（所有网络接口）",
        {},
    ),
    (
        r"model (?P<name>'.+?') has no tokenizer files; the command line reads text, so put the "
        r"tokenizer's files \(tokenizer\.json, or vocab\.json and merges\.txt\) in the "
        r"model's folder",
        "模型 {name} 没有分词器文件；命令行读的是文本，请把分词器的文件（tokenizer.json，或 "
        "vocab.json 和 merges.txt）放进模型的文件夹",
        {},
    ),
    (
        r"LMSCOPE_MAX_TRACE_TOKENS must be a whole number of tokens above 0, got (?P<got>.+); "
        r"unset it for the default (?P<default>[\d,]+)",
        "LMSCOPE_MAX_TRACE_TOKENS 必须是大于 0 的整数（token 数），收到 {got}；取消设置即用默认值 "
        "{default}",
        {},
    ),
    (
        r"(?:the loss became (?P<loss>\S+)|the loss reached (?P<reached>\S+) nats a character|"
        r"(?P<weights>the weights overflowed)|(?P<scores>the scores overflowed)) at iteration "
        r"(?P<i>\d+); training stopped\. Use a smaller --lr \((?P<lr>\S+) makes it diverge; the "
        r"default is (?P<default>\S+)\)",
        "{loss}{reached}{weights}{scores}（第 {i} 次迭代），训练已停止。请用更小的 --lr"
        "（{lr} 会让它发散；默认是 {default}）",
        {
            "loss": "损失变成了 {loss}",
            "reached": "每个字符的损失达到 {reached} nats",
            "weights": "权重溢出了",
            "scores": "分数溢出了",
        },
    ),
    (
        r"size (?P<text>'.*?') is too large to count in bytes; write e\.g\. 4GB, 512MiB or 1000000",
        "大小 {text} 太大，无法按字节计数；请写成如 4GB、512MiB 或 1000000",
        {},
    ),
    (
        r"the corpus name is empty; use one of: (?P<names>.+), or a path to a text file or "
        r"folder\.",
        "语料名是空的；请用其中之一：{names}，或一个文本文件或文件夹的路径。",
        {},
    ),
    (
        r"a micro-batch of --batch (?P<b>\d+) x (?P<flag>--context|--seq) (?P<t>[\d,]+) needs "
        r"about (?P<act>\S+ \S+) for the activations kept for the backward pass(?: \(with "
        r"--dropout (?P<d>\S+) on the CPU attention keeps every head's \S+ x \S+ weights\))?, "
        r"besides (?P<w>\S+ \S+) for the weights, gradients and (?P<opt>\S+) state: more than "
        r"the (?P<avail>\S+ \S+) of (?:(?P<gpu>GPU memory)|(?P<ram>memory)) available; use a "
        r"smaller (?P=flag) or --batch",
        "--batch {b} × {flag} {t} 的一个微批次，反向传播要保留的激活值约需 {act}{d}，权重、梯度"
        "和 {opt} 状态另需 {w}：超过了可用的 {avail}{gpu}{ram}；请减小 {flag} 或 --batch",
        {
            "d": "（在 CPU 上用 --dropout {d} 时，注意力要保留每个头完整的权重矩阵）",
            "gpu": " 显存",
            "ram": " 内存",
        },
    ),
    (r"standard input is not UTF-8 text", "标准输入不是 UTF-8 文本", {}),
    (r"standard input is empty; pipe some text in", "标准输入是空的；请用管道传入一些文字", {}),
    (
        r"(?P<path>.+) is not a regular file; give a UTF-8 text file",
        "{path} 不是普通文件；请给出一个 UTF-8 文本文件",
        {},
    ),
    (
        r"cannot write in (?P<out>\S+): (?P<why>[A-Z][^:;]*)",  # the system's reason (strerror)
        "无法在 {out} 里写入：{why}",
        {},
    ),
    (
        r"--models names no model; use some of (?P<names>.+)",
        "--models 没有给出任何模型；请从 {names} 中选用",
        {},
    ),
    (
        r"(?P<path>.+) is not a complete lab result \((?:no (?P<key>'[^']*')|(?P<said>.+))\); run "
        r"the experiment again to write a complete one",
        "{path} 不是完整的实验结果（{key}{said}）；请重新运行实验，写出完整的结果",
        {"key": "缺少 {key}", "said": "{said}"},
    ),
    (
        r"--out (?P<out>.+?): it is a folder; name the file to write",
        "--out {out}：这是一个文件夹；请给出要写的文件名",
        {},
    ),
    (
        r"--out (?P<out>.+?) is a file, not a folder(?P<choose>; choose another folder)?",
        "--out {out} 是文件，不是文件夹{choose}",
        {"choose": "；请换一个文件夹"},
    ),
    (
        r"--out (?P<out>.+?): cannot write in (?P<where>.+?): (?P<why>.+?)"
        r"(?P<choose>; choose another folder)?",
        "--out {out}：无法在 {where} 里写入：{why}{choose}",
        {"choose": "；请换一个文件夹"},
    ),
    (
        r"--out is empty; give a folder for the checkpoint",
        "--out 是空的；请给出存放检查点的文件夹",
        {},
    ),
    (
        r"--out is empty; name a folder, e.g\. --out (?P<example>\S+)",
        "--out 是空的；请给出一个文件夹，如 --out {example}",
        {},
    ),
    (
        r"(?P<path>.+) is a file, not a folder; choose a folder to export to",
        "{path} 是文件，不是文件夹；请换一个文件夹来导出",
        {},
    ),
    (
        r"cannot (?:(?P<export>export to)|(?P<create>create)) (?P<out>.+?): (?P<where>.+?) is a "
        r"file, not a folder",
        "无法{export}{create} {out}：{where} 是文件，不是文件夹",
        {"export": "导出到", "create": "创建"},
    ),
    (
        r"cannot export to (?P<out>.+?): cannot write in (?P<where>.+?): (?P<why>.+)",
        "无法导出到 {out}：无法在 {where} 里写入：{why}",
        {},
    ),
    (
        r"cannot write (?P<out>\S+): (?P<why>[A-Z][^:;]*)",  # the system's reason (strerror)
        "无法写入 {out}：{why}",
        {},
    ),
    (
        r"(?P<out>.+) is not empty and not an lmscope model \(it holds (?P<names>.+?)"
        r"(?: and (?P<more>\d+) more)?\); export to a new or empty folder \(--overwrite "
        r"replaces only a model lmscope wrote\)",
        "{out} 不是空的，也不是 lmscope 模型（里面有 {names}{more}）；请导出到新的或空的文件夹"
        "（--overwrite 只会替换 lmscope 写的模型）",
        {"more": "，另外还有 {more} 个"},
    ),
    (
        r"(?P<out>.+) holds the lmscope model (?P<model>.+?) and also (?P<names>.+?)"
        r"(?: and (?P<more>\d+) more)?, which lmscope did not write; move those out first or "
        r"export to another folder",
        "{out} 里除了 lmscope 模型 {model}，还有不是 lmscope 写的 {names}{more}；请先把它们移走，"
        "或导出到另一个文件夹",
        {"more": "，另外还有 {more} 个"},
    ),
    (
        r"(?P<out>.+) already holds the lmscope model (?P<model>.+?); pass --overwrite to "
        r"replace it \(atomically\), or choose another folder",
        "{out} 里已有 lmscope 模型 {model}；加 --overwrite 替换它（原子操作），或换一个文件夹",
        {},
    ),
    (
        r"export needs a different output folder than the run folder",
        "导出需要一个不同于模型文件夹的输出文件夹",
        {},
    ),
    (
        r"(?P<out>.+) is inside the model being exported \((?P<run>.+)\); choose a folder "
        r"outside it",
        "{out} 在要导出的模型（{run}）里面；请换一个它外面的文件夹",
        {},
    ),
    (
        r"(?P<out>.+) contains the model being exported \((?P<run>.+)\): writing it would "
        r"replace the model; choose another folder",
        "{out} 包含要导出的模型（{run}）：写入它会替换这个模型；请换一个文件夹",
        {},
    ),
    # text files: a corpus (--data) and the neuron views' --text
    (
        r"(?P<path>.+) is empty; give a corpus with some text in it\.",
        "{path} 是空的；请给出有文字的语料。",
        {},
    ),
    (
        r"(?P<path>.+) looks binary \((?:(?P<nul>it contains NUL bytes)|not UTF-8 text: byte "
        r"(?P<byte>0x[0-9A-F]{2}) at offset (?P<offset>\d+))\); give a (?P<utf8>UTF-8 )?text "
        r"file\.",
        "{path} 看起来是二进制文件（{nul}{byte}）；请给出{utf8}文本文件。",
        {
            "nul": "含有 NUL 字节",
            "byte": "不是 UTF-8 文本：偏移 {offset} 处的字节 {byte}",
            "utf8": " UTF-8 ",
        },
    ),
    (
        r"(?P<path>.+) is not UTF-8 text: byte (?P<byte>0x[0-9A-F]{2}) at offset "
        r"(?P<offset>\d+) \(another encoding, such as Latin-1\?\); convert it first, e\.g\. "
        r"(?P<command>iconv .+)\.",
        "{path} 不是 UTF-8 文本：偏移 {offset} 处的字节 {byte}（也许是 Latin-1 之类的其他编码？）；"
        "请先转换编码，如 {command}。",
        {},
    ),
    (
        r"Cannot read (?P<path>.+) \((?P<why>[^()]+)\); check it\.",
        "无法读取 {path}（{why}）；请检查它。",
        {},
    ),
    (r"no text file at (?P<path>.+)", "{path} 处没有文本文件", {}),
    (
        r"(?P<path>.+) is empty; give a file with some text",
        "{path} 是空的；请给出有文字的文件",
        {},
    ),
    (r"(?P<path>.+) is not UTF-8 text", "{path} 不是 UTF-8 文本", {}),
    (r"cannot read (?P<path>\S+): (?P<why>[A-Z][^:;]*)", "无法读取 {path}：{why}", {}),
    (r"(?P<path>.+) is empty", "{path} 是空的", {}),
    (
        r"say what to show: --cell LAYER:UNIT colours the text by one unit, --find searches "
        r"every unit",
        "请说明要看什么：--cell LAYER:UNIT 按一个单元给文本着色，--find 搜索所有单元",
        {},
    ),
    (
        r"unit (?P<value>-?\d+) does not exist; each layer has units 0\.\.(?P<last>\d+)",
        "单元 {value} 不存在；每层的单元编号是 0 到 {last}",
        {},
    ),
    (
        r"--cell (?P<spec>.+?): write LAYER:UNIT with whole numbers, e\.g\. 0:42 \(layer 0, "
        r"unit 42\)",
        "--cell {spec}：请用整数写成 LAYER:UNIT，如 0:42（第 0 层，单元 42）",
        {},
    ),
    (
        r"an? (?P<arch>LSTM|GRU|RNN) has no (?P<kind>.+?) values; use one of (?P<known>.+)",
        "{arch} 没有 {kind} 值；请用 {known} 之一",
        {},
    ),
    (
        r"--out (?P<out>.+?): the name must end in (?P<suffixes>.+)",
        "--out {out}：文件名必须以 {suffixes} 之一结尾",
        {},
    ),
    (
        r"(?:(?P<flag>--features): )?unknown feature (?P<name>.+?); known: (?P<known>.+) "
        r"\(or a set: (?P<sets>.+)\)",
        "{flag}未知特征 {name}；可用：{known}（或一组：{sets}）",
        {"flag": "{flag}："},
    ),
    (
        r"(?:(?P<flag>--features): )?no features named; give a set \(prose, code\) or feature "
        r"names",
        "{flag}没有指定任何特征；请给出一组（prose、code）或特征名",
        {"flag": "{flag}："},
    ),
    (
        r"--find and --cell do different things; use one of them",
        "--find 和 --cell 做的是不同的事；只用其中一个",
        {},
    ),
    # --- the lab and the race --------------------------------------------------------------
    (
        r"name a result to show: (?P<names>.+), or a folder with result\.json",
        "请指定要显示的结果：{names}，或一个存有 result.json 的文件夹",
        {},
    ),
    (
        r"no lab result at (?P<path>.+); run an experiment with --out first",
        "{path} 处没有 lab 结果；请先用 --out 运行一次实验",
        {},
    ),
    (
        r"(?P<path>.+) is not a result\.json written by lmscope lab \((?:(?P<json>not JSON)|"
        r"no schema (?P<schema>.+))\)",
        "{path} 不是 lmscope lab 写的 result.json（{json}{schema}）",
        {"json": "不是 JSON", "schema": "没有 schema {schema}"},
    ),
    (
        r"unknown model (?P<name>.+?) in --models; use (?P<known>.+)",
        "--models 里有未知模型 {name}；可用：{known}",
        {},
    ),
    (
        r"unknown model (?P<name>'[^']*'); use some of (?P<known>.+)",
        "未知模型 {name}；请从 {known} 中选用",
        {},
    ),
    (
        r"--models needs gpt and at least one of (?P<known>.+?)(?: \(e\.g\. (?P<example>\S+)\))?",
        "--models 需要 gpt 和 {known} 中的至少一个{example}",
        {"example": "（如 {example}）"},
    ),
    (
        r"--sizes takes GPT widths as whole numbers, e\.g\. (?P<example>\S+); got (?P<got>.+)",
        "--sizes 要用整数写 GPT 宽度，如 {example}；收到 {got}",
        {},
    ),
    (
        r"every (?P<flag>--\S+) entry \(a GPT width\) must be a whole number >= "
        r"(?P<low>-?\d+), got (?P<got>.+)",
        "{flag} 的每一项（GPT 宽度）都必须是不小于 {low} 的整数，收到 {got}",
        {},
    ),
    (
        r"(?P<flag>--\S+) (?P<text>.+?) is not a time; use seconds \(240\) or a unit: "
        r"(?P<units>.+)",
        "{flag} {text} 不是时长；请用秒数（240）或带单位的时长：{units}",
        {},
    ),
    (
        r"(?P<flag>--\S+) (?P<text>.+?) is not a finite time",
        "{flag} {text} 不是有限的时长",
        {},
    ),
    (
        r"(?P<flag>--\S+) must be above 0 seconds \((?:e\.g\. (?P<eg>\S+) or (?P<eg2>\S+)|"
        r"(?P<none>or none))\), got (?P<got>.+)",
        "{flag} 必须大于 0 秒（{eg}{none}），收到 {got}",
        {"eg": "如 {eg} 或 {eg2}", "none": "或 none"},
    ),
    (
        r"unknown device (?P<name>.+?); use auto, cpu, cuda or a list: (?P<example>\S+)",
        "未知设备 {name}；请用 auto、cpu、cuda 或逗号分隔的列表（如 {example}）",
        {},
    ),
    (
        r"--device cuda: this PyTorch build sees no CUDA GPU; use --device cpu",
        "--device cuda：这个 PyTorch 找不到 CUDA GPU；请用 --device cpu",
        {},
    ),
    (
        r"--context (?P<context>[\d,]+) with --batch (?P<batch>[\d,]+) needs (?P<need>[\d,]+) "
        r"characters in the (?:(?P<train>training)|(?P<val>validation)) split of (?P<data>.+), "
        r"which has (?P<have>[\d,]+); use a shorter --context, a smaller --batch or a bigger "
        r"corpus",
        "--context {context} 配 --batch {batch} 需要{train}{val}集里有 {need} 个字符，而 {data} "
        "的{train}{val}集只有 {have} 个；请调小 --context 或 --batch，或换更大的语料",
        {"train": "训练", "val": "验证"},
    ),
    # --- minrnn ----------------------------------------------------------------------------
    (
        r"the text has (?P<n>[\d,]+) characters?; one chunk of --seq (?P<seq>[\d,]+) needs "
        r"(?P<need>[\d,]+)\. Use a shorter --seq or a longer text\.",
        "文本只有 {n} 个字符；一段 --seq {seq} 需要 {need} 个。请用更短的 --seq 或更长的文本。",
        {},
    ),
    (
        r"--data has (?P<n>[\d,]+) characters?; a chunk of --seq (?P<seq>[\d,]+) needs "
        r"(?P<need>[\d,]+)\.",
        "--data 只有 {n} 个字符；一段 --seq {seq} 需要 {need} 个。",
        {},
    ),
    (
        r"no shipped result named (?P<name>.+?); shipped: (?P<known>.+)",
        "没有名为 {name} 的随附结果；随附的有：{known}",
        {},
    ),
    # --- training ----------------------------------------------------------------------------
    (
        r"Unknown corpus (?P<name>.+?); use one of: (?P<known>.+), or a path to a text file or "
        r"folder\.",
        "未知语料 {name}；请用 {known} 之一，或文本文件、文件夹的路径。",
        {},
    ),
    (
        r"No file or folder at (?P<name>.+?); check the path, or use one of: (?P<known>.+)\.",
        "{name} 处没有文件或文件夹；请检查路径，或用 {known} 之一。",
        {},
    ),
    (
        r"unknown --arch (?P<arch>.+?); available: (?P<known>.+)",
        "未知的 --arch {arch}；可用：{known}",
        {},
    ),
    (
        r"unknown --tokenizer (?P<spec>.+?); use char, bpe:N \(e\.g\. bpe:2048\) or gpt2",
        "未知的 --tokenizer {spec}；请用 char、bpe:N（如 bpe:2048）或 gpt2",
        {},
    ),
    (
        r"--tokenizer (?P<spec>.+?): the BPE vocabulary size must be a whole number >= 257 "
        r"\(256 bytes \+ <\|endoftext\|>\), e\.g\. bpe:2048",
        "--tokenizer {spec}：BPE 词表大小必须是不小于 257 的整数（256 个字节 + <|endoftext|>），"
        "如 bpe:2048",
        {},
    ),
    (
        r"--iters 0 trains nothing; give --iters 1 or more",
        "--iters 0 什么也不会训练；请给 --iters 1 或更大的值",
        {},
    ),
    (
        r"--device cuda: PyTorch (?P<version>\S+) sees no CUDA GPU here; use --device cpu",
        "--device cuda：PyTorch {version} 在这里找不到 CUDA GPU；请用 --device cpu",
        {},
    ),
    (
        r"(?P<out>.+) already holds a checkpoint \(iteration (?P<i>\d+)\); pass --resume to "
        r"continue it or --overwrite to start again",
        "{out} 里已有一个检查点（第 {i} 次迭代）；加 --resume 接着训练，或加 --overwrite 从头开始",
        {},
    ),
    (
        r"(?P<out>.+) is a file, not a folder; --out names a run's folder",
        "{out} 是文件，不是文件夹；--out 要的是一次训练的文件夹",
        {},
    ),
    (
        r"cannot write the checkpoint of iteration (?P<i>\d+) to (?P<out>.+?): (?P<why>.+?); "
        r"(?:the checkpoint of iteration (?P<kept>\d+) is kept \(continue with: "
        r"(?P<command>lmscope train --resume --out .+)\)|(?P<nothing>nothing was saved))",
        "无法把第 {i} 次迭代的检查点写入 {out}：{why}；{kept}{nothing}",
        {
            "kept": "第 {kept} 次迭代的检查点还在（接着训练：{command}）",
            "nothing": "什么也没有保存",
        },
    ),
    (
        r"rank 0 could not write the checkpoint of iteration (?P<i>\d+) to (?P<out>.+?); its "
        r"own line says why",
        "0 号进程无法把第 {i} 次迭代的检查点写入 {out}；原因见它自己的那一行",
        {},
    ),
    (
        r"the finder needs a longer text: (?P<n>[\d,]+) characters read, at least "
        r"(?P<need>[\d,]+) \((?P<side>\d+) to choose units on and \d+ held out to score them, "
        r"with (?P<f>[\d.]+) of it choosing; a few thousand give steadier scores\)",
        "查找器需要更长的文本：读到 {n} 个字符，至少要 {need} 个（用 {f} 的文本挑选单元、其余的"
        "给它们打分，两边各至少 {side} 个；几千个字符的分数更稳定）",
        {},
    ),
    (
        r"(?P<out>.+) holds no lmscope checkpoint to resume; drop --resume to start a new run "
        r"there",
        "{out} 里没有可以接着训练的 lmscope 检查点；去掉 --resume 就会在那里开始新的训练",
        {},
    ),
    (
        r"(?P<out>.+) holds no lmscope checkpoint to resume, only other files; give --resume "
        r"the --out of an earlier run, or start a new run in another --out",
        "{out} 里没有可以接着训练的 lmscope 检查点，只有别的文件；请给 --resume 配上之前某次"
        "训练的 --out，或在另一个 --out 里开始新的训练",
        {},
    ),
    (
        r"(?P<flag>--\S+) (?P<n>\d+) needs at least (?P<need>[\d,]+) tokens in the "
        r"(?:(?P<train>training)|(?P<val>validation)) split of (?P<data>.+), which has "
        r"(?P<have>[\d,]+); use a shorter (?P=flag)(?P<batch> or --batch)? or a bigger corpus",
        "{flag} {n} 要求{train}{val}集里至少有 {need} 个 token，而 {data} 的{train}{val}集只有 "
        "{have} 个；请把 {flag}{batch} 调小，或换更大的语料",
        {"train": "训练", "val": "验证", "batch": " 或 --batch"},
    ),
    (
        r"(?P<out>.+) holds files that are not an lmscope checkpoint; refusing to overwrite "
        r"them\. Choose another --out",
        "{out} 里的文件不是 lmscope 检查点，不会覆盖它们。请换一个 --out",
        {},
    ),
    (
        r"cannot resume (?P<out>.+?) with (?P<flag>--\S+) (?P<now>.+?): it was trained with "
        r"(?P=flag) (?P<before>.+); keep that setting or start a new run in another --out",
        "不能用 {flag} {now} 接着训练 {out}：它是用 {flag} {before} 训练的；请保留这个设置，"
        "或在另一个 --out 里开始新的训练",
        {},
    ),
    (
        r"--heads is a GPT setting; an? (?P<arch>\w+) has no attention heads \(drop --heads\)",
        "--heads 是 GPT 的设置；{arch} 没有注意力头（去掉 --heads）",
        {},
    ),
    (
        r"--embed is a char-RNN setting; an? (?P<arch>\w+) has no separate input embedding width "
        r"\(its embedding is --dim wide; drop --embed\)",
        "--embed 是字符级 RNN 的设置；{arch} 没有单独的输入嵌入宽度（它的嵌入宽度就是 --dim；"
        "去掉 --embed）",
        {},
    ),
    (
        r"--sample-at takes iterations separated by commas \(e\.g\. 100,300,1000\), "
        r"got (?P<got>.+)",
        "--sample-at 要的是用逗号分隔的迭代次数（如 100,300,1000），收到 {got}",
        {},
    ),
    (
        r"(?P<a>\S+) \((?P<x>[^)]+)\) must be divisible by (?P<b>\S+) \((?P<y>[^)]+)\)"
        r"(?P<unless> unless head_dim is given)?",
        "{a}（{x}）必须能被 {b}（{y}）整除{unless}",
        {"unless": "，除非给出了 head_dim"},
    ),
    (
        r"(?P<flag>--\S+) \((?P<x>[^)]+)\) must not exceed (?P<other>--\S+) \((?P<y>[^)]+)\)",
        "{flag}（{x}）不能大于 {other}（{y}）",
        {},
    ),
    (
        r"(?P<a>--\S+) and (?P<b>--\S+) name one setting; give one of them",
        "{a} 和 {b} 是同一个设置；只给其中一个",
        {},
    ),
    (
        r"(?P<flag>--\S+) (?P<value>.+?) is not one of (?P<known>.+)",
        "{flag} {value} 不是可用的值：{known}",
        {},
    ),
    # --- any option's number: the checks many commands share ----------------------------------
    (
        r"port must be in 0\.\.65535, got (?P<got>.+)",
        "端口（--port）必须在 0..65535 之间，收到 {got}",
        {},
    ),
    (r"(?P<flag>\S+) must be a whole number, got (?P<got>.+)", "{flag} 必须是整数，收到 {got}", {}),
    (
        r"(?P<flag>\S+) must be a whole number >= (?P<low>-?\d+), got (?P<got>.+)",
        "{flag} 必须是不小于 {low} 的整数，收到 {got}",
        {},
    ),
    (
        r"(?P<flag>--\S+) \((?P<alias>\w+)\) must be a whole number >= (?P<low>-?\d+), "
        r"got (?P<got>.+)",
        "{flag}（{alias}）必须是不小于 {low} 的整数，收到 {got}",
        {},
    ),
    (
        r"(?P<flag>\S+) must be >= (?P<low>\S+), got (?P<got>.+)",
        "{flag} 必须不小于 {low}，收到 {got}",
        {},
    ),
    (r"(?P<flag>\S+) must be 0 or more, got (?P<got>.+)", "{flag} 必须是 0 或更大，收到 {got}", {}),
    (
        r"(?P<flag>\S+) must be at least (?P<low>\S+), got (?P<got>.+)",
        "{flag} 至少为 {low}，收到 {got}",
        {},
    ),
    (
        r"(?P<flag>\S+) must be at most (?P<high>\S+), got (?P<got>.+)",
        "{flag} 最多为 {high}，收到 {got}",
        {},
    ),
    (
        r"(?P<flag>\S+) must be a number >= (?P<low>\S+), got (?P<got>.+)",
        "{flag} 必须是不小于 {low} 的数，收到 {got}",
        {},
    ),
    (
        r"(?P<flag>\S+) must be a number above (?P<low>\S+), got (?P<got>.+)",
        "{flag} 必须是大于 {low} 的数，收到 {got}",
        {},
    ),
    (
        r"(?P<flag>\S+) must be more than (?P<low>\S+) seconds, got (?P<got>.+)",
        "{flag} 必须大于 {low} 秒，收到 {got}",
        {},
    ),
    (
        r"(?P<flag>\S+) must be in (?P<range>[\[(][^,]+, [^\])]+[\])])(?P<off> \(or None = off\))?"
        r", got (?P<got>.+)",
        "{flag} 必须在 {range} 范围内{off}，收到 {got}",
        {"off": "（不设则关闭）"},
    ),
    (
        r"(?P<flag>\S+) must be between (?P<low>\S+) and (?P<high>\S+) \(exclusive\), "
        r"got (?P<got>.+)",
        "{flag} 必须在 {low} 和 {high} 之间（不含 {low} 和 {high}），收到 {got}",
        {},
    ),
    (
        r"(?P<flag>\S+) must be between (?P<low>\S+) and (?P<high>\S+), got (?P<got>.+)",
        "{flag} 必须在 {low} 到 {high} 之间，收到 {got}",
        {},
    ),
    (
        r"(?P<flag>\S+) must be a number between (?P<low>\S+) and (?P<high>\S+), "
        r"got (?P<got>.+)",
        "{flag} 必须是 {low} 到 {high} 之间的数，收到 {got}",
        {},
    ),
)
_COMPILED = [(re.compile(en, re.S), zh, parts) for en, zh, parts in _ENTRIES]


_LABELS = {"en": "error: ", "zh": "错误："}


def error_line(prog: str, message: str, lang: str) -> str:
    """One refusal as the command line prints it: ``prog: error: message``, the label in
    ``lang`` (``lmscope: 错误：...``); ``message`` is already in that language."""
    return f"{prog}: {_LABELS.get(lang, _LABELS['en'])}{message}"


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
