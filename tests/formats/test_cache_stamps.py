"""The weight cache's checksums are read in full once, then kept with the file's stamp
(``weight_cache.file_stamp``): a cached start reads neither the GGUF nor the cached tensors
whole, and a file that changed (its size, its times, or sampled blocks of it) is read again,
so a changed GGUF never reuses the entry made from the old one."""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import pytest

from helpers_gguf import TINY, random_weights, write_model
from lmscope.formats import weight_cache
from lmscope.formats.gguf import load_gguf


@pytest.fixture
def summed(monkeypatch) -> list[str]:
    """The names of the files whose sha256 is read in full."""
    names: list[str] = []
    real = weight_cache.sha256_file

    def counting(path):
        names.append(Path(path).name)
        return real(path)

    monkeypatch.setattr(weight_cache, "sha256_file", counting)
    return names


@pytest.fixture
def cached(tmp_path, summed):
    """A tiny GGUF loaded once (its entry written): (path, cache folder)."""
    path, cache = tmp_path / "tiny.gguf", tmp_path / "cache"
    write_model(path, random_weights(TINY), TINY)
    first = load_gguf(path, cache_dir=cache)
    assert not first.from_cache and summed == ["tiny.gguf", weight_cache.TENSORS_FILE]
    summed.clear()
    return path, cache


def rewrite(path: Path, seed: int, *, keep_mtime: bool) -> dict:
    """Write other weights of the same shapes (the same size) over ``path``; with
    ``keep_mtime``, its modification time set back as ``cp -p`` or ``touch -r`` would."""
    before = path.stat()
    weights = random_weights(TINY, seed=seed)
    write_model(path, weights, TINY)
    assert path.stat().st_size == before.st_size
    if keep_mtime:
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    return weights


def assert_holds(model, weights: dict) -> None:
    for name, expected in weights.items():
        np.testing.assert_array_equal(model.tensors[name].numpy(), expected)


def test_a_cached_start_reads_no_file_whole(cached, summed):
    path, cache = cached
    for _ in range(2):
        model = load_gguf(path, cache_dir=cache)
        assert model.from_cache and summed == []
        assert model.sha256 == weight_cache.sha256_file(path)
        summed.clear()


@pytest.mark.parametrize("keep_mtime", [False, True])
def test_a_changed_file_of_the_same_size_is_read_again(cached, summed, keep_mtime):
    path, cache = cached
    weights = rewrite(path, seed=5, keep_mtime=keep_mtime)
    model = load_gguf(path, cache_dir=cache)
    assert not model.from_cache and summed[0] == "tiny.gguf"
    assert_holds(model, weights)
    assert load_gguf(path, cache_dir=cache).from_cache


def test_a_changed_size_or_another_file_at_the_path_is_read_again(cached, summed):
    path, cache = cached
    bigger = dict(TINY, vocab=48)
    weights = random_weights(bigger, seed=3)
    write_model(path.with_name("new.gguf"), weights, bigger)
    os.replace(path.with_name("new.gguf"), path)  # another inode, another size
    model = load_gguf(path, cache_dir=cache)
    assert not model.from_cache and summed[0] == "tiny.gguf"
    assert_holds(model, weights)


def test_times_that_do_not_move_leave_the_sampled_blocks(cached, summed, monkeypatch):
    """On a file system whose times did not move (an edit within one coarse clock tick), the
    sampled blocks still catch an edit in them (a small file is sampled whole); an edit that
    misses every block of a large file is the limit, which $LMSCOPE_VERIFY_CACHE=1 lifts."""
    path, cache = cached
    monkeypatch.setattr(weight_cache, "_stat_stamp", lambda p: [0, 0, os.stat(p).st_size, 0, 0])
    load_gguf(path, cache_dir=cache)  # keeps the stamp as this file system gives it
    summed.clear()
    weights = rewrite(path, seed=7, keep_mtime=True)
    model = load_gguf(path, cache_dir=cache)
    assert not model.from_cache and summed[0] == "tiny.gguf"
    assert_holds(model, weights)

    big, size = path.with_name("big.bin"), 8 << 20
    data = bytearray(os.urandom(size))
    big.write_bytes(bytes(data))
    kept = cache / "big.json"
    first = weight_cache._checksum(big, kept, verify=False)
    # 64 blocks of 64 KiB at size * i / 65: between the 9th and the 10th, past the first MiB
    gap = size * 9 // 65 + (64 << 10)
    assert 1 << 20 < gap < size * 10 // 65
    data[gap + 100] ^= 1
    big.write_bytes(bytes(data))
    assert weight_cache._checksum(big, kept, verify=False) == first  # the limit
    monkeypatch.setenv(weight_cache.VERIFY_ENV, "1")
    now = weight_cache.sha256_file(big)
    assert now != first and weight_cache._checksum(big, kept, verify=False) == now
    monkeypatch.delenv(weight_cache.VERIFY_ENV)
    data[size * 32 // 65 + 10] ^= 1  # inside the 32nd block
    big.write_bytes(bytes(data))
    assert weight_cache._checksum(big, kept, verify=False) == weight_cache.sha256_file(big)


def test_an_edit_between_the_samples_moves_the_change_time(tmp_path):
    """An edit the sampled blocks miss, with the modification time set back: the change time
    (which no program sets back) still tells, after one clock tick (coarse file systems)."""
    big, size = tmp_path / "big.bin", 8 << 20
    data = bytearray(os.urandom(size))
    big.write_bytes(bytes(data))
    kept = tmp_path / "big.json"
    first = weight_cache._checksum(big, kept, verify=False)
    before = big.stat()
    time.sleep(0.05)
    data[size * 9 // 65 + (64 << 10) + 100] ^= 1  # between two sampled blocks
    big.write_bytes(bytes(data))
    os.utime(big, ns=(before.st_atime_ns, before.st_mtime_ns))
    now = weight_cache._checksum(big, kept, verify=False)
    assert now != first and now == weight_cache.sha256_file(big)


def test_verify_reads_both_files_whole(cached, summed, monkeypatch):
    path, cache = cached
    assert load_gguf(path, cache_dir=cache, verify=True).from_cache
    assert summed == ["tiny.gguf", weight_cache.TENSORS_FILE]
    summed.clear()
    monkeypatch.setenv(weight_cache.VERIFY_ENV, "1")
    assert load_gguf(path, cache_dir=cache).from_cache
    assert summed == ["tiny.gguf", weight_cache.TENSORS_FILE]


def test_damaged_tensors_with_unmoved_times_are_caught_by_the_samples(cached, summed, monkeypatch):
    """The entry's own tensors: a flipped byte in a sampled block, times as they were."""
    path, cache = cached
    monkeypatch.setattr(weight_cache, "_stat_stamp", lambda p: [0, 0, os.stat(p).st_size, 0, 0])
    entry = cache / "gguf" / weight_cache.sha256_file(path)
    tensors = entry / weight_cache.TENSORS_FILE
    weight_cache._write_json(  # the stamp as this file system would have kept it
        entry / weight_cache.STAMP_FILE,
        {"stamp": weight_cache.file_stamp(tensors), "sha256": weight_cache.sha256_file(tensors)},
    )
    assert load_gguf(path, cache_dir=cache).from_cache
    data = bytearray(tensors.read_bytes())
    data[-5] ^= 0x40
    tensors.write_bytes(bytes(data))
    summed.clear()
    assert not load_gguf(path, cache_dir=cache).from_cache
    assert weight_cache.TENSORS_FILE in summed
