#!/usr/bin/env python3
"""Joins reduce_tune_axis_bench's and torch_axes.py's outputs by (layout, op, R, outputs)
and prints one markdown table with the ratios, and a summary of the goals of issue 12.

Usage: join_axes.py AXIS_BENCH_LOG TORCH_AXES_LOG
"""
import sys


def header(path):
    """The bench's peak bandwidth (GB/s) and empty-launch time (us), where it printed them."""
    peak = empty = None
    for line in open(path):
        if line.startswith("device:") and "peak" in line:
            peak = float(line.split("peak")[1].split()[0])
        elif line.startswith("empty kernel launch"):
            empty = float(line.split(":")[1].split()[0])
    return peak, empty


def rows(path):
    out = {}
    for line in open(path):
        parts = line.split("|")
        head = parts[0].split()
        if len(head) != 4 or head[0] not in ("rows", "columns"):
            continue
        out[(head[0], head[1], int(head[2]), int(head[3]))] = [p.split() for p in parts[1:]]
    return out


def flats(path):
    """The bench's flat reductions: {(op, elements): us}, from its "flat OP ELEMENTS | us GB/s
    %peak" lines (none in logs of benches before them)."""
    out = {}
    for line in open(path):
        parts = line.split("|")
        head = parts[0].split()
        if len(head) == 3 and head[0] == "flat" and len(parts) > 1 and parts[1].split():
            out[(head[1], int(head[2]))] = float(parts[1].split()[0])
    return out


# The design's bar for an axis shape (shared/design.md, "Axis reductions"): at least this
# times the bandwidth of a flat reduction of the same element count.
FLAT_BAR = 0.9


def moved_factor(key):
    """Bytes read and written over the bytes read, for a row of the bench: its GB/s counts
    the input alone, and its calls write one element of the input's type per output, so
    R = 1 moves twice what it reads and R = 16 one sixteenth more."""
    return 1.0 + 1.0 / key[2]


