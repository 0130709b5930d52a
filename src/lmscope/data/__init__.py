"""Training data: corpora, a deterministic train/val split, an encoding cache, and batches.

corpus = load_corpus("shakespeare")            # or "warpeace", "python-stdlib", a path
encoded = encode_corpus(corpus, tokenizer)     # memory-mapped ids, cached on disk
for x, y in RandomBatches(encoded.train, batch_size=12, context=64, seed=1): ...
"""

from lmscope.lazy import lazy_names

# Names load on first use (as in ``lmscope/__init__.py``): the CLI's help reads the corpus names
# from ``lmscope.data.corpora`` without importing torch through the batches.
_LAZY = {
    "RandomBatches": "lmscope.data.batches",
    "StreamBatches": "lmscope.data.batches",
    "CACHE_ENV": "lmscope.data.cache",
    "EncodedCorpus": "lmscope.data.cache",
    "default_cache_dir": "lmscope.data.cache",
    "dtype_for_vocab": "lmscope.data.cache",
    "encode_corpus": "lmscope.data.cache",
    "tokenizer_identity": "lmscope.data.cache",
    "DEFAULT_STDLIB_MAX_CHARS": "lmscope.data.corpora",
    "STDLIB_NAME": "lmscope.data.corpora",
    "Corpus": "lmscope.data.corpora",
    "corpus_names": "lmscope.data.corpora",
    "decode_text": "lmscope.data.corpora",
    "known_corpora": "lmscope.data.corpora",
    "load_corpus": "lmscope.data.corpora",
    "load_python_stdlib": "lmscope.data.corpora",
    "stdlib_root": "lmscope.data.corpora",
    "train_val_split": "lmscope.data.corpora",
}


__getattr__, __dir__ = lazy_names(__name__, _LAZY)


__all__ = [
    "CACHE_ENV",
    "DEFAULT_STDLIB_MAX_CHARS",
    "STDLIB_NAME",
    "Corpus",
    "EncodedCorpus",
    "RandomBatches",
    "StreamBatches",
    "corpus_names",
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
