"""Where the lesson needs correcting, the texts say so, in both languages: Flash Attention's
memory O(N) against its O(N²) work, a parallel scan's depth log2 N (not O(1)), attention
gathering from a position itself too, GELU's small negative dip."""

from __future__ import annotations

from lmscope import i18n
from lmscope.explain import catalogue
from lmscope.lab import texts
from lmscope.lab.configs import SerialDepthConfig
from lmscope.lab.results import shown
from lmscope.lab.serial_depth import depth_section


def why_text(key: str) -> dict[str, str]:
    """A claim of the /why page (the catalog's page.why.claim-<name>) in each language."""
    return {lang: i18n.catalog(lang)[f"page.why.{key.replace('_', '-')}"] for lang in ("en", "zh")}


def test_flash_attention_memory_is_linear_its_work_is_not():
    en, zh = shown(texts.FLASH, "en"), shown(texts.FLASH, "zh")
    assert "hide the constant, not the scaling" in en and "O(N)" in en and "O(N²)" in en
    assert "隐藏了常数，没有改变增长率" in zh and "O(N)" in zh and "O(N²)" in zh
    params = {"heads": 12, "d_head": 64, "batch": 1, "dtype": "float32", "device": "cpu"}
    section = texts.attention([], params | {"peak_method": "VmHWM"}, [])
    assert shown(section["explain"], "en").endswith(en)
    assert zh in shown(section["explain"], "zh")
    why = why_text("claim_memory_wall")
    assert "hide the constant, not the scaling" in why["en"]
    assert "memory grows as O(N)" in why["en"] and "the work stays O(N²)" in why["en"]
    assert "显存按 O(N) 增长" in why["zh"] and "计算量仍是 O(N²)" in why["zh"]


def test_the_lesson_is_told_plainly_that_a_scan_is_log2_n_deep():
    en, zh = shown(texts.SCAN_DEPTH, "en"), shown(texts.SCAN_DEPTH, "zh")
    assert "The lesson's figure is wrong" in en and "O(1)" in en and "log2 N" in en
    assert "课程在这里的数字是错的" in zh and "O(1)" in zh and "log2 N" in zh
    section = depth_section(SerialDepthConfig(max_n=256))
    assert en in shown(section.explain, "en") and zh in shown(section.explain, "zh")
    why = why_text("claim_serial_depth")
    assert "One figure of the lesson is wrong" in why["en"] and "log2 N" in why["en"]
    assert "课程有一个数字是错的" in why["zh"] and "log2 N" in why["zh"]


def test_attention_gathers_from_the_position_itself_too():
    step = catalogue.step_text("self-attention")
    assert "from itself and the earlier positions" in step.summary["en"]
    assert "它自己和前面" in step.summary["zh"]
    assert "itself and the earlier positions" in step.text["en"] and "它自己" in step.text["zh"]


def test_gelu_dips_below_zero():
    text = catalogue.step_text("mlp").text
    assert "−0.17" in text["en"] and "x ≈ −0.75" in text["en"]
    assert "−0.17" in text["zh"] and "x ≈ −0.75" in text["zh"]
