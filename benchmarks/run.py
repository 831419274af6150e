"""Run focal's benchmarks side by side with the peers a user would pick instead.

    python benchmarks/run.py            # every benchmark at full size
    python benchmarks/run.py core       # only benchmarks/bench_core.py
    python benchmarks/run.py --quick    # small sizes, a smoke run

Each ``benchmarks/bench_<name>.py`` defines ``run(quick: bool)``, which prints its timings and the
ratios set as targets. Peers that are not installed are skipped with a note.
"""

from __future__ import annotations

import argparse
import importlib
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))


def main(argv=None) -> int:
    available = sorted(p.stem[len("bench_") :] for p in HERE.glob("bench_*.py"))
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "names",
        nargs="*",
        metavar="NAME",
        help=f"benchmarks to run (default: all of {', '.join(available)})",
    )
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke test)")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.names) - set(available))
    if unknown:
        parser.error(
            f"unknown benchmark(s) {', '.join(unknown)}; choose from {', '.join(available)}"
        )
    for name in args.names or available:
        module = importlib.import_module(f"bench_{name}")
        print(f"\n######## {name}{' (quick)' if args.quick else ''}")
        module.run(quick=args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
