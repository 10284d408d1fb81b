#!/usr/bin/env python3
"""Joins a reduce_tune_bench log and a bench/torch_flat.py log of the same machine.

usage: join_flat.py BENCH_LOG TORCH_LOG

For every (op, dtype) both timed: at how many sizes the tuned call is at least as fast
as torch, the smallest torch/tuned ratio and where, and the median ratio; then the
total. Sizes only one side timed are skipped (and counted). Prints markdown.
"""
import re
import statistics
import sys

ROW = re.compile(r"^(\w+)\s+(\S+)\s+(\d+)\s+\|\s+([0-9.]+)")


def rows(path):
    out = {}
    with open(path) as f:
        for line in f:
            m = ROW.match(line)
            if m:
                op, dtype, n, us = m.group(1), m.group(2), int(m.group(3)), float(m.group(4))
                out[(op, dtype, n)] = us
    return out


def main():
    tuned, torch = rows(sys.argv[1]), rows(sys.argv[2])
    groups = {}
    for key, us in tuned.items():
        if key in torch:
            groups.setdefault(key[:2], []).append((key[2], torch[key] / us))
    print("| op | dtype | sizes | tuned ≥ torch | lowest torch/tuned (n) | median torch/tuned |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    total = at_least = 0
    for (op, dtype), ratios in sorted(groups.items()):
        lowest = min(ratios, key=lambda r: r[1])
        wins = sum(1 for _, r in ratios if r >= 1.0)
        total += len(ratios)
        at_least += wins
        print(f"| {op} | {dtype} | {len(ratios)} | {wins} | {lowest[1]:.2f}x ({lowest[0]}) | "
              f"{statistics.median(r for _, r in ratios):.2f}x |")
    only_one = len(set(tuned) ^ set(torch))
    print(f"\n{at_least} of {total} sizes: the tuned call at least as fast as torch; "
          f"{only_one} sizes timed by one side only.")


if __name__ == "__main__":
    main()
