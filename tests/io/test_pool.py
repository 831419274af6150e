"""The file engine's thread pool (focal._text.pool): results in order, errors in order, a bounded
number of items ahead, no pool with threads=0.
"""

import os
import threading

import pytest

from focal._text.pool import in_order, worker_pool, worker_threads
from focal.exceptions import InvalidParameterError


@pytest.mark.parametrize("threads", [0, 1, 2, 5])
@pytest.mark.parametrize("depth", [1, 2, 4])
def test_results_in_order(threads, depth):
    with worker_pool(threads) as executor:
        got = list(in_order(lambda x: x * x, range(50), executor, depth))
    assert got == [x * x for x in range(50)]


def test_threads_zero_means_no_pool_and_none_one_per_core():
    with worker_pool(0) as executor:
        assert executor is None
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert worker_threads(None) == cores >= 1
    for bad in (-1, 1.5, True, "2"):
        with pytest.raises(InvalidParameterError, match="threads must be a non-negative"):
            worker_threads(bad)


def test_at_most_depth_items_made_ahead():
    drawn = []

    def items():
        for i in range(100):
            drawn.append(i)
            yield i

    with worker_pool(2) as executor:
        results = in_order(lambda x: x, items(), executor, depth=3)
        assert next(results) == 0
        assert len(drawn) == 3  # the first result is handed out once three are under way
        assert list(results) == list(range(1, 100))


def _failing_at(k, exc):
    def fn(x):
        if x == k:
            raise exc
        return x

    return fn


def test_an_error_comes_after_the_results_before_it():
    with worker_pool(2) as executor:
        got = []
        with pytest.raises(ValueError, match="item 7"):
            for x in in_order(_failing_at(7, ValueError("item 7")), range(20), executor):
                got.append(x)
        assert got == list(range(7))

        def items():  # the reader fails after item 4: items 0..4 come first
            yield from range(5)
            raise ValueError("the reader")

        got = []
        with pytest.raises(ValueError, match="the reader"):
            for x in in_order(lambda x: x, items(), executor, depth=8):
                got.append(x)
        assert got == list(range(5))


def test_an_earlier_items_error_wins_over_a_later_readers_error():
    def items():
        yield from range(3)
        raise OSError("read error after item 2")

    with worker_pool(2) as executor:
        with pytest.raises(ValueError, match="item 1"):
            list(in_order(_failing_at(1, ValueError("item 1")), items(), executor, depth=8))


def test_stopping_early_cancels_what_was_not_started():
    started = []
    gate = threading.Event()

    def slow(x):
        started.append(x)
        gate.wait(5)
        return x

    with worker_pool(1) as executor:
        results = in_order(slow, range(10), executor, depth=4)
        gate.set()
        assert next(results) == 0
        results.close()
    assert len(started) <= 5  # the rest were cancelled
