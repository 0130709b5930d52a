"""The War and Peace corpus without the kaomoji diary appended to its course copy."""

from __future__ import annotations

from lmscope.data import known_corpora, load_corpus


def test_war_and_peace_novel_corpus_drops_the_appended_diary():
    full = load_corpus("warpeace").text
    novel = load_corpus("warpeace-novel")
    assert full.startswith(novel.text) and len(full) - len(novel.text) == 7_058
    assert novel.text.rstrip().endswith("a dependence of which we are not\nconscious.")
    assert len(set(novel.text)) == 82 and "ノ" not in novel.text


def test_the_variant_is_listed_with_the_corpora():
    assert "warpeace-novel" in known_corpora()
