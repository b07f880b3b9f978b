#!/usr/bin/env python3
"""What a verdict costs when trials are long: a sweep of 6 variants whose every trial has --steps
measured steps (300,000 by default, the case of issue 29, where the bootstrap it replaced spent
58 s in a rerun that reused everything and 96 s in `runx compare`).

A tiny sweep is run twice for real (--force), so the store, its identities and its runs are
runx's own; then each trial's measured steps are multiplied to --steps rows with SQLite (the same
step times again, so the figures keep their meaning). Times, with the real runx binary:
  - a plain rerun, which reuses every trial and prints the end-of-run table (the verdicts of 5
    variants against the baseline);
  - `runx compare previous latest` (6 variants);
  - `runx history` (2 runs x 6 variants).

  python3 bench/studies/verdict_cost.py --runx build/runx
"""
import argparse
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

EXPERIMENT = """name: verdict_cost
device: cpu
threads: 1
model: {name: mlp, hidden: [16]}
data: {source: synthetic, shape: [16], num_classes: 4, batch_size: 8}
train: {warmup_steps: 1, steps: 20, eval: false}
sweep: {mode: grid, axes: {data.batch_size: [8, 16, 24, 32, 40, 48]}}
"""


def timed(cmd):
    t0 = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        sys.exit("failed: {}\n{}".format(" ".join(cmd), p.stdout))
    return time.monotonic() - t0, p.stdout


def pad_steps(db, steps):
    con = sqlite3.connect(db)
    with con:
        trials = [r[0] for r in con.execute("SELECT id FROM trials WHERE status = 'ok'")]
        for t in trials:
            n = con.execute("SELECT count(*) FROM steps WHERE trial_id = ? AND phase = 'measure'", (t,)).fetchone()[0]
            con.execute(
                "WITH RECURSIVE k(i) AS (SELECT ? UNION ALL SELECT i + 1 FROM k WHERE i + 1 < ?) "
                "INSERT INTO steps (trial_id, phase, step, wall_ms, data_ms, samples, loss) "
                "SELECT s.trial_id, 'measure', k.i, s.wall_ms, s.data_ms, s.samples, s.loss "
                "FROM k JOIN steps s ON s.trial_id = ? AND s.phase = 'measure' AND s.step = k.i % ?",
                (n, steps, t, n))
    total = con.execute("SELECT count(*) FROM steps WHERE phase = 'measure'").fetchone()[0]
    con.close()
    return len(trials), total


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runx", default="build/runx")
    p.add_argument("--steps", type=int, default=300000, help="measured steps of each trial")
    args = p.parse_args()
    work = tempfile.mkdtemp(prefix="runx-verdict-cost-")
    try:
        db = os.path.join(work, "runx.db")
        exp = os.path.join(work, "cost.yaml")
        with open(exp, "w") as f:
            f.write(EXPERIMENT)
        timed([args.runx, exp, "--db", db, "-q"])
        timed([args.runx, exp, "--db", db, "-q", "--force"])
        trials, total = pad_steps(db, args.steps)
        print("runx verdict cost: {} trials of {} measured steps ({} step rows), store {:.0f} MiB".format(
            trials, args.steps, total, os.path.getsize(db) / 2**20))
        for name, cmd in [("rerun reusing every trial (end-of-run table)", [args.runx, exp, "--db", db]),
                          ("runx compare previous latest", [args.runx, "compare", "previous", "latest", "--db", db]),
                          ("runx history", [args.runx, "history", "verdict_cost", "--db", db])]:
            seconds, out = timed(cmd)
            print("{:48} {:6.2f} s".format(name, seconds))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
