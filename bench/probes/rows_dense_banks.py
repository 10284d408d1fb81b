#!/usr/bin/env python3
"""Probe (not part of the build; no GPU): a model of the shared-memory banks the staged
rows kernel (rows_dense, kernel_templates/rt/axis.cuh) meets while it folds a tile, for
4-byte elements. Groups of G lanes fold a row each (lane l reads the row's elements l,
l + G, ...), so a warp folds 32 / G rows, R apart, at once. A word q of the tile is kept
at slot q + (q >> 5) * skew. For each R the model counts, at every step of the fold of
the first 8 warps, the most distinct slots a warp's reads put in one bank (1: no
conflict; n: the read takes n passes), and prints the mean over the steps and the worst.
With --choose it also takes, for each R, the skew among --skews that spreads the first
element of each of a warp's rows over the most banks (the choice the first form on the
branch wip/rows-dense-skew made on the device, timed in set BM and not kept), and the
stores are checked too (32 lanes a vector of 4 apart, tiles on the vector grid: any odd
skew keeps them in distinct banks). The library's own model, which decides the skew, is
reduce_tune::rows_dense_fold_passes (engine/src/axis.cpp): it also averages over tiles
that start off the vector grid and counts 8- and 2-byte elements.
Set BL, docs/BENCHMARKS.md: at skew 1 (the kernel as it is), R = 124 with G = 4 gives 8,
R = 93 7.9, and R = 62 with G = 1 gives 16.
    python3 bench/probes/rows_dense_banks.py [--group 4] [--from 64] [--to 128]
        [--skews 1] [--choose] [--over 2.5]
"""
import argparse


def slot(q, skew):
    return q + (q >> 5) * skew


def fold_passes(r, group, skew, warps=8):
    """Mean and worst passes a warp's fold reads take over the first `warps` warps."""
    rows_per_warp = 32 // group
    total, steps, worst = 0, 0, 0
    for w in range(warps):
        for step in range((r + group - 1) // group):
            banks = {}
            for lane in range(32):
                row, e = w * rows_per_warp + lane // group, lane % group + group * step
                if e >= r:
                    continue
                s = slot(row * r + e, skew)
                banks.setdefault(s % 32, set()).add(s)
            passes = max(len(v) for v in banks.values())
            total, steps, worst = total + passes, steps + 1, max(worst, passes)
    return total / steps, worst


def store_passes(skew, vec=4):
    """Worst passes of a warp's stores of one element of its vectors (lanes `vec` apart)."""
    worst = 0
    for base in range(0, 4096, 32 * vec):
        for e in range(vec):
            banks = {}
            for lane in range(32):
                s = slot(base + vec * lane + e, skew)
                banks.setdefault(s % 32, set()).add(s)
            worst = max(worst, max(len(v) for v in banks.values()))
    return worst


def chosen_skew(r, group, skews):
    """The skew that spreads the first element of each of a warp's rows over the most banks."""
    best, best_banks = skews[0], -1
    for skew in skews:
        banks = set()
        for i in range(32 // group):
            b = slot(i * r, skew) % 32
            banks.update((b + l) % 32 for l in range(group))
        if len(banks) > best_banks:
            best, best_banks = skew, len(banks)
    return best


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--group", type=int, default=4, choices=[1, 2, 4, 8, 16, 32])
    parser.add_argument("--from", dest="low", type=int, default=64)
    parser.add_argument("--to", dest="high", type=int, default=128)
    parser.add_argument("--skews", default="1", help="odd skews, comma-separated")
    parser.add_argument("--choose", action="store_true", help="choose a skew per R among --skews")
    parser.add_argument("--over", type=float, default=0.0, help="print only R whose mean passes exceed this")
    a = parser.parse_args()
    skews = [int(x) for x in a.skews.split(",")]
    for skew in skews:
        print(f"skew {skew}: stores take {store_passes(skew)} pass(es) at worst")
    means = []
    for r in range(max(a.low, 1), a.high + 1):
        skew = chosen_skew(r, a.group, skews) if a.choose else skews[0]
        mean, worst = fold_passes(r, a.group, skew)
        means.append(mean)
        if mean > a.over:
            print(f"R {r:5d}  group {a.group:2d}  skew {skew}  fold passes mean {mean:.2f}  worst {worst}")
    print(f"R {a.low}..{a.high}: mean {sum(means) / len(means):.2f}, worst mean {max(means):.2f}")


if __name__ == "__main__":
    main()
