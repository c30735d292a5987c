#!/usr/bin/env python3
"""Draws the performance charts of docs/ from a committed results file.

    python3 bench/chart.py                  # the newest bench/results/*.json -> docs/perf-*.svg
    python3 bench/chart.py FILE.json        # another results file
    python3 bench/chart.py --check          # exit 1 if the committed SVGs are not what FILE gives
    python3 bench/chart.py FILE.json --out-dir DIR   # draw elsewhere than docs/

A results file (bench/results/<date>.json, or what bench/results.py writes after a run of
compare.sh) holds runs; each run holds rows with a2a-bench's field names (label, scenario,
concurrency, rps, server_cpu_us, ttfe_p50_ms). Rows repeated in one run (compare.sh --repeat)
are reduced to their median. Every ratio is taken within one run, never across runs, since
machines slow the servers by different factors.

Charts:
  docs/perf-throughput.svg  throughput / the official SDK's, per scenario, one panel per run
  docs/perf-cpu.svg         server CPU microseconds per request, one panel per run
  docs/perf-latency.svg     time to the first SSE event at one client, and the disk's fdatasync

Python 3 standard library only; the SVG is written by hand and is byte-for-byte reproducible.
"""

import json
import math
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
OUT = ROOT / "docs"

# Display name and colour of each server label; unknown labels get a fallback colour.
SERVERS = [
    ("bare-axum", "floor: bare axum handler", "#9e9e9e"),
    ("ours-memory", "ours, in memory", "#2b6cb0"),
    ("ours-embedded", "ours, in memory, embedded in axum::serve", "#63b3ed"),
    ("ours-memory-before", "ours, in memory, an older build (named in the run's title)", "#805ad5"),
    ("ours-sled", "ours, sled (durable)", "#1a365d"),
    ("ours-fjall", "ours, fjall (durable, opt-in)", "#b83280"),
    ("a2a-server-lf-0.5.3", "official Rust SDK 0.5.3, in memory", "#dd6b20"),
    ("turul-a2a-0.2.6-memory", "turul-a2a 0.2.6, in memory", "#38a169"),
    ("turul-a2a-0.2.6-sqlite", "turul-a2a 0.2.6, SQLite", "#1c4532"),
    ("a2a-protocol-server-0.15.0-memory", "a2a-protocol-server 0.15.0, in memory", "#9f7aea"),
    ("a2a-protocol-server-0.15.0-sqlite", "a2a-protocol-server 0.15.0, SQLite", "#44337a"),
]
FALLBACK = ["#e53e3e", "#d69e2e", "#319795", "#b83280", "#718096"]
SCENARIOS = {"card": "agent card", "send": "SendMessage", "stream": "streaming",
             "get": "GetTask", "list": "ListTasks", "subscribe": "subscribers"}
FONT = 'font-family="Helvetica,Arial,sans-serif"'
WIDTH = 960


def esc(text):
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def num(value):
    """A short, stable rendering of a figure."""
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    if value >= 1:
        return f"{value:.2f}"
    return f"{value:.3f}".rstrip("0") if value >= 0.01 else f"{value:.4f}"


def load(path):
    doc = json.loads(Path(path).read_text())
    runs = []
    for run in doc["runs"]:
        groups = {}
        for row in run["rows"]:
            # JSON-RPC over HTTP/1.1 only, and no callgrind row (its times mean nothing).
            if row.get("binding", "jsonrpc") != "jsonrpc" or row.get("under_callgrind"):
                continue
            key = (row["label"], row["scenario"], row["concurrency"])
            groups.setdefault(key, []).append(row)
        rows = {}
        for key, found in groups.items():
            merged = {}
            for field in ("rps", "server_cpu_us", "ttfe_p50_ms"):
                values = [r[field] for r in found if r.get(field) is not None]
                if values:
                    merged[field] = statistics.median(values)
            rows[key] = merged
        runs.append((run, rows))
    return runs


def servers_of(rows):
    labels = sorted({k[0] for k in rows}, key=order)
    return labels


def order(label):
    for i, (name, _, _) in enumerate(SERVERS):
        if name == label:
            return (i, label)
    return (len(SERVERS), label)


def style(label):
    for name, display, colour in SERVERS:
        if name == label:
            return display, colour
    return label, FALLBACK[sum(map(ord, label)) % len(FALLBACK)]


def scenarios_of(rows):
    keys = sorted({(k[1], k[2]) for k in rows},
                  key=lambda s: (list(SCENARIOS).index(s[0]) if s[0] in SCENARIOS else 99, s[1]))
    return keys


