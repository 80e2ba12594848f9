"""The cache of a server's token counts: bounded by bytes whatever the texts weigh, correct and
free of races when answer workers and page reruns count at once."""

from __future__ import annotations

import sys
import threading

from assistant.models.model_tokens import CachedCounter


class LengthCounter:
    """Stands in for the server's tokenizer (what is tested is the cache around it)."""

    name, exact = "length", True

    def __init__(self):
        self.calls = 0

    def count(self, text: str) -> int:
        self.calls += 1
        return len(text)

    def describe(self) -> str:
        return "length"


def test_counts_are_remembered_and_big_texts_are_not_kept():
    inner = LengthCounter()
    cached = CachedCounter(inner, max_bytes=10_000)
    big = "x" * 8_000_000
    assert cached.count(big) == 8_000_000 and cached.count(big) == 8_000_000
    assert inner.calls == 1
    assert cached.cached_bytes <= 10_000  # an 8 MB text costs a digest, not its size
    assert cached.count("a\udcffb") == 3  # a lone surrogate is counted, not a crash


def test_the_cache_stays_within_its_bytes():
    cached = CachedCounter(LengthCounter(), max_bytes=CachedCounter.ENTRY_BYTES * 50)
    for i in range(5_000):
        assert cached.count(f"text {i}") == len(f"text {i}")
        assert cached.cached_bytes <= CachedCounter.ENTRY_BYTES * 50
    assert cached.count("text 4999") == 9


def test_many_threads_counting_at_once_get_right_counts_and_no_error():
    cached = CachedCounter(LengthCounter(), max_bytes=CachedCounter.ENTRY_BYTES * 8)  # evicting all the time
    errors: list[BaseException] = []
    start = threading.Barrier(8)

    def work(seed: int) -> None:
        start.wait()
        try:
            for i in range(20_000):  # mostly new texts (each evicts), some shared by all threads
                text = "y" * (i % 40) if i % 5 == 0 else f"{seed}-{i}"
                if cached.count(text) != len(text):
                    raise AssertionError(f"wrong count for {len(text)} characters")
        except BaseException as exc:  # noqa: BLE001 - collected and reported by the test
            errors.append(exc)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible: races show up
    try:
        threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert errors == []
    assert cached.cached_bytes <= CachedCounter.ENTRY_BYTES * 8
