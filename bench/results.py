#!/usr/bin/env python3
"""Writes a run's raw JSON lines as a results file, the shape bench/chart.py draws.

    python3 bench/results.py RESULTS.jsonl --command CMD --machine TEXT [--commit SHA]
        [--method TEXT] [--flush JSON] [--out FILE]
    python3 bench/results.py merge OUT.json RUN.json...     # several runs in one file (the guard)

bench/compare.sh calls it after every run (its output: run.json beside results.jsonl, so the
guard's runs get one too). To publish a run as the current figures, copy its run.json to
bench/results/<date>.json (or merge its run into that file), then run python3 bench/chart.py.

Each line of RESULTS.jsonl is one a2a-bench outcome (label, scenario, concurrency, rps,
server_cpu_us, p50_ms, p99_ms, ttfe_p50_ms, server_instructions, ...); the rows are kept as
they are, repetitions included. Python 3 standard library only.
"""

import argparse
import datetime
import json
import sys

PEER = "a2a-server-lf-0.5.3"


def merge(out, files):
    runs = []
    for name in files:
        with open(name) as f:
            runs.extend(json.load(f)["runs"])
    with open(out, "w") as f:
        f.write(json.dumps({"schema": "a2a-bench-results/1", "runs": runs}, indent=1,
                           ensure_ascii=False) + "\n")
    return 0


def main(argv):
    if argv[:1] == ["merge"]:
        if len(argv) < 3:
            print("usage: bench/results.py merge OUT.json RUN.json...", file=sys.stderr)
            return 2
        return merge(argv[1], argv[2:])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results")
    parser.add_argument("--command", required=True)
    parser.add_argument("--machine", required=True)
    parser.add_argument("--commit")
    parser.add_argument("--method", default="")
    parser.add_argument("--flush", help="a2a-bench flush's JSON line (the disk's fdatasync)")
    parser.add_argument("--out")
    args = parser.parse_args(argv)

    rows = []
    with open(args.results) as lines:
        for number, line in enumerate(lines, 1):
            line = line.strip()
            if not line:
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as error:
                print(f"{args.results}:{number}: not JSON: {error}", file=sys.stderr)
                return 1
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    run = {
        "id": now[:16] + "Z",
        "date": now,
        "commit": args.commit,
        "command": args.command,
        "machine": args.machine,
        "method": args.method,
        "source": args.results,
        "peer": PEER,
        "floor": "bare-axum",
        "rows": rows,
    }
    if args.flush:
        flush = json.loads(args.flush)
        for field in ("fdatasync_p50_ms", "fdatasync_p99_ms"):
            if field in flush:
                run[field] = flush[field]
    doc = {"schema": "a2a-bench-results/1", "runs": [run]}
    text = json.dumps(doc, indent=1, ensure_ascii=False) + "\n"
    if args.out:
        with open(args.out, "w") as out:
            out.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
