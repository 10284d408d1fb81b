#!/usr/bin/env python3
"""Compares two reduce_tune_axis_bench binaries (new and old) over the same shapes, run in
alternating rounds, and each against torch_axes.py's times of the same shapes.

Each log holds one dtype (`--dtype D`); --op picks the op compared. A shape's time on each side is
the lowest of its rounds (the bench's first column: the built-in choice, or the tuned
config where a database is given). Prints the shapes whose kernel changed, new against old,
then a summary: the changed shapes' old / new range and median, and how many shapes each
side reads at least as fast as torch.

Usage: ab_axes.py --new N1.log[,N2.log...] --old O1.log[,O2.log...] [--torch TORCH.log]
                  [--op sum] [--all]
  --op   the op compared (the logs may hold several)
  --all  print every shape, not only those whose kernel changed
"""
import argparse
import re
import statistics

LINE = re.compile(r"(rows|columns)\s+(\w+)\s+(\d+)\s+(\d+)\s+\|\s+([\d.]+).*\| (?:default|tuned) \S+ (.*)$")
TORCH = re.compile(r"(rows|columns)\s+(\w+)\s+(\d+)\s+(\d+)\s+\|\s+([\d.]+)")


def bench(path, op):
    """(layout, R, outputs) -> (us, kernel config) of one bench log's lines of `op`."""
    out = {}
    for line in open(path):
        m = LINE.match(line)
        if m and m[2] == op:
            kernel = m[6].split(":", 1)[1] if ":" in m[6] else m[6]
            out[(m[1], int(m[3]), int(m[4]))] = (float(m[5]), kernel.strip())
    return out


def lowest(logs, op):
    """The lowest time of each shape over the rounds' logs, with the first round's kernel."""
    out = {}
    for log in logs:
        for key, (us, kernel) in bench(log, op).items():
            if key not in out:
                out[key] = (us, kernel)
            elif us < out[key][0]:
                out[key] = (us, out[key][1])
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--new", required=True)
    parser.add_argument("--old", required=True)
    parser.add_argument("--torch", default="")
    parser.add_argument("--op", default="sum")
    parser.add_argument("--all", action="store_true")
    args = parser.parse_args()
    new, old = lowest(args.new.split(","), args.op), lowest(args.old.split(","), args.op)
    torch = {}
    if args.torch:
        for line in open(args.torch):
            m = TORCH.match(line)
            if m and m[2] == args.op:
                torch[(m[1], int(m[3]), int(m[4]))] = float(m[5])
    changed, at_least = [], {"new": [], "old": []}
    for key in sorted(new, key=lambda k: (k[0], k[1], k[2])):
        if key not in old:
            continue
        n, o = new[key], old[key]
        t = torch.get(key)
        if t:
            at_least["new"].append((t / n[0], key))
            at_least["old"].append((t / o[0], key))
        moved = n[1] != o[1]
        if moved:
            changed.append(o[0] / n[0])
        if moved or args.all:
            line = f"{key[0]} {key[1]} x {key[2]}: new {n[0]:.2f} us, old {o[0]:.2f} ({o[0] / n[0]:.2f}x)"
            if t:
                line += f", torch {t:.2f} (new {t / n[0]:.2f}x, old {t / o[0]:.2f}x)"
            line += f" | {n[1]}" + (f" <- {o[1]}" if moved else "")
            print(line)
    if changed:
        print(f"changed: {len(changed)} shapes, old / new {min(changed):.2f} .. {max(changed):.2f}, "
              f"median {statistics.median(changed):.2f}")
    for side in ("new", "old"):
        r = at_least[side]
        if r:
            low = min(r)
            print(f"{side} against torch: {sum(1 for x in r if x[0] >= 1.0)} of {len(r)} at >= 1.0x, "
                  f"lowest {low[0]:.2f}x ({low[1][1]} x {low[1][2]})")


if __name__ == "__main__":
    main()
