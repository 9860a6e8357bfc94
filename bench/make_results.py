"""Run the benchmarks and regenerate the per-store figure tables of bench/RESULTS.md
(``make bench``).

    python bench/make_results.py                       # short: 10k memories, embedded only
    python bench/make_results.py --neo4j bolt://127.0.0.1:7699 --full
    python bench/make_results.py --only bench_scope    # re-run one command, keep the other rows
    python bench/make_results.py --record run.log --command "python bench/bench_million.py" \
        --started "2026-12-02 15:11 UTC" --load 2.6      # a long run made by hand, from its output

Each benchmark prints its readable output and one ``RESULT`` line per figure (bench/results.py).
The figures are merged into bench/results.json by (store, figure), so a partial re-run replaces
only what it measured and every row keeps the command, date and load average that made it. The
tables sit between two markers in RESULTS.md; the notes around them are written by hand. Each
run's whole output is kept in bench/runs/ for the record.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import results

HERE = Path(__file__).resolve().parent


def commands(neo4j: str | None, full: bool) -> list[list[str]]:
    """The benchmark runs, short (CI smoke) or full (by hand, tens of minutes)."""
    sizes = "10000,100000" if full else "10000"
    runs = [["bench/bench_store.py", "--sizes", sizes]]
    runs.append(["bench/bench_scope.py", "--tenants", "100" if full else "10", "--size", "1000"])
    if full:
        runs.append(["bench/bench_scope.py", "--tenants", "10", "--size", "10000"])
    runs.append(["bench/bench_concurrency.py", "--size", "10000", "--seconds", "15"])
    if neo4j:
        runs = [[*r, "--neo4j", neo4j] for r in runs]
    # embedded only: what another process's commit costs the next read
    runs.append(["bench/bench_refresh.py", "--sizes", sizes])
    # embedded only: processes recalling at once, a recall's BLAS threads capped or not
    counts, rounds = ("1,2,4", "2") if full else ("1,2", "1")
    runs.append(["bench/bench_processes.py", "--size", "10000", "--processes", counts,
                 "--rounds", rounds])  # fmt: skip
    # embedded only: the ANN index against exact top-k (libraries not installed are skipped)
    runs.append(["bench/bench_ann.py", "--sizes", sizes, "--libs", "usearch-i8,hnswlib"])
    return runs


def slug(run: list[str]) -> str:
    """A file name for one command's output."""
    return re.sub(r"[^A-Za-z0-9]+", "-", " ".join(run).removeprefix("bench/")).strip("-")


def measure(run: list[str], load: float) -> tuple[str, list[results.Figure]]:
    """One command's output and the figures it printed."""
    shown = " ".join(["python", *run])
    print(f"$ {shown}", flush=True)
    date = f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC"
    done = subprocess.run(
        [sys.executable, *run], capture_output=True, text=True, check=False, cwd=HERE.parent
    )
    output = done.stdout + (done.stderr if done.returncode else "")
    print(output, flush=True)
    if done.returncode:
        raise SystemExit(f"{shown} failed with exit code {done.returncode}; RESULTS.md unchanged")
    return output, results.parse(output, shown, date, round(load, 1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--neo4j", default=None, help="bolt URI (its database is wiped)")
    parser.add_argument("--full", action="store_true", help="100k stores and 100 tenants")
    parser.add_argument("--only", default="", help="run only the commands containing this text")
    parser.add_argument("--out", default=str(HERE / "RESULTS.md"))
    parser.add_argument("--data", default=str(HERE / "results.json"))
    parser.add_argument("--runs", default=str(HERE / "runs"), help="folder for whole outputs")
    parser.add_argument("--record", default=None, help="merge the figures of this saved output")
    parser.add_argument("--command", default="", help="with --record: the command that made it")
    parser.add_argument("--started", default="", help="with --record: when it started (UTC)")
    parser.add_argument("--load", type=float, default=None, help="with --record: load then")
    args = parser.parse_args()
    if args.record:
        if not (args.command and args.started):
            raise SystemExit("--record needs --command and --started")
        output = Path(args.record).read_text(encoding="utf-8")
        found = results.parse(output, args.command, args.started, args.load)
        if not found:
            raise SystemExit(f"{args.record} holds no RESULT line")
        write(Path(args.data), Path(args.out), found)
        return
    runs = [r for r in commands(args.neo4j, args.full) if args.only in " ".join(r)]
    if not runs:
        raise SystemExit(f"no benchmark command contains {args.only!r}")
    data, out, kept = Path(args.data), Path(args.out), Path(args.runs)
    measured: list[results.Figure] = []
    outputs = {}
    for run in runs:
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        outputs[slug(run)], found = measure(run, load)
        measured += found
    # written only once every command succeeded: a failed run leaves the record as it was
    kept.mkdir(exist_ok=True)
    for name, output in outputs.items():
        (kept / f"{name}.txt").write_text(output, encoding="utf-8")
    write(data, out, measured)


def write(data: Path, out: Path, measured: list[results.Figure]) -> None:
    """Merge ``measured`` into the JSON record and regenerate the tables of ``out``."""
    figures = results.load_json(data.read_text(encoding="utf-8")) if data.exists() else []
    figures = results.merge(figures, measured)
    data.write_text(results.dump_json(figures), encoding="utf-8")
    document = out.read_text(encoding="utf-8") if out.exists() else "# Benchmarks\n"
    out.write_text(results.splice(document, results.render(figures)), encoding="utf-8")
    print(f"{len(measured)} figures measured; {len(figures)} in {out}", flush=True)


if __name__ == "__main__":
    main()
