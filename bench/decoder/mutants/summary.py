#!/usr/bin/env python3
"""Summary of run.sh's output: per tool the distribution of CPU time, wall time and max RSS,
the runs over 1 s and killed by the time limit, and the mutants where our decoder needs
more than twice OpenJPEG's CPU time (and more than 0.1 s, below which process start and
load noise dominate).
  python3 summary.py OUT.tsv [more.tsv...]"""
import sys
from collections import defaultdict

runs = defaultdict(dict)
for path in sys.argv[1:]:
    for line in open(path):
        f = line.split()
        if len(f) != 6:
            continue
        name, tool, status, wall, cpu, rss = f
        runs[name][tool] = (int(status), float(wall), float(cpu), int(rss))


def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))] if v else 0


tools = sorted({t for x in runs.values() for t in x}, key=lambda t: (t == "opj", t))
for tool in tools:
    r = [x[tool] for x in runs.values() if tool in x]
    cpu = [x[2] for x in r]
    wall = [x[1] for x in r]
    rss = [x[3] for x in r]
    print(f"{tool}: {len(r)} runs, ok {sum(1 for x in r if x[0] == 0)}, "
          f"killed by the limit {sum(1 for x in r if x[0] in (124, 137))}, crashed {sum(1 for x in r if x[0] > 128 and x[0] != 137)}; "
          f"cpu s median {pct(cpu, .5):.2f} p99 {pct(cpu, .99):.2f} max {max(cpu):.2f}, over 1 s {sum(1 for c in cpu if c > 1)}; "
          f"wall max {max(wall):.2f}, over 1 s {sum(1 for w in wall if w > 1)}; "
          f"max RSS median {pct(rss, .5) // 1024} MiB max {max(rss) // 1024} MiB, over 1 GiB {sum(1 for x in rss if x > 1 << 20)}")
for tool in tools:
    if tool == "opj":
        continue
    slow = []
    for name, x in runs.items():
        if tool in x and "opj" in x:
            own, opj = x[tool], x["opj"]
            if own[2] > 1.0 or (own[2] > 0.1 and own[2] > 2 * opj[2]):
                slow.append((own[2], name, own, opj))
    over = sum(1 for _, _, own, _ in slow if own[2] > 1.0)
    twice = [(own, opj) for _, _, own, opj in slow if own[2] > 0.1 and own[2] > 2 * opj[2]]
    twice_both = sum(1 for own, opj in twice if opj[0] == 0)
    print(f"{tool}: {over} over 1 s of CPU; {len(twice)} over 2x OpenJPEG's CPU (and 0.1 s), "
          f"{twice_both} of them where OpenJPEG decodes too")
    for cpu, name, own, opj in sorted(slow, reverse=True)[:40]:
        print(f"  {name}: {tool} {own[2]:.2f} s cpu ({own[1]:.2f} wall, {own[3] // 1024} MiB, status {own[0]}), "
              f"opj {opj[2]:.2f} s cpu ({opj[1]:.2f} wall, {opj[3] // 1024} MiB, status {opj[0]})")
