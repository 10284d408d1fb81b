#!/usr/bin/env python3
"""Gap between a search's winners and exhaustive search, per bucket.

usage: compare-search.py EXHAUSTIVE_DB OTHER_DB

For every deterministic winner in OTHER_DB whose bucket EXHAUSTIVE_DB also tuned, prints
the winner's config, its time as measured by the exhaustive run, the exhaustive run's
best deterministic time, and the gap between the two (both times from the same run, so
run-to-run drift does not enter), plus the gap in the other run's own timing.

The fastest of thousands of measurements is biased low where calls are bound by the
launch rate (a few microseconds, a few percent of noise each), so the gap is also given
against the exhaustive run's own winner at n (chosen, like every winner, by its worst
case across the bucket), and, where the exhaustive run also timed the other winner at
its interior sizes (it was one of its finalists), as the worst ratio of the two across
the bucket.
"""
import sqlite3
import sys


def winners(db):
    return db.execute(
        """SELECT w.op, w.dtype, w.out_dtype, w.bucket, c.text, w.median_ms
           FROM winners w JOIN configs c ON c.id = w.config_id
           WHERE w.determinism = 'deterministic' ORDER BY w.op, w.dtype, w.bucket""").fetchall()


def main():
    exhaustive = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
    other = sqlite3.connect(f"file:{sys.argv[2]}?mode=ro", uri=True)
    exhaustive_best = {(op, d, o, b): (cfg, ms) for op, d, o, b, cfg, ms in winners(exhaustive)}
    print(f"{'problem':<16} {'bucket':>6} {'candidates':>10} {'exhaustive best ms':>19} "
          f"{'winner in exh. run':>19} {'gap':>7} {'own-run gap':>11} {'vs exh. winner':>14} {'worst in bucket':>14}  winner "
          f"(gaps against the fastest time, then against the exhaustive run's winner)")
    worst = worst_vs_winner = 0.0
    for op, d, o, b, cfg, ms in winners(other):
        key = (op, d, o, b)
        if key not in exhaustive_best:
            continue
        # The fastest verified time of the bucket (the stored winner may be a simpler
        # config within noise of it).
        best_ms = exhaustive.execute(
            """SELECT MIN(median_ms) FROM measurements
               WHERE op = ? AND dtype = ? AND out_dtype = ? AND n >= ? AND n < ? AND status = 'ok'""",
            (op, d, o, 1 << b, 2 << b)).fetchone()[0]
        # The exhaustive run's own time for the other search's winner (same n, same bucket).
        row = exhaustive.execute(
            """SELECT MIN(m.median_ms), (SELECT COUNT(*) FROM measurements m2
                   WHERE m2.op = ? AND m2.dtype = ? AND m2.out_dtype = ? AND m2.n >= ? AND m2.n < ?)
               FROM measurements m JOIN configs c ON c.id = m.config_id
               WHERE m.op = ? AND m.dtype = ? AND m.out_dtype = ? AND m.n >= ? AND m.n < ?
                 AND c.text = ? AND m.status = 'ok'""",
            (op, d, o, 1 << b, 2 << b, op, d, o, 1 << b, 2 << b, cfg)).fetchone()
        same_run_ms, candidates = row
        gap = (same_run_ms / best_ms - 1) if same_run_ms else float("nan")
        own_gap = ms / best_ms - 1
        worst = max(worst, gap if gap == gap else 0)
        exh_winner_ms = exhaustive_best[key][1]
        vs_winner = (same_run_ms / exh_winner_ms - 1) if same_run_ms else float("nan")
        worst_vs_winner = max(worst_vs_winner, vs_winner if vs_winner == vs_winner else 0)
        # Across the bucket, as winners are chosen: where the exhaustive run timed the other
        # winner at every size it timed its own winner (it was one of its finalists), the
        # worst ratio of the two over those sizes; else only n could be compared ("-").
        def times_by_size(config):
            return dict(exhaustive.execute(
                """SELECT m.n, MIN(m.median_ms) FROM measurements m JOIN configs c ON c.id = m.config_id
                   WHERE m.op = ? AND m.dtype = ? AND m.out_dtype = ? AND m.n >= ? AND m.n < ?
                     AND c.text = ? AND m.status = 'ok' GROUP BY m.n""",
                (op, d, o, 1 << b, 2 << b, config)).fetchall())
        mine, theirs = times_by_size(cfg), times_by_size(exhaustive_best[key][0])
        across = "-"
        if len(theirs) > 1 and set(theirs) <= set(mine):
            across = f"{(max(mine[s] / theirs[s] for s in theirs) - 1) * 100:.2f}%"
        print(f"{op + '<' + d + '>':<16} {'2^' + str(b):>6} {candidates:>10} {best_ms:>19.5f} "
              f"{(same_run_ms or float('nan')):>19.5f} {gap * 100:>6.2f}% {own_gap * 100:>10.2f}% "
              f"{vs_winner * 100:>13.2f}% {across:>14}  {cfg}")
    print(f"largest gap (same-run times): {worst * 100:.2f}% against the fastest time, "
          f"{worst_vs_winner * 100:.2f}% against the exhaustive run's winner")


if __name__ == "__main__":
    main()
