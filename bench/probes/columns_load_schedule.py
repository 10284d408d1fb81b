#!/usr/bin/env python3
"""Reads the cubins columns_load_schedule_probe wrote (e<N>_<occ>.cubin, list.txt naming N):
for each, the main columns kernel's registers a thread (cuobjdump -res-usage) and, in its
first loop of several global loads (the unrolled walk along R), how many of its loads are
issued before the first instruction that reads a loaded register (nvdisasm). A load issued
after that instruction waits a round trip of its own. Needs cuobjdump and nvdisasm (the
CUDA toolkit's, or PyPI's nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm): CUDA_BIN names
their folder. Set BO, docs/BENCHMARKS.md."""
import glob
import os
import re
import subprocess

BIN = os.environ.get("CUDA_BIN", "/usr/local/cuda/bin")


def main_kernel_loops(sass):
    """The instruction lists of the first (unpeeled) columns kernel's loops: blocks that
    branch back to their own label."""
    blocks, label, cur, inside, seen = [], None, [], False, False
    for line in sass.splitlines():
        if line.startswith(".text."):
            inside = "columns_kernel" in line and not seen
            seen = seen or inside
            continue
        if not inside:
            continue
        m = re.match(r"\s*(\.L_x_\d+):", line)
        if m:
            blocks.append((label, cur))
            label, cur = m.group(1), []
            continue
        line = re.sub(r"/\*[0-9a-f]+\*/", "", line).strip()
        if line.endswith(";"):
            cur.append(line)
    blocks.append((label, cur))
    return [b for l, b in blocks if l and any(re.search(r"BRA `\(%s\)" % re.escape(l), x) for x in b)]


def analyze(cubin):
    usage = subprocess.run([f"{BIN}/cuobjdump", "-res-usage", cubin], capture_output=True, text=True).stdout.splitlines()
    regs = "?"
    for i, line in enumerate(usage):
        if "columns_kernel" in line and i + 1 < len(usage):
            m = re.search(r"REG:(\d+)", usage[i + 1])
            regs = m.group(1) if m else "?"
            break
    sass = subprocess.run([f"{BIN}/nvdisasm", "-c", cubin], capture_output=True, text=True).stdout
    loops = main_kernel_loops(sass)
    if not loops:
        return regs, 0, 0
    # The first loop of several loads: the walk along R (a ticket's fold of partials, later
    # in the kernel, has loops of its own).
    loop = next((b for b in loops if sum("LDG" in x for x in b) >= 2), loops[0])
    loads = sum("LDG" in x for x in loop)
    pending, issued = set(), 0
    for x in loop:
        parts = re.sub(r"^@!?P\d+\s+", "", x).rstrip(";").split(None, 1)
        if len(parts) < 2:
            continue
        name, args = parts
        operands = [a.strip() for a in args.split(",")]
        if name.startswith("LDG"):
            issued += 1
            pending.add(re.match(r"R\d+", operands[0]).group(0))
            continue
        if any(re.search(r"\b%s\b" % r, " ".join(operands[1:])) for r in pending):
            break
    return regs, issued, loads


names = {}
for line in open("list.txt"):
    m = re.match(r"(\d+) (.*)", line)
    if m:
        names[int(m.group(1))] = m.group(2)
results = {}
for f in glob.glob("e*_*.cubin"):
    n, occ = (int(x) for x in f[1:-6].split("_"))
    results.setdefault(n, {})[occ] = analyze(f)
for n in sorted(results):
    print(names[n])
    print("   ", "  ".join(f"occ {o}: {r} registers, {i} of {l} loads before the first use"
                          for o, (r, i, l) in sorted(results[n].items())))
