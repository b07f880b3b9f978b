#!/usr/bin/env python3
"""How often runx's verdicts are wrong, and how often they find a real change: a campaign of real
runs of a tiny experiment on this machine, with and without a CPU load.

For each condition (quiet; a process spinning on one CPU for the whole campaign), in a fresh
store:
  - A/A: the experiment is run --runs times (--force, so every run measures), and each run is
    compared with the one before as `runx compare previous latest` does. Every faster or slower
    verdict is false.
  - known effect: --slow more runs whose every step sleeps --extra-ms more (the test_sleep plugin;
    another configuration), each compared with an A/A run by `runx compare RUN:LABEL RUN:LABEL`.
    Every slower verdict is right; faster is wrong.
Both at --repeats (runx's recommendation is 3) and, for contrast, at repeats 1 with no earlier
runs: the first pairs of each campaign.

Prints one line per condition with the false-verdict rate, the power, and how the other
comparisons ended, and the runx commands that reproduce each; docs/benchmarks.md has the figures.

  python3 bench/studies/verdicts_campaign.py --runx build/runx --plugins build/tests/plugins/good
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile

EXPERIMENT = """name: verdicts
device: cpu
threads: 1
model: {{name: mlp, hidden: [64]}}
data: {{source: synthetic, shape: [64], num_classes: 4, batch_size: 32}}
train: {{warmup_steps: 3, steps: {steps}, eval: false}}
optimizations: {{test_sleep: {{ms: {sleep_ms}}}}}
repeats: {repeats}
"""


def run(cmd, env):
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        sys.exit("failed ({}): {}\n{}".format(p.returncode, " ".join(cmd), p.stdout))
    return p.stdout


def compare(runx, db, a, b, env):
    out = run([runx, "compare", a, b, "--db", db, "--format", "json"], env)
    variants = json.loads(out)["variants"]
    if len(variants) != 1:
        sys.exit("expected one variant in compare {} {}: {}".format(a, b, out))
    return variants[0]


def label(runx, db, env):
    out = run([runx, "query", "--db", db, "--format", "csv", "SELECT DISTINCT label FROM trials"], env)
    return out.splitlines()[1]


def campaign(args, loaded, env):
    work = tempfile.mkdtemp(prefix="runx-verdicts-")
    spinner = None
    try:
        db = os.path.join(work, "runx.db")
        exp = os.path.join(work, "verdicts.yaml")
        with open(exp, "w") as f:
            f.write(EXPERIMENT.format(steps=args.steps, sleep_ms=args.sleep_ms, repeats=args.repeats))
        if loaded:
            spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        for _ in range(args.runs):
            run([args.runx, exp, "--db", db, "-q", "--force"], env)
        for _ in range(args.slow):
            run([args.runx, exp, "--db", db, "-q", "--force", "--set",
                 "optimizations.test_sleep.ms={}".format(args.sleep_ms + args.extra_ms)], env)
        name = label(args.runx, db, env)
        aa = [compare(args.runx, db, str(i - 1), str(i), env) for i in range(2, args.runs + 1)]
        known = [compare(args.runx, db, "{}:{}".format(i, name), "{}:{}".format(args.runs + i, name), env)
                 for i in range(1, min(args.slow, args.runs) + 1)]
        loads = run([args.runx, "query", "--db", db, "--format", "csv",
                     "SELECT printf('%.2f-%.2f', min(value), max(value)) FROM metrics WHERE name = 'noise.other_cpus'"],
                    env).splitlines()[1]
        return aa, known, loads
    finally:
        if spinner:
            spinner.send_signal(signal.SIGKILL)
            spinner.wait()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


def count(rows, verdict):
    return sum(1 for r in rows if r["verdict"] == verdict)


def median(values):
    values = sorted(values)
    if not values:
        return None
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def half_widths(rows):
    """The A/A intervals' relative half-widths: sqrt(high / low) - 1."""
    return [(r["ratio_ci_high"] / r["ratio_ci_low"]) ** 0.5 - 1 for r in rows if r["ratio_ci_low"]]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runx", default="build/runx")
    p.add_argument("--plugins", default="build/tests/plugins/good", help="where the test_sleep plugin is")
    p.add_argument("--runs", type=int, default=30, help="A/A runs per condition")
    p.add_argument("--slow", type=int, default=15, help="runs with the known slowdown per condition")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--sleep-ms", type=float, default=2.0, help="test_sleep's sleep a step")
    p.add_argument("--extra-ms", type=float, default=3.0, help="the known slowdown: more sleep a step")
    p.add_argument("--conditions", default="quiet,loaded")
    p.add_argument("--keep", action="store_true", help="keep the stores (their folder is printed)")
    p.add_argument("--verbose", action="store_true", help="print every comparison")
    args = p.parse_args()
    env = dict(os.environ, RUNX_PLUGIN_PATH=os.path.abspath(args.plugins))
    print("runx verdicts campaign: {} A/A runs and {} runs {} ms slower a step, {} repeats, per condition".format(
        args.runs, args.slow, args.extra_ms, args.repeats))
    print("{:8} {:>14} {:>11} {:>11} {:>12} {:>8} {:>11} {:>9} {:>11}".format(
        "load", "false (A/A)", "no change", "inconcl.", "found", "missed", "other CPUs", "±95% A/A",
        "repeats ±2%"))
    for condition in args.conditions.split(","):
        aa, known, loads = campaign(args, condition == "loaded", env)
        wrong = count(aa, "faster") + count(aa, "slower")
        found = count(known, "slower")
        width = median(half_widths(aa[len(aa) // 2:]))  # the later half: with earlier runs to learn from
        needed = median([r["repeats_needed"] for r in aa[len(aa) // 2:] if r["repeats_needed"] is not None])
        print("{:8} {:>5}/{:<3} {:4.1f}% {:>5}/{:<5} {:>5}/{:<5} {:>3}/{:<3} {:3.0f}% {:>4}/{:<3} {:>11} {:>9} {:>11}".format(
            condition, wrong, len(aa), 100.0 * wrong / len(aa), count(aa, "no change"), len(aa),
            count(aa, "inconclusive"), len(aa), found, len(known), 100.0 * found / max(1, len(known)),
            len(known) - found, len(known), loads, "-" if width is None else "{:.1f}%".format(100 * width),
            "-" if needed is None else "{:g}".format(needed)))
        if args.verbose:
            for i, r in enumerate(aa, start=2):
                print("         A/A {} vs {}: {} {:+.1f}% ({} - {}) df {} {}".format(
                    i - 1, i, r["verdict"], r["change_pct"], r["ratio_ci_low"], r["ratio_ci_high"], r["ratio_df"],
                    r["why"]))
        effect = median([r["change_pct"] for r in known])
        if effect is not None:
            print("         the known slowdown measured: {:+.1f}% (median of its comparisons)".format(effect))
        reasons = {}
        for r in aa + known:
            if r["verdict"] == "inconclusive":
                key = r["why"].split(":")[0]
                reasons[key] = reasons.get(key, 0) + 1
        for why, n in sorted(reasons.items(), key=lambda x: -x[1]):
            print("         inconclusive: {}: {}".format(why, n))
    return 0


if __name__ == "__main__":
    sys.exit(main())