def title_of(run):
    date = run["date"][:16].replace("T", " ") + " UTC"
    title = f"{date}: {run.get('commit') or 'commit not recorded'}; {run['machine'].split(';')[0]}"
    # A run beside an older build (OURS_BEFORE_BIN) names it in its optional "note".
    return f"{title}; {run['note']}" if run.get("note") else title


class Svg:
    def __init__(self):
        self.parts = []
        self.height = 0

    def add(self, text):
        self.parts.append(text)

    def text(self, x, y, body, size=12, anchor="start", weight="normal", fill="#1a202c", rotate=None):
        transform = f' transform="rotate({rotate} {x:.1f} {y:.1f})"' if rotate is not None else ""
        self.add(f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" '
                 f'font-weight="{weight}" fill="{fill}" {FONT}{transform}>{esc(body)}</text>')

    def rect(self, x, y, w, h, fill):
        self.add(f'<rect x="{x:.1f}" y="{y:.1f}" width="{max(w, 0.5):.1f}" height="{max(h, 0.5):.1f}" fill="{fill}"/>')

    def line(self, x1, y1, x2, y2, stroke="#cbd5e0", dash=None, width=1):
        d = f' stroke-dasharray="{dash}"' if dash else ""
        self.add(f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{stroke}" stroke-width="{width}"{d}/>')

    def render(self):
        head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{self.height:.0f}" '
                f'viewBox="0 0 {WIDTH} {self.height:.0f}">\n<rect width="100%" height="100%" fill="#ffffff"/>\n')
        return head + "\n".join(self.parts) + "\n</svg>\n"


def log_axis(values, pad_low=1, pad_high=1):
    low = math.floor(math.log10(min(values))) - (0 if pad_low else 0)
    high = math.ceil(math.log10(max(values)))
    if high == low:
        high += 1
    return low, high


def bar_panels(svg, runs, y, field, heading, unit, baseline_of):
    """One panel per run: bars per scenario and server on a log scale, from `baseline_of`."""
    values = []
    for run, rows in runs:
        for key, row in rows.items():
            v = value_of(row, field, rows, key, run, baseline_of)
            if v:
                values.append(v)
    low, high = log_axis(values + [1.0] if baseline_of else values)
    svg.text(20, y + 22, heading, size=16, weight="bold")
    y += 34
    left, right, plot_h = 70, WIDTH - 20, 190
    for run, rows in runs:
        scen = [s for s in scenarios_of(rows)
                if any(value_of(r, field, rows, k, run, baseline_of) for k, r in rows.items() if (k[1], k[2]) == s)]
        labels = [l for l in servers_of(rows)
                  if any(value_of(r, field, rows, k, run, baseline_of) for k, r in rows.items() if k[0] == l)]
        if not scen:
            continue
        svg.text(20, y + 14, title_of(run), size=12, weight="bold", fill="#2d3748")
        top = y + 26

        def ypos(v):
            return top + (high - math.log10(v)) / (high - low) * plot_h

        for p in range(low, high + 1):
            yy = ypos(10 ** p)
            svg.line(left, yy, right, yy)
            tick = f"{10 ** p:,}" if p >= 0 else f"{10.0 ** p:.{-p}f}"
            svg.text(left - 6, yy + 4, tick + unit, size=10, anchor="end", fill="#4a5568")
        base = ypos(1.0) if baseline_of else top + plot_h
        group_w = (right - left) / len(scen)
        bar_w = min(26.0, group_w * 0.84 / max(len(labels), 1))
        for i, (name, clients) in enumerate(scen):
            gx = left + i * group_w + (group_w - bar_w * len(labels)) / 2
            for j, label in enumerate(labels):
                row = rows.get((label, name, clients))
                v = row and value_of(row, field, rows, (label, name, clients), run, baseline_of)
                if not v:
                    continue
                x = gx + j * bar_w
                yy = ypos(v)
                svg.rect(x + 1, min(yy, base), bar_w - 2, abs(base - yy), style(label)[1])
                ty = yy - 4 if yy <= base else yy + 11
                svg.text(x + bar_w / 2, ty, num(v) + ("" if unit.endswith("µs") else unit), size=8, anchor="middle", fill="#1a202c")
            svg.text(left + i * group_w + group_w / 2, top + plot_h + 16,
                     f"{SCENARIOS.get(name, name)}, {clients} client{'s' if clients != 1 else ''}",
                     size=11, anchor="middle")
        if baseline_of:
            svg.line(left, base, right, base, stroke="#dd6b20", dash="5,3", width=1.5)
        y = top + plot_h + 26
        y = legend(svg, labels, y)
    return y


