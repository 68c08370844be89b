#!/usr/bin/env python3
"""What finding a tab costs from the command line: nerdr against tmux, in
one run. Prints figures and ratios; asserts nothing about time.

Three sessions (`--sessions`, 3) of `--tabs` (13) tabs each, every tab a
program that sleeps (`nerdr agent -- sleep N`; tmux: `new-window -n NAME
sleep N`), then `--runs` (50) calls of each, alternating, timed from the
caller's side (process start to exit):

| what | nerdr | tmux |
|---|---|---|
| list the session's tabs, from its folder | `nerdr tabs` | `tmux list-windows -t S` |
| the same, from a subfolder 6 deep | `nerdr tabs` in `a/b/c/d/e/f` | (tmux has no folders: the same call) |
| a tab's screen by full id | `nerdr read ID` | `tmux capture-pane -p -t S:@ID` |
| a tab's screen by name | `nerdr read sleep-7` | `tmux capture-pane -p -t S:NAME` |
| by number | `nerdr read 7` | `tmux capture-pane -p -t S:6` (tmux counts from 0) |
| by a 4-hex id prefix | `nerdr read d592` | (no such handle in tmux) |

Every nerdr call is a process that connects, passes the key handshake and
asks once, as a script's call would; the core answers from memory (the
session of a folder and a handle are decided over the tabs it holds, no
disk, no git). A tmux call is the same: a client process and one request
to its server. Ratios are of medians (`nerdr / tmux 1.50x`: nerdr took 1.5
times as long; lower is better).

Everything runs under a fresh temporary root (HOME, XDG dirs, a private
tmux socket started with `-f /dev/null`, no systemd: the core starts its
holder itself), removed at the end; the core and holder are stopped with
`nerdr quit`, then by the PIDs they recorded, and the private tmux server
with `kill-server`. Stdlib only.

    cargo build --release
    python3 bench/handles.py [--bin target/release/nerdr] [--runs 50]
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from agent_states import Failure, Nerdr, run  # noqa: E402

SLEEP = "2147483647"


def timed(argv, env, cwd):
    start = time.perf_counter()
    p = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=60)
    took = time.perf_counter() - start
    if p.returncode != 0:
        raise Failure(f"`{' '.join(argv)}` failed ({p.returncode}): {p.stderr.strip()}")
    return took


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default="target/release/nerdr")
    ap.add_argument("--sessions", type=int, default=3)
    ap.add_argument("--tabs", type=int, default=13)
    ap.add_argument("--runs", type=int, default=50)
    args = ap.parse_args()
    if not Path(args.bin).exists():
        sys.exit(f"no {args.bin}: run `cargo build --release` first, or pass --bin")

    n = Nerdr(args.bin)
    tmux_sock = n.root / "tmux.sock"
    tmux = ["tmux", "-S", str(tmux_sock), "-f", "/dev/null"]
    try:
        folders = []
        for s in range(args.sessions):
            f = n.work / f"proj{s}"
            (f / "a/b/c/d/e/f").mkdir(parents=True)
            folders.append(f)
            for _ in range(args.tabs):
                run([n.bin, "agent", "--no-worktree", "--", "sleep", SLEEP], n.env, f)
            name = f"s{s}"
            run(tmux + ["new-session", "-d", "-s", name, "-n", "sleep-1", "sleep", SLEEP],
                n.env, f)
            for t in range(2, args.tabs + 1):
                run(tmux + ["new-window", "-d", "-t", name, "-n", f"sleep-{t}", "sleep", SLEEP],
                    n.env, f)
        target = folders[-1]
        pick = min(7, args.tabs)
        tab = json.loads(run([n.bin, "tabs", "--json"], n.env, target))[pick - 1]
        window_id = run(tmux + ["display-message", "-p", "-t", f"s{args.sessions - 1}:{pick - 1}",
                                "#{window_id}"], n.env, target).strip()
        sess = f"s{args.sessions - 1}"
        deep = target / "a/b/c/d/e/f"
        cases = [
            ("tabs, from the session's folder", [n.bin, "tabs"], target,
             tmux + ["list-windows", "-t", sess], target),
            ("tabs, from a subfolder 6 deep", [n.bin, "tabs"], deep,
             tmux + ["list-windows", "-t", sess], deep),
            ("read by full id", [n.bin, "read", tab["id"]], target,
             tmux + ["capture-pane", "-p", "-t", window_id], target),
            ("read by name", [n.bin, "read", tab["name"]], target,
             tmux + ["capture-pane", "-p", "-t", f"{sess}:sleep-{pick}"], target),
            ("read by number", [n.bin, "read", str(pick)], target,
             tmux + ["capture-pane", "-p", "-t", f"{sess}:{pick - 1}"], target),
            ("read by 4-hex id prefix", [n.bin, "read", tab["id"][:4]], target, None, None),
        ]
        results = []
        for label, nerdr_argv, ncwd, tmux_argv, tcwd in cases:
            nt, tt = [], []
            for _ in range(args.runs):
                nt.append(timed(nerdr_argv, n.env, ncwd))
                if tmux_argv:
                    tt.append(timed(tmux_argv, n.env, tcwd))
            results.append((label, nt, tt))

        load = os.getloadavg()
        print(f"\nnerdr {run([n.bin, '--version'], n.env, n.work).strip()}, "
              f"{run(['tmux', '-V'], n.env, n.work).strip()}, {platform.machine()}, "
              f"{os.cpu_count()} CPUs, load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
        print(f"{args.sessions} sessions x {args.tabs} tabs, {args.runs} calls each "
              "(ms, median / p90)\n")
        print(f"{'':34} {'nerdr':>15} {'tmux':>15} {'nerdr / tmux':>13}")

        def fig(xs):
            xs = sorted(xs)
            return (f"{statistics.median(xs) * 1e3:6.2f} / "
                    f"{xs[int(len(xs) * 0.9) - 1] * 1e3:6.2f}")

        for label, nt, tt in results:
            ratio = (f"{statistics.median(nt) / statistics.median(tt):12.2f}x"
                     if tt else f"{'-':>13}")
            print(f"{label:34} {fig(nt):>15} {fig(tt) if tt else '-':>15} {ratio}")
    finally:
        subprocess.run(tmux + ["kill-server"], env=n.env, capture_output=True)
        n.stop()


if __name__ == "__main__":
    try:
        main()
    except Failure as e:
        sys.exit(f"handles bench failed: {e}")
