"""focal.dask on a local cluster against single-process focal: wall time, memory, throughput.

    python benchmarks/run.py dask            # 1e6, 1e7, 1e8 trials (2 workers), 1e8 on 1 worker
    python benchmarks/run.py dask --quick    # 1e6 only
    python benchmarks/bench_dask.py 1e8 --workers 1 --no-compare   # one size, other workers

The trials are generated inside the workers, chunk by chunk (seeded per chunk, so the
single-process run makes the same trials): 10 % targets, scores ``N(0,1) + 2 y`` rounded to 4
decimals (heavy ties, as in text score files). One ``focal.dask.summarize`` pass gives EER,
minDCF, minCllr, Cllr and actual DCF; the single-process reference runs
``focal.metrics.BinaryScores`` on the same trials in a fresh process. Peak memory is each
process's peak resident set (``ru_maxrss``), interpreter and libraries included.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time

import numpy as np

CHUNK = 2_000_000
P_TARGET = 0.01


def _chunk(i, size):
    rng = np.random.default_rng([20240601, i])
    y = rng.random(size) < 0.1
    s = rng.standard_normal(size)
    s += 2.0 * y
    return np.round(s, 4), y


def _sizes(n):
    full, rest = divmod(int(n), CHUNK)
    return [CHUNK] * full + ([rest] if rest else [])


def _measures(obj):
    from focal.metrics import cllr, dcf, eer, min_cllr, min_dcf

    return {
        "eer": eer(obj),
        "min_dcf": min_dcf(obj, p_target=P_TARGET),
        "min_cllr": min_cllr(obj),
        "cllr": cllr(obj),
        "dcf": dcf(obj, p_target=P_TARGET),
    }


def _peak_rss():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def single_process(n):
    """Same trials in one process: generation, then focal.metrics (one sort, one PAV)."""
    from focal.metrics import BinaryScores

    t0 = time.perf_counter()
    parts = [_chunk(i, m) for i, m in enumerate(_sizes(n))]
    s = np.concatenate([p[0] for p in parts])
    y = np.concatenate([p[1] for p in parts])
    del parts
    t1 = time.perf_counter()
    scores = BinaryScores(s[y], s[~y])
    del s, y
    values = _measures(scores)
    t2 = time.perf_counter()
    return {
        "generate": t1 - t0,
        "evaluate": t2 - t1,
        "peak": _peak_rss(),
        "values": values,
        "blocks": int(scores.hull.pav.n_tar.size),
    }


def _single_in_subprocess(n):
    out = subprocess.run(
        [sys.executable, __file__, "--single", str(int(n))],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def on_cluster(n, n_workers):
    import dask.array as da
    from dask import delayed
    from distributed import Client, LocalCluster

    import focal.dask as fd

    with (
        LocalCluster(
            n_workers=n_workers,
            threads_per_worker=1,
            processes=True,
            memory_limit="2GiB",
            host="127.0.0.1",
            dashboard_address="127.0.0.1:0",
            silence_logs=50,
        ) as cluster,
        Client(cluster) as client,
    ):
        chunks = [delayed(_chunk, pure=True)(i, m) for i, m in enumerate(_sizes(n))]
        s = da.concatenate([da.from_delayed(c[0], (m,), float) for c, m in zip(chunks, _sizes(n))])
        y = da.concatenate([da.from_delayed(c[1], (m,), bool) for c, m in zip(chunks, _sizes(n))])
        t0 = time.perf_counter()
        y.sum().compute()  # generation alone (scores and labels together)
        t1 = time.perf_counter()
        summary = fd.summarize(
            s, y, p_targets=[0.5], thresholds=[-np.log(P_TARGET / (1 - P_TARGET))]
        )
        values = _measures(summary)
        t2 = time.perf_counter()
        peaks = sorted(client.run(_peak_rss).values())
    return {
        "generate": t1 - t0,
        "total": t2 - t1,
        "peaks": peaks,
        "values": values,
        "blocks": summary.summary.n_blocks,
    }


def _fusion_chunk(i, size):
    rng = np.random.default_rng([20240602, i])
    y = rng.random(size) < 0.1
    X = rng.standard_normal((size, 3)) * [1.0, 30.0, 0.01] + np.outer(y, [1.5, 40.0, 0.02])
    return X, y


def _fusion_single(n):
    from focal import LogisticFusion

    parts = [_fusion_chunk(i, m) for i, m in enumerate(_sizes(n))]
    X = np.concatenate([p[0] for p in parts])
    y = np.concatenate([p[1] for p in parts])
    del parts
    t0 = time.perf_counter()
    fuser = LogisticFusion(p_target=P_TARGET).fit(X, y)
    return {
        "fit": time.perf_counter() - t0,
        "peak": _peak_rss(),
        "coef": fuser.coef_.tolist(),
        "intercept": fuser.intercept_,
        "passes": fuser.n_passes_,
    }


def fusion_report(n, n_workers=2):
    """LogisticFusion of 3 systems: focal.dask.fit against the in-memory fit."""
    import dask.array as da
    from dask import delayed
    from distributed import Client, LocalCluster

    import focal.dask as fd
    from focal import LogisticFusion

    with (
        LocalCluster(
            n_workers=n_workers,
            threads_per_worker=1,
            processes=True,
            memory_limit="2GiB",
            host="127.0.0.1",
            dashboard_address="127.0.0.1:0",
            silence_logs=50,
        ) as cluster,
        Client(cluster) as client,
    ):
        chunks = [delayed(_fusion_chunk, pure=True)(i, m) for i, m in enumerate(_sizes(n))]
        X = da.concatenate(
            [da.from_delayed(c[0], (m, 3), float) for c, m in zip(chunks, _sizes(n))]
        )
        y = da.concatenate([da.from_delayed(c[1], (m,), bool) for c, m in zip(chunks, _sizes(n))])
        X, y = client.persist([X, y])
        y.sum().compute()  # generated and held by the workers
        t0 = time.perf_counter()
        fuser = fd.fit(LogisticFusion(p_target=P_TARGET), X, y)
        elapsed = time.perf_counter() - t0
        peaks = sorted(client.run(_peak_rss).values())
    out = subprocess.run(
        [sys.executable, __file__, "--fusion-single", str(int(n))],
        check=True,
        capture_output=True,
        text=True,
    )
    ref = json.loads(out.stdout.strip().splitlines()[-1])
    rel = np.max(np.abs(fuser.coef_ / np.array(ref["coef"]) - 1))
    print(
        f"  {n:.0e} trials x 3 systems, {n_workers} workers: fit {elapsed:6.2f} s, "
        f"{fuser.n_passes_} passes, peak per worker {', '.join(_gib(p) for p in peaks)}; "
        f"in memory {ref['fit']:.2f} s, {ref['passes']} passes, peak {_gib(ref['peak'])}; "
        f"largest coefficient difference {rel:.1e} (relative)",
        flush=True,
    )


def _gib(b):
    return f"{b / 2**30:.2f} GiB"


def report(n, n_workers=2, compare=True):
    d = on_cluster(n, n_workers)
    line = (
        f"  {n:.0e} trials, {n_workers} worker(s): generate+evaluate {d['total']:7.2f} s "
        f"(generation alone {d['generate']:.2f} s), {n / d['total'] / 1e6:6.2f} M trials/s, "
        f"peak per worker {', '.join(_gib(p) for p in d['peaks'])}, {d['blocks']} PAV blocks"
    )
    print(line, flush=True)
    if not compare:
        return d, None
    ref = _single_in_subprocess(n)
    same = all(d["values"][k] == ref["values"][k] for k in ("eer", "min_dcf", "min_cllr", "dcf"))
    cllr_rel = abs(d["values"]["cllr"] / ref["values"]["cllr"] - 1)
    tot = ref["generate"] + ref["evaluate"]
    print(
        f"  {n:.0e} trials, single process : generate+evaluate {tot:7.2f} s "
        f"(evaluate {ref['evaluate']:.2f} s), {n / tot / 1e6:6.2f} M trials/s, peak "
        f"{_gib(ref['peak'])}; dask/single time {d['total'] / tot:.2f}x, largest process "
        f"{max(d['peaks']) / ref['peak']:.2f}x",
        flush=True,
    )
    print(
        f"      EER, minDCF, minCllr, DCF identical: {same and d['blocks'] == ref['blocks']}; "
        f"Cllr relative difference {cllr_rel:.1e}; EER {d['values']['eer']:.6f}, "
        f"minDCF({P_TARGET}) {d['values']['min_dcf']:.6f}",
        flush=True,
    )
    return d, ref


def run(quick: bool = False):
    if not _have_dask():
        print("  (skipped: focal.dask needs pip install 'dask[distributed]')")
        return
    print(
        f"\n== focal.dask on a LocalCluster (memory_limit 2 GiB per worker, one thread each) "
        f"vs single-process focal; {os.cpu_count()} cores, load average "
        f"{os.getloadavg()[0]:.1f} at start"
    )
    sizes = [10**6] if quick else [10**6, 10**7, 10**8]
    for n in sizes:
        report(n, 2)
    if not quick:
        print("\n== workers (same 1e8 trials)")
        report(10**8, 1, compare=False)
    print("\n== fusion (focal.dask.fit vs LogisticFusion.fit, data held by the workers)")
    fusion_report(10**6 if quick else 10**7)


def _have_dask():
    try:
        import distributed  # noqa: F401
    except ImportError:
        return False
    return True


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if sys.argv[1:2] == ["--single"]:
        print(json.dumps(single_process(int(sys.argv[2]))))
    elif sys.argv[1:2] == ["--fusion-single"]:
        print(json.dumps(_fusion_single(int(sys.argv[2]))))
    else:
        import argparse

        parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
        parser.add_argument("sizes", nargs="*", type=float, default=[1e6])
        parser.add_argument("--workers", type=int, default=2)
        parser.add_argument("--no-compare", action="store_true", help="skip the single-process run")
        args = parser.parse_args()
        for size in args.sizes:
            report(int(size), args.workers, compare=not args.no_compare and size <= 1e8)
