"""The char-RNN page (/rnn), in English and Chinese: a second click on Sample while one is drawn
left "Sampling…" for good, the readout counted characters from 0 and across skipped ones, a
random seed was never shown, and a text the model cannot read left the old text's colours on
show as if they were this text's.

The server serves a small LSTM over a prose alphabet (no tab, no Chinese). Every request to
anything but the server fails the test (conftest.py)."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest
import torch
from webtools import ARTIFACTS, HANG_S, api, to_chinese

pytestmark = pytest.mark.browser

CHARS = "\n !\"',-.:;?ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
TEXT = 'He said "nothing at all" and went out.\n'


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    """The small LSTM with a sample timeline, and (for /why) a race of the user's own whose LSTM
    epoch took 3,220 s."""
    import lmscope
    from lmscope.engine.rnn_model import RNNLanguageModel
    from lmscope.lab.results import shipped_dir
    from lmscope.models.rnn import CharRNN, CharRNNConfig
    from lmscope.tokenizers import CharTokenizer
    from lmscope.train import timeline
    from lmscope.web import create_app

    home = tmp_path_factory.mktemp("labs-polish-home")
    folder = home / "small-lstm"  # the samples it kept while training, one with a val loss
    folder.mkdir()
    samples = [
        timeline.entry(100, "xq zz", 2.8907, None),
        timeline.entry(1000, "the e", 1.5772, 1.6524),
    ]
    info = {"arch": "lstm", "corpus": "warpeace-novel", "prime": "\n", "seed": 1337, "length": 5}
    for name, data in timeline.files(samples, info).items():
        (folder / name).write_bytes(data)
    torch.manual_seed(0)
    net = CharRNN(CharRNNConfig(vocab_size=len(CHARS), cell="lstm", hidden=16, layers=1))
    rnn = RNNLanguageModel(net, CharTokenizer(CHARS), name="small-lstm", source=str(folder))
    mine = home / "lmscope-results" / "race"
    shutil.copytree(shipped_dir("race"), mine)
    doc = json.loads((mine / "result.json").read_text(encoding="utf-8"))
    doc["sections"][0]["rows"][0]["epoch_s"] = 3220.4
    (mine / "result.json").write_text(json.dumps(doc), encoding="utf-8")
    before = Path.cwd()
    os.chdir(home)
    try:
        return create_app(lmscope.load("shakespeare"), rnn=[rnn])
    finally:
        os.chdir(before)


@pytest.fixture(scope="module")
def page_options() -> dict:
    return {"path": "/rnn", "allowed": ("400",)}  # a text the model cannot read is refused


def wait_until(page, check, timeout_s: float = HANG_S):
    deadline = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < deadline, "timed out"
        page.wait_for_timeout(50)


def read(page, text: str) -> None:
    page.get_by_test_id("rnn-input").fill(text)
    wait_until(page, lambda: page.locator("#rnn-colored .ch, #rnn-colored .skipped").count())
    wait_until(page, lambda: page.evaluate("window.lmscopeRnn.state.view?.text") == text)


HOLD_SAMPLES = """() => {
  // hold each /api/rnn/sample request until the test lets it go, in the order it says
  const real = window.fetch;
  window.held = [];
  window.fetch = (url, init) =>
    String(url).includes('/api/rnn/sample')
      ? new Promise((resolve) => window.held.push(() => resolve(real(url, init))))
      : real(url, init);
}"""


def test_a_second_click_while_sampling_cannot_leave_sampling_on_show(page):
    """Sample, then (the first still drawing) a text the model cannot read and Sample again:
    the refused second request put back what the box held when it was clicked, "Sampling…",
    after the first had written its sample, and "Read this text" read a stale sample."""
    read(page, TEXT)
    page.evaluate(HOLD_SAMPLES)
    page.get_by_test_id("rnn-n").fill("30")
    go = page.get_by_test_id("rnn-sample-go")
    go.click()
    wait_until(page, lambda: page.evaluate("window.held.length") == 1)
    assert go.is_disabled()  # one sample at a time
    page.get_by_test_id("rnn-input").fill("你好世界")
    page.get_by_test_id("rnn-text-error").wait_for(state="visible")
    go.evaluate("(b) => b.click()")  # a click the page would have taken
    page.wait_for_timeout(200)
    while page.evaluate("window.held.length"):
        page.evaluate("window.held.shift()()")
        page.wait_for_timeout(300)
    out = page.get_by_test_id("rnn-sample-out")
    wait_until(page, lambda: "…" not in out.inner_text())
    want = api(
        page,
        "/api/rnn/sample",
        {"prompt": TEXT, "n": 30, "temperature": 0.8, "seed": 42, "model": "small-lstm"},
    )
    assert out.inner_text() == want["sample"]
    assert not go.is_disabled() and not page.get_by_test_id("rnn-sample-use").is_disabled()


def test_the_readout_counts_characters_of_the_text_from_one(page):
    """The readout said "after “i” (character 5)" for the sixth character of "He said", and in
    Chinese "第 5 个字符", which reads as the fifth; past a skipped character the count was
    off by one more."""
    text = "He\tsaid it."  # the tab is not in the model's alphabet: skipped
    read(page, text)
    assert page.locator("#rnn-colored .skipped").count() == 1
    i = page.locator("#rnn-colored .ch").nth(4)  # H e s a i: the "i", sixth in the text
    assert i.inner_text() == "i"
    i.hover()
    head = page.get_by_test_id("readout-char")
    assert head.inner_text() == "after “i” (character 6 of 11)", head.inner_text()
    page.get_by_test_id("lang-toggle").click()
    page.wait_for_function("() => document.documentElement.lang === 'zh-CN'")
    i.hover()
    assert head.inner_text() == "读完“i”之后（第 6 个字符，共 11 个）", head.inner_text()
    page.get_by_test_id("lang-toggle").click()


def test_a_random_seed_is_said_so_the_sample_can_be_drawn_again(page):
    """With the seed box empty the server draws a random seed and sends it back; the page
    never showed it, so a sample a learner liked could not be drawn again."""
    read(page, TEXT)
    page.get_by_test_id("rnn-n").fill("40")
    page.get_by_test_id("rnn-seed").fill("")
    page.get_by_test_id("rnn-sample-go").click()
    out = page.get_by_test_id("rnn-sample-out")
    used = page.get_by_test_id("rnn-sample-seed")
    wait_until(page, lambda: used.is_visible() and "…" not in out.inner_text())
    words = used.inner_text()
    seed = int("".join(c for c in words.split("seed")[1] if c.isdigit()))
    assert "random" in words, words
    again = api(
        page,
        "/api/rnn/sample",
        {"prompt": TEXT, "n": 40, "temperature": 0.8, "seed": seed, "model": "small-lstm"},
    )
    assert again["sample"] == out.inner_text()
    page.get_by_test_id("lang-toggle").click()
    page.wait_for_function("() => document.documentElement.lang === 'zh-CN'")
    assert f"随机种子 {seed}" in used.inner_text().replace(",", ""), used.inner_text()
    page.get_by_test_id("lang-toggle").click()
    # a seed typed in the box is the learner's own: nothing to add
    page.get_by_test_id("rnn-seed").fill("42")
    page.get_by_test_id("rnn-sample-go").click()
    wait_until(page, lambda: used.is_hidden() and "…" not in out.inner_text())


@pytest.mark.parametrize("bad", ["你好世界", ""])
def test_a_text_the_model_cannot_read_does_not_keep_the_old_colours(page, bad):
    """After "你好世界" (no character in the alphabet) or an emptied box, the coloured text, the
    gates and "39 characters read" still showed the previous text, beside the refusal."""
    read(page, TEXT)
    page.get_by_test_id("rnn-input").fill(bad)
    error = page.get_by_test_id("rnn-text-error")
    error.wait_for(state="visible")
    page.wait_for_timeout(400)  # past the debounce: nothing left to arrive
    assert page.locator("#rnn-colored .ch").count() == 0
    assert page.locator("#rnn-gates svg").count() == 0
    assert "characters read" not in page.get_by_test_id("rnn-count").inner_text()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "rnn-unreadable-text.png"), full_page=True)
    read(page, TEXT)  # and back: the text is coloured again
    assert error.is_hidden() and page.locator("#rnn-gates svg").count() == 3


def test_a_long_epoch_reads_in_whole_seconds_on_the_why_page(page):
    """The page wrote a 3,220.4 s epoch as "3220 s" (the terminal as "3.22e+03 s"): seconds
    past a thousand are grouped like every other count on the page."""
    page.goto(page.server + "/why")
    page.wait_for_selector("body[data-ready='1']")
    race = page.locator("#exp-race")
    assert race.get_attribute("data-source") == "local"
    cell = race.locator("[data-testid=why-table]").first.locator("tbody tr").first
    assert "3,220 s" in cell.locator("td").all_inner_texts(), cell.inner_text()


def test_the_timeline_says_the_val_loss_it_kept(page):
    """timeline.json keeps a val loss at the iterations that were evaluated (timeline.md prints
    it); the slider's label gave only the train loss, so over-fitting could not be seen."""
    slider = page.get_by_test_id("rnn-timeline-slider")
    label = page.get_by_test_id("rnn-timeline-label")
    slider.wait_for()
    assert label.inner_text() == "iteration 1,000 · train loss 1.577 · val loss 1.652"
    slider.fill("0")
    assert label.inner_text() == "iteration 100 · train loss 2.891"  # none kept there
    page.get_by_test_id("lang-toggle").click()
    page.wait_for_function("() => document.documentElement.lang === 'zh-CN'")
    assert label.inner_text() == "第 1,000 次迭代 · 训练损失 1.577 · 验证损失 1.652"


