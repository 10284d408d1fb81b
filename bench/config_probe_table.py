#!/usr/bin/env python3
"""Tables of reduce_tune_axis_bench --configs logs: per shape, the built-in choice and the
fastest given configs, held (the launch queue held: device time) by default.

usage: config_probe_table.py [--top N] [--peak] LOG...
--peak adds each time's share of the bench's peak bandwidth (f32 elements read).
A config whose result differed from the built-in choice's is marked WRONG.
"""
import re
import sys


def short(name):
    return re.sub(r"^(rows|columns):", "", name).replace(",vec=1", "").replace("split=", "")


def parse(path):
    """{(R, outputs): {name: (paced us, held us)}} and the bench's peak GB/s."""
    shape, rows, peak = None, {}, None
    for line in open(path):
        if line.startswith("device:") and "peak" in line:
            peak = float(line.split("peak")[1].split()[0])
        m = re.match(r"(rows|columns)\s+\w+\s+(\d+)\s+(\d+) \|\s+([\d.]+)", line)
        if m:
            shape = (int(m.group(2)), int(m.group(3)))
            rows[shape] = {"call": (float(m.group(4)), float(m.group(4)))}
            continue
        m = re.match(r"\s+(built-in|config (\S+)) \| paced ([\d.]+) us \| held ([\d.]+) us(.*)", line)
        if m and shape:
            name = (m.group(2) or "built-in") + (" WRONG" if "same result: NO" in m.group(5) else "")
            rows[shape][name] = (float(m.group(3)), float(m.group(4)))
    return rows, peak


def main(argv):
    top, with_peak, logs = 3, False, []
    i = 0
    while i < len(argv):
        if argv[i] == "--top":
            top = int(argv[i + 1])
            i += 1
        elif argv[i] == "--peak":
            with_peak = True
        else:
            logs.append(argv[i])
        i += 1
    for path in logs:
        print("==", path.split("/")[-1])
        rows, peak = parse(path)
        for (r, outputs), d in sorted(rows.items()):
            base = d.get("built-in", d["call"])
            gb = r * outputs * 4 / 1e3

            def fmt(us):
                return f"{us:.2f}" + (f" ({100 * gb / us / peak:.1f}%)" if with_peak and peak else "")

            best = sorted((v[1], k) for k, v in d.items() if k not in ("built-in", "call"))[:top]
            print(f"{r:>9}x{outputs:<9} built-in paced {base[0]:8.2f} held {fmt(base[1])} | " +
                  " | ".join(f"{short(k)} {fmt(d[k][1])}" for _, k in best))


if __name__ == "__main__":
    main(sys.argv[1:])
