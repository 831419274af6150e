"""Read-ahead: the items of a reader made in worker threads come in order, errors come after the
items made before them, and no arrangement of files and pool sizes can wait forever.
"""

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from focal.io._prefetch import prefetch


def _counting(n, made):
    for i in range(n):
        made.append(i)
        yield i


@pytest.mark.parametrize("workers", [None, 1, 2])
@pytest.mark.parametrize("depth", [1, 4])
def test_items_in_order(workers, depth):
    pool = ThreadPoolExecutor(workers) if workers else None
    try:
        assert list(prefetch(iter(range(100)), pool, depth)) == list(range(100))
    finally:
        if pool:
            pool.shutdown()


def test_at_most_depth_items_made_ahead():
    made = []
    with ThreadPoolExecutor(2) as pool:
        ahead = prefetch(_counting(50, made), pool, depth=3)
        assert next(ahead) == 0
        deadline = time.monotonic() + 10
        while len(made) < 1 + 3 and time.monotonic() < deadline:  # the tasks fill the read-ahead
            time.sleep(0.01)
        time.sleep(0.1)  # and stop there
        assert len(made) == 1 + 3  # the one served, three waiting
        assert list(ahead) == list(range(1, 50))


def test_error_after_the_items_before_it():
    def failing():
        yield 1
        yield 2
        raise ValueError("line 3: bad")

    with ThreadPoolExecutor(1) as pool:
        got = []
        with pytest.raises(ValueError, match="line 3: bad"):
            for item in prefetch(failing(), pool):
                got.append(item)
        assert got == [1, 2]


def test_many_readers_share_one_worker():
    """Three files read ahead in a pool of one thread, consumed round robin (as the streaming
    reader does): every task is one short step, so none waits for another.
    """
    with ThreadPoolExecutor(1) as pool:
        readers = [prefetch(iter(range(k, 300, 3)), pool, depth=2) for k in range(3)]
        rows = [[next(r) for r in readers] for _ in range(100)]
    assert [x for row in rows for x in row] == list(range(300))


def test_closing_early_stops_reading():
    made = []
    with ThreadPoolExecutor(1) as pool:
        ahead = prefetch(_counting(1000, made), pool, depth=2)
        next(ahead)
        ahead.close()
    assert len(made) <= 4  # the served one, the read-ahead, at most one running task


def test_a_shut_down_pool_is_an_error_not_a_hang():
    pool = ThreadPoolExecutor(1)
    gate = threading.Event()

    def slow():
        yield 1
        gate.wait(5)
        yield 2

    ahead = prefetch(slow(), pool, depth=1)
    assert next(ahead) == 1
    pool.shutdown(wait=False, cancel_futures=True)
    gate.set()
    with pytest.raises(RuntimeError):
        list(ahead)