def test_the_sampler_says_where_its_sample_starts(page):
    """The sample continues the text in the box (its last 200 characters); the page kept that
    line in both languages but never showed it."""
    panel = page.get_by_test_id("rnn-sample")
    assert "Starts after the text above (its last 200 characters)." in panel.inner_text()
    page.get_by_test_id("lang-toggle").click()
    page.wait_for_function("() => document.documentElement.lang === 'zh-CN'")
    assert "接在上方文本之后（取其最后 200 个字符）。" in panel.inner_text()


def test_the_colour_legend_keeps_its_end_labels_on_one_line_on_a_phone(page):
    """At 390 px the legend's left end, "tanh(c) = −1", broke after "=": the −1 sat on a line
    of its own under the label it belongs to."""
    page.set_viewport_size({"width": 390, "height": 900})
    read(page, TEXT)
    ends = page.locator("#rnn-legend > span:not(.ramp)")
    assert ends.first.inner_text() == "tanh(c) = −1"
    # the lines each label's text is laid out on
    lines = ends.evaluate_all(
        "els => els.map(e => { const r = document.createRange(); r.selectNodeContents(e);"
        " return new Set([...r.getClientRects()].map(b => Math.round(b.top))).size; })"
    )
    assert lines == [1, 1], lines
    ramp = page.locator("#rnn-legend .ramp").bounding_box()
    assert ramp["x"] + ramp["width"] <= 390 and ramp["width"] >= 60, ramp
    page.set_viewport_size({"width": 1440, "height": 1000})


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_re_run_commands_show_whole_on_a_phone(page, lang):
    """At 390 px a re-run command was cut to "lmscope lab serial-d" (the rest scrolled out
    of a box with no visible scrollbar) and the Chinese copy button broke into "复" over "制"."""
    page.set_viewport_size({"width": 390, "height": 900})
    page.goto(page.server + "/why")
    page.wait_for_selector("body[data-ready='1']")
    if lang == "zh":
        to_chinese(page)
    page.evaluate("document.querySelectorAll('details.why-rerun').forEach((d) => (d.open = true))")
    commands = page.locator("[data-testid=why-command]")
    assert commands.count() >= 8
    for row in commands.all():
        code = row.locator("code")
        hidden = code.evaluate("(c) => c.scrollWidth - c.clientWidth")
        box = code.bounding_box()
        assert hidden <= 1 and box["x"] + box["width"] <= 390, (code.inner_text(), hidden, box)
        # wrapped between its words only: "--threads 1 -" over "-clock" reads as another flag
        words = code.inner_text().split()
        assert code.locator("span").count() == len(words), code.inner_html()
        assert code.evaluate(
            "(c) => [...c.children].every((w) => { const r = document.createRange();"
            " r.selectNodeContents(w); return new Set([...r.getClientRects()]"
            ".map((x) => Math.round(x.top))).size === 1; })"
        ), code.inner_text()
        lines = row.get_by_role("button").evaluate(
            "(b) => { const r = document.createRange(); r.selectNodeContents(b);"
            " return new Set([...r.getClientRects()].map((x) => Math.round(x.top))).size; }"
        )
        assert lines == 1, (lang, row.get_by_role("button").inner_text())
    ARTIFACTS.mkdir(exist_ok=True)
    page.locator("#exp-serial-depth .why-rerun").screenshot(
        path=str(ARTIFACTS / f"why-commands-390-{lang}.png")
    )
    page.set_viewport_size({"width": 1440, "height": 1000})