def value_of(row, field, rows, key, run, baseline_of):
    v = row.get(field)
    if v is None:
        return None
    if baseline_of:
        peer = rows.get((run.get("peer"), key[1], key[2]), {}).get(field)
        return v / peer if peer else None
    return v


def legend(svg, labels, y):
    x = 70
    for label in labels:
        display, colour = style(label)
        width = 22 + 6.2 * len(display)
        if x + width > WIDTH - 20:
            x, y = 70, y + 18
        svg.rect(x, y, 12, 12, colour)
        svg.text(x + 16, y + 10, display, size=11)
        x += width + 14
    return y + 30


def throughput(runs):
    svg = Svg()
    y = bar_panels(svg, runs, 0, "rps",
                   "Throughput ÷ the official Rust SDK's in the same run (log scale; above the "
                   "dashed line: faster)", "×", True)
    y = footnote(svg, y, "JSON-RPC over HTTP/1.1; server on one core, load generator on the other. "
                         "Source: bench/results/; python3 bench/chart.py redraws this.")
    svg.height = y
    return svg.render()


def cpu(runs):
    svg = Svg()
    y = bar_panels(svg, runs, 0, "server_cpu_us",
                   "Server CPU per request, microseconds (log scale; lower is cheaper)", " µs", False)
    y = footnote(svg, y, "User + system CPU of the server process over the measured window, "
                         "divided by the requests. Source: bench/results/.")
    svg.height = y
    return svg.render()


def latency(runs):
    svg = Svg()
    svg.text(20, 22, "Time to the first SSE event, one client, p50 (milliseconds; lower is sooner)",
             size=16, weight="bold")
    y = 40
    left, right = 330, WIDTH - 90
    for run, rows in runs:
        bars = [(k[0], r["ttfe_p50_ms"]) for k, r in rows.items()
                if k[1] == "stream" and k[2] == 1 and r.get("ttfe_p50_ms") is not None]
        if not bars:
            continue
        bars.sort(key=lambda b: order(b[0]))
        flush = run.get("fdatasync_p50_ms")
        top_value = max([v for _, v in bars] + ([flush] if flush else []))
        scale = (right - left) / (top_value * 1.1)
        svg.text(20, y + 14, title_of(run), size=12, weight="bold", fill="#2d3748")
        y += 26
        first = y
        for label, value in bars:
            display, colour = style(label)
            svg.text(left - 8, y + 13, display, size=11, anchor="end")
            svg.rect(left, y + 2, value * scale, 14, colour)
            if value * scale > (right - left) * 0.7:
                svg.text(left + value * scale - 6, y + 13, f"{num(value)} ms", size=11,
                         anchor="end", fill="#ffffff")
            else:
                svg.text(left + value * scale + 6, y + 13, f"{num(value)} ms", size=11)
            y += 22
        if flush:
            x = left + flush * scale
            svg.line(x, first - 4, x, y, stroke="#e53e3e", dash="4,3", width=1.5)
            svg.text(x, y + 12, f"the disk's fdatasync p50: {num(flush)} ms", size=10,
                     anchor="middle", fill="#c53030")
            y += 18
        y += 16
    y = footnote(svg, y, "The sled row's first event is sent once sled has flushed it (a sync_file_range, see docs/guarantees.md). "
                         "Source: bench/results/; python3 bench/chart.py redraws this.")
    svg.height = y
    return svg.render()


def footnote(svg, y, text):
    svg.text(20, y + 6, text, size=10, fill="#4a5568")
    return y + 20


def main(argv):
    check = "--check" in argv
    out = OUT
    if "--out-dir" in argv:
        at = argv.index("--out-dir")
        out = Path(argv[at + 1])
        argv = argv[:at] + argv[at + 2:]
    files = [a for a in argv if not a.startswith("--")]
    source = Path(files[0]) if files else max(RESULTS.glob("*.json"))
    runs = load(source)
    charts = {"perf-throughput.svg": throughput(runs), "perf-cpu.svg": cpu(runs),
              "perf-latency.svg": latency(runs)}
    stale = []
    for name, body in charts.items():
        path = out / name
        if check:
            if not path.exists() or path.read_text() != body:
                stale.append(str(path))
        else:
            path.write_text(body)
            print(f"wrote {path} from {source}")
    if stale:
        print("not what bench/chart.py draws from " + str(source) + ": " + ", ".join(stale)
              + " (run python3 bench/chart.py and commit the result)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
