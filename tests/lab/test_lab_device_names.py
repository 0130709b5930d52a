"""Lab texts that name the device as their own table does: the Chinese PyTorch-sweep verdict
read "在 cpu 上" over a table whose device column says "CPU", and the memory-wall explanation
"设备 cpu". The shipped results must say what the code now writes."""

from __future__ import annotations

import json
from importlib.resources import files

from lmscope.lab import texts
from lmscope.lab.results import shown


def _shipped(experiment: str) -> dict:
    path = files("lmscope") / "assets" / "lab" / experiment / "result.json"
    return json.loads(path.read_text(encoding="utf-8"))


def _sections(doc: dict) -> dict:
    return {s["key"]: s for s in doc["sections"]}


def test_the_torch_sweep_verdict_names_the_device_as_its_table_does():
    doc = _shipped("serial-depth")
    torch = _sections(doc)["torch"]
    params = doc["params"]
    said = texts.torch_sweep(
        torch["rows"], torch["data"]["curve_shapes"], params["a"], params["clock"]
    )["verdict"]
    device = params["devices"][0]
    assert shown(said, "en").startswith(f"On {shown(texts.device_name(device), 'en')}:"), shown(
        said, "en"
    )[:40]
    assert shown(said, "zh").startswith(f"在 {shown(texts.device_name(device), 'zh')} 上："), shown(
        said, "zh"
    )[:40]
    assert "在 cpu 上" not in shown(said, "zh")
    # the shipped result says what the code now writes
    assert torch["verdict"] == said


def test_the_memory_wall_explanation_names_the_device_as_tables_do():
    doc = _shipped("memory-wall")
    attention = _sections(doc)["attention"]
    limits = _sections(doc)["limits"]["rows"]
    explain = texts.attention(attention["rows"], doc["params"], limits)["explain"]
    assert "设备 CPU" in shown(explain, "zh") and "设备 cpu" not in shown(explain, "zh"), shown(
        explain, "zh"
    )[:80]
    assert attention["explain"] == explain
