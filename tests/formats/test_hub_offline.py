"""Offline, a hub model fails in one line and fast (issue 14, bug 7: five retry warnings and
~23 s before the error). The hub is made unreachable by refusing its connection, and slow by a
connection that never answers; neither may take the hub client's retries."""

from __future__ import annotations

import time

import pytest

from lmscope.errors import ModelNotFoundError
from lmscope.formats import hub


@pytest.fixture
def no_hub(monkeypatch, tmp_path):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)  # the tests' conftest sets it
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf" / "hub"))
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hf" / "hub"))  # read at import


@pytest.mark.slow
@pytest.mark.parametrize("network", ["refused", "silent"])
def test_an_unreachable_hub_is_one_line_in_under_two_seconds(no_hub, monkeypatch, network):
    def refused(*args, **kwargs):
        raise ConnectionRefusedError("no network")

    def silent(*args, timeout=None, **kwargs):
        time.sleep(30)  # a name lookup or connection that never answers
        raise TimeoutError("timed out")

    monkeypatch.setattr(
        hub.socket, "create_connection", refused if network == "refused" else silent
    )
    started = time.monotonic()
    with pytest.raises(ModelNotFoundError) as err:
        hub.download_from_hub("gpt2")
    took = time.monotonic() - started
    assert took < 2.0, took
    message = str(err.value)
    assert "\n" not in message and "not reachable" in message
    # raised for --model, --compare and the Python API alike: no one option is named
    assert "the path of a local folder" in message and "--model" not in message
