"""Training data: corpora, a deterministic train/val split, an encoding cache, and batches.

corpus = load_corpus("shakespeare")            # or "warpeace", "python-stdlib", a path
encoded = encode_corpus(corpus, tokenizer)     # memory-mapped ids, cached on disk
for x, y in RandomBatches(encoded.train, batch_size=12, context=64, seed=1): ...
"""

from lmscope.data.batches import RandomBatches, StreamBatches
from lmscope.data.cache import (
    CACHE_ENV,
    EncodedCorpus,
    default_cache_dir,
    dtype_for_vocab,
    encode_corpus,
    tokenizer_identity,
)
from lmscope.data.corpora import (
    DEFAULT_STDLIB_MAX_CHARS,
    STDLIB_NAME,
    Corpus,
    decode_text,
    known_corpora,
    load_corpus,
    load_python_stdlib,
    stdlib_root,
    train_val_split,
)

__all__ = [
    "CACHE_ENV",
    "DEFAULT_STDLIB_MAX_CHARS",
    "STDLIB_NAME",
    "Corpus",
    "EncodedCorpus",
    "RandomBatches",
    "StreamBatches",
    "decode_text",
    "default_cache_dir",
    "dtype_for_vocab",
    "encode_corpus",
    "known_corpora",
    "load_corpus",
    "load_python_stdlib",
    "stdlib_root",
    "tokenizer_identity",
    "train_val_split",
]