def main():
    ours, torch, flat = rows(sys.argv[1]), rows(sys.argv[2]), flats(sys.argv[1])

    def flat_ratio(key):
        """The shape's bandwidth over the flat reduction's of its element count: flat us / rt us,
        the shape's bytes counted as read and written (moved_factor: R = 1 writes as much as it
        reads, where the flat call writes one element)."""
        f = flat.get((key[1], key[2] * key[3]))
        return f / float(ours[key][0][0]) * moved_factor(key) if f else None

    print("| layout | op | R | outputs | reduce-tune µs | GB/s | % peak | torch µs | torch / rt | CUB seg. µs | CUB / rt "
          "| built-in µs | built-in / rt | flat µs | flat / rt |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    worst_torch, worst_cub, below_torch, below_cub, big_below_90 = 9e9, 9e9, [], [], []
    worst_builtin, below_builtin = 9e9, []
    for key in sorted(ours, key=lambda k: (k[0], k[1], k[2], k[3])):
        rt = ours[key]
        rt_us, gbps, peak = float(rt[0][0]), float(rt[0][1]), float(rt[0][2].rstrip("%"))
        cub = rt[1][0]
        builtin = rt[2][0] if len(rt) > 3 else "-"
        ratio_b = float(builtin) / rt_us if builtin != "-" else None
        again = " ".join(" ".join(p) for p in rt[4:]) if len(rt) > 4 else ""
        if ratio_b is not None:
            worst_builtin = min(worst_builtin, ratio_b)
            if ratio_b < 0.97:
                below_builtin.append((key, ratio_b, again))
        t = torch.get(key)
        t_us = float(t[0][0]) if t else None
        ratio_t = t_us / rt_us if t_us else None
        ratio_c = float(cub) / rt_us if cub != "-" else None
        if ratio_t is not None:
            worst_torch = min(worst_torch, ratio_t)
            if ratio_t < 1.0:
                below_torch.append((key, ratio_t))
        if ratio_c is not None:
            worst_cub = min(worst_cub, ratio_c)
            if ratio_c < 1.0:
                below_cub.append((key, ratio_c))
        if key[2] * key[3] >= (1 << 26) and peak < 90:
            big_below_90.append((key, peak))
        print(f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} | {rt_us:.2f} | {gbps:.1f} | {peak:.1f} | "
              f"{t_us if t_us else '-'} | {f'{ratio_t:.2f}×' if ratio_t else '-'} | {cub} | "
              f"{f'{ratio_c:.2f}×' if ratio_c else '-'} | {builtin} | {f'{ratio_b:.2f}×' if ratio_b else '-'} | "
              f"{flat.get((key[1], key[2] * key[3]), '-')} | {f'{flat_ratio(key):.2f}×' if flat_ratio(key) else '-'} |")
    print()
    print(f"shapes: {len(ours)}; torch/rt worst {worst_torch:.2f}×, below 1.0× at {len(below_torch)}; "
          + (f"CUB/rt worst {worst_cub:.2f}×, below 1.0× at {len(below_cub)}; " if worst_cub < 9e9
             else "no CUB times (rows of this dtype are not timed against CUB); ")
          + f">= 2^26 elements below 90% of peak: {len(big_below_90)}"
          + (f"; built-in/rt worst {worst_builtin:.2f}×, below 0.97× at {len(below_builtin)}" if worst_builtin < 9e9
             else ""))
    # Issue 12's goals, one line each.
    def ratio(key):
        t = torch.get(key)
        return float(t[0][0]) / float(ours[key][0][0]) if t else None
    peak, empty = header(sys.argv[1])

    def moved_gbps(key):
        return float(ours[key][0][1]) * moved_factor(key)

    def floor_us(key):
        # The least time any call of this shape can take in this run: the bytes it must
        # move at peak bandwidth, or an empty launch, the larger.
        if peak is None or empty is None:
            return None
        us = float(ours[key][0][0])
        return max(moved_gbps(key) * us / peak, empty)

    def goal(name, keys, floor):
        keys = [k for k in keys if ratio(k) is not None]
        rs = [ratio(k) for k in keys]
        if not rs:
            return
        met = sum(1 for r in rs if r >= floor)
        line = f"goal: {name}: {met} of {len(rs)} at >= {floor}x torch (range {min(rs):.2f}-{max(rs):.2f}x)"
        if floor > 1 and floor_us(keys[0]) is not None:
            # Where torch itself takes less than `floor` times the shape's floor, no
            # implementation can reach the goal there.
            possible = [k for k in keys if float(torch[k][0][0]) >= floor * floor_us(k)]
            met_possible = sum(1 for k in possible if ratio(k) >= floor)
            line += (f"; attainable at {len(possible)} (torch >= {floor}x the larger of the bytes at peak and an "
                     f"empty launch, {empty:.2f} us), met at {met_possible} of them")
        print(line)
    goal("every shape", list(ours), 1.0)
    goal("tiny R (<= 16) with >= 2^18 outputs", [k for k in ours if k[2] <= 16 and k[3] >= 1 << 18], 2.0)
    goal("columns with <= 100 outputs and R >= 1000", [k for k in ours if k[0] == "columns" and k[3] <= 100
                                                          and k[2] >= 1000], 2.0)
    goal("<= 7 long rows (R >= 65537)", [k for k in ours if k[0] == "rows" and k[3] <= 7 and k[2] >= 65537], 2.0)
    all_r = sorted(r for r in (ratio(k) for k in ours) if r is not None)
    if all_r:
        print(f"torch/rt over every shape: {all_r[0]:.2f}-{all_r[-1]:.2f}x, median {all_r[len(all_r) // 2]:.2f}x, "
              f">= 2x at {sum(1 for r in all_r if r >= 2)}")
    big = [k for k in ours if k[2] * k[3] >= 1 << 26]
    peaks = sorted(float(ours[k][0][2].rstrip("%")) for k in big)
    if peaks:
        print(f"goal: >= 90% of peak at >= 2^26 elements: {sum(1 for p in peaks if p >= 90)} of {len(peaks)} "
              f"({peaks[0]:.1f}-{peaks[-1]:.1f}%)")
        if peak is not None:
            moved = sorted(100 * moved_gbps(k) / peak for k in big)
            print(f"  the same, counting the bytes written too: {sum(1 for p in moved if p >= 90)} of {len(moved)} "
                  f"({moved[0]:.1f}-{moved[-1]:.1f}%)")
    # The design's bar (bytes read and written against the flat call's read): every shape,
    # and apart those of 2^20 elements and more (below that both calls take about a
    # launch, and the ratio is the host's noise).
    below_flat = []
    for name, keys in (("every shape", list(ours)), ("shapes of >= 2^20 elements",
                                                     [k for k in ours if k[2] * k[3] >= 1 << 20])):
        fr = sorted(r for r in (flat_ratio(k) for k in keys) if r is not None)
        if fr:
            print(f"design: >= {FLAT_BAR}x a flat reduction's bandwidth of the same elements, {name}: "
                  f"{sum(1 for r in fr if r >= FLAT_BAR)} of {len(fr)} (range {fr[0]:.2f}-{fr[-1]:.2f}x)")
            if name != "every shape":
                below_flat = sorted(((k, flat_ratio(k)) for k in keys
                                     if flat_ratio(k) is not None and flat_ratio(k) < FLAT_BAR), key=lambda x: x[1])
    for key, r in below_torch:
        print(f"  below torch: {key} {r:.2f}×")
    for key, r in below_cub:
        print(f"  below CUB: {key} {r:.2f}×")
    # Counted: a break beyond the noise band that a second, alternating timing confirms.
    confirmed = [b for b in below_builtin if ", confirmed" in b[2]]
    print(f"tuned below 0.97x the built-in choice: {len(below_builtin)} seen, {len(confirmed)} confirmed when "
          f"timed again (9 alternating rounds; within the noise band: not timed again)")
    for key, r, again in below_builtin:
        print(f"  tuned below 0.97x the built-in choice: {key} {r:.2f}× ({again.strip() or 'within the noise band'})")
    for key, p in big_below_90:
        print(f"  below 90% peak: {key} {p:.1f}%")
    for key, r in below_flat:
        print(f"  below {FLAT_BAR}x the flat reduction (>= 2^20 elements): {key} {r:.2f}×")


if __name__ == "__main__":
    main()
