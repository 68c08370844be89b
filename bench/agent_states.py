#!/usr/bin/env python3
"""What telling agent states costs: the CPU of nerdr's core and holder with
idle agent tabs, and the CPU added per MB of output with screen detection
on against off. Prints figures and ratios; asserts nothing about time.

(a) idle: `--tabs` agent tabs (20) whose program drew a claude-like idle
    prompt and sleeps, read with claude's rules (`detect = "claude"`).
    Once they are quiet and `--settle-secs` (15) more have passed (tokio's
    idle blocking threads end 10 s after their last task), for
    `--idle-secs` (60): the clock ticks (utime + stime from
    /proc/PID/stat) and context switches (voluntary and not, per thread
    from /proc/PID/task/*/status: a thread that sleeps and wakes switches
    at least once) of the core and of the holder, and any thread that
    ended meanwhile. An idle core should not wake at all: 0
    ticks expected, apart from the service manager's watchdog (none here:
    this runs without systemd).
(b) output: one tab prints `--mb` MB of claude-like lines (tool calls,
    their output, spinner lines, with colours) and a marker, read once with
    claude's rules (`detect = "claude"`) and once with none (a custom agent
    without `detect`: state `unknown`, nothing evaluated), `--runs` times
    each, alternating. The figure is the CPU seconds the core and the
    holder used from the start of the output until both are quiet again,
    per MB; the ratio on/off and the added milliseconds per MB follow.

Everything runs under a fresh temporary root (HOME, XDG dirs, no D-Bus and
no systemd: the core starts its holder itself), removed at the end; the
core and holder are stopped with `nerdr quit`, then by the PIDs they
recorded. Stdlib only.
"""

import argparse
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, str(Path(__file__).resolve().parent))
from procs import kill_pid, switched, switches, ticks  # noqa: E402

MB = 1_000_000
MARKER = "FLOW-" + "DONE"  # not in the typed command line, only in the output

# A claude idle screen (Claude Code 2.1): the prompt between two rules and
# the shortcuts footer.
IDLE_SCREEN = (
    "\x1b[2J\x1b[H"
    "╭───────────────────────────────────────────╮\r\n"
    "│ ✻ Welcome to Claude Code!                 │\r\n"
    "╰───────────────────────────────────────────╯\r\n\r\n"
    "─" * 80 + "\r\n"
    "❯ \r\n"
    + "─" * 80 + "\r\n"
    "  ? for shortcuts\r\n"
)

# What a working claude prints: tool calls, their output, its spinner line.
WORKING_LINES = [
    "\x1b[38;5;174m●\x1b[39m Bash(cargo test --lib 2>&1 | tail -20)",
    "  ⎿  running 412 tests",
    "     test config::tests::errors::errors_name_file_line_column ... ok",
    "     test alerts::plan::tests::every_row_of_the_decision ... ok",
    "\x1b[38;5;174m●\x1b[39m Update(src/alerts/mod.rs)",
    "  ⎿  Updated src/alerts/mod.rs with 3 additions and 1 removal",
    "       12 +  use std::time::Instant;",
    "       13    use crate::paths::Paths;",
    "\x1b[38;5;174m●\x1b[39m I'll read the config module next, then the schema.",
    "\x1b[38;5;174m●\x1b[39m Read(src/config/schema.rs)",
    "  ⎿  Read 387 lines (ctrl+o to expand)",
    "\x1b[38;5;174m✻\x1b[39m Cogitating… (14s · ↓ 1.2k tokens · esc to interrupt)",
]


class Failure(Exception):
    pass


def run(argv, env, cwd, timeout=60):
    p = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        raise Failure(f"`{' '.join(map(str, argv))}` failed ({p.returncode}): "
                      f"{p.stderr.strip() or p.stdout.strip()}")
    return p.stdout


class Nerdr:
    """nerdr under a temporary root."""

    def __init__(self, binary):
        self.bin = str(Path(binary).resolve())
        self.root = Path(tempfile.mkdtemp(prefix="nerdr-states-bench."))
        self.work = self.root / "work"
        for d in ("home", "config/nerdr", "state", "data", "work"):
            (self.root / d).mkdir(parents=True)
        (self.root / "run").mkdir(mode=0o700)
        self.data = self.root / "flow.txt"
        hold = "exec sleep 2147483647"
        (self.root / "config/nerdr/config.toml").write_text(
            "[tabs]\nworktree = false\n\n"
            "[agents.idle]\n"
            f'command = ["sh", "-c", "printf \'%s\' \\"$0\\"; {hold}", {toml_str(IDLE_SCREEN)}]\n'
            'detect = "claude"\n\n'
            "[agents.flow-on]\n"
            f'command = ["sh", "-c", {toml_str(flow_script(hold))}]\n'
            'detect = "claude"\n\n'
            "[agents.flow-off]\n"
            f'command = ["sh", "-c", {toml_str(flow_script(hold))}]\n')
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("NERDR_", "HERDR_", "TMUX", "XDG_", "DBUS_"))}
        env.update(HOME=str(self.root / "home"), XDG_RUNTIME_DIR=str(self.root / "run"),
                   XDG_CONFIG_HOME=str(self.root / "config"),
                   XDG_STATE_HOME=str(self.root / "state"),
                   XDG_DATA_HOME=str(self.root / "data"), TERM="xterm-256color",
                   FLOW_DATA=str(self.data))
        self.env = env

    def __call__(self, *args, env=None, timeout=60):
        return run([self.bin, *args], env or self.env, self.work, timeout)

    def recorded(self, role):
        try:
            return int((self.root / "state/nerdr" / f"{role}.pid").read_text().split()[0])
        except (FileNotFoundError, IndexError, ValueError):
            return None

    def pids(self):
        core, holder = self.recorded("core"), self.recorded("holder")
        if not core or not holder:
            raise Failure(f"no core or holder recorded (core {core}, holder {holder})")
        return {"core": core, "holder": holder}

    def stop(self):
        try:
            self("quit", timeout=30)
        except (Failure, subprocess.TimeoutExpired) as e:
            print(f"  note: nerdr quit: {e}", file=sys.stderr)
        for role in ("core", "holder"):
            pid = self.recorded(role)
            if pid:
                kill_pid(pid, b"nerdr")
        shutil.rmtree(self.root, ignore_errors=True)


def toml_str(s):
    """`s` as a TOML basic string."""
    out = []
    for c in s:
        if c in '"\\':
            out.append("\\" + c)
        elif ord(c) < 0x20 or c == "\x7f":
            out.append(f"\\u{ord(c):04x}")
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


def flow_script(hold):
    """Wait for a line on $FLOW_FIFO, print the data and the marker, sleep."""
    return ('read go < "$FLOW_FIFO"; cat "$FLOW_DATA"; '
            f'printf "\\n%s\\n" "{MARKER}"; {hold}')


def make_data(path, size):
    rnd = random.Random(1)
    lines = []
    total = 0
    while total < size:
        line = rnd.choice(WORKING_LINES) + "\r\n"
        lines.append(line)
        total += len(line.encode())
    path.write_text("".join(lines))
    return total


def wait(what, timeout, cond, interval=0.1):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return
        time.sleep(interval)
    raise Failure(f"timed out after {timeout:.0f} s waiting for {what}")


def settle(pids, quiet=2.0, timeout=120):
    """Until neither process used a tick for `quiet` seconds (past the
    rules' quiet time, 1.5 s for claude, so its last evaluation is in)."""
    end = time.monotonic() + timeout
    last = sum(ticks(p) for p in pids.values())
    since = time.monotonic()
    while time.monotonic() < end:
        time.sleep(0.1)
        now = sum(ticks(p) for p in pids.values())
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return
    raise Failure("the core and holder never went quiet")


def tab_state(n, tab):
    import json
    for t in json.loads(n("tabs", "--json")):
        if t["id"] == tab:
            return t
    raise Failure(f"no tab {tab}")


def idle(n, args):
    tabs = [n("agent", "idle").strip() for _ in range(args.tabs)]
    wait(f"{args.tabs} idle tabs to show the claude prompt", 60,
         lambda: all("? for shortcuts" in n("read", t) for t in tabs), interval=0.5)
    pids = n.pids()
    settle(pids)
    # tokio's blocking threads end 10 s after their last task: let those
    # of the start-up go first, so their ends are not counted as idle work.
    time.sleep(args.settle_secs)
    before = {r: (ticks(p), switches(p)) for r, p in pids.items()}
    time.sleep(args.idle_secs)
    after = {r: (ticks(p), switches(p)) for r, p in pids.items()}
    states = sorted({str(tab_state(n, t).get("agent_state")) for t in tabs})
    out = {"states": states, "tabs": tabs}
    for role in pids:
        (t0, s0), (t1, s1) = before[role], after[role]
        count, ended = switched(s0, s1)
        out[role] = {"ticks": t1 - t0, "switches": count, "ended": ended,
                     "threads": len(s1)}
    for t in tabs:
        n("close", t)
    return out


def flow_once(n, agent, mb_bytes):
    fifo = n.root / f"go-{agent}-{time.monotonic_ns()}"
    os.mkfifo(fifo)
    env = dict(n.env, FLOW_FIFO=str(fifo))
    tab = n("agent", agent, env=env).strip()
    pids = n.pids()
    # The program opens the FIFO once it runs.
    end = time.monotonic() + 60
    while True:
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            break
        except OSError:
            if time.monotonic() > end:
                raise Failure(f"{agent}: the program never opened its FIFO")
            time.sleep(0.05)
    settle(pids)
    t0 = {r: ticks(p) for r, p in pids.items()}
    start = time.monotonic()
    os.write(fd, b"go\n")
    os.close(fd)
    wait(f"{agent}: the marker on the screen", 600,
         lambda: MARKER in n("read", tab, "--lines", "5"), interval=0.25)
    settle(pids)
    wall = time.monotonic() - start
    t1 = {r: ticks(p) for r, p in pids.items()}
    state = tab_state(n, tab).get("agent_state")
    n("close", tab)
    hz = os.sysconf("SC_CLK_TCK")
    return {r: (t1[r] - t0[r]) / hz for r in pids} | {"wall": wall, "state": state}


def fmt_ms_per_mb(seconds, mb):
    return f"{seconds * 1000 / mb:8.1f}"


def main():
    here = Path(__file__).resolve().parent.parent
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=str(here / "target/release/nerdr"),
                    help="the nerdr binary (default: target/release/nerdr)")
    ap.add_argument("--tabs", type=int, default=20, help="idle agent tabs in (a)")
    ap.add_argument("--idle-secs", type=float, default=60, help="how long (a) watches")
    ap.add_argument("--settle-secs", type=float, default=15,
                    help="how long (a) waits, once the tabs are quiet, before it watches")
    ap.add_argument("--mb", type=float, default=20, help="MB of output per run in (b)")
    ap.add_argument("--runs", type=int, default=3, help="runs of each kind in (b)")
    ap.add_argument("--only", choices=["idle", "output"], help="run only (a) or (b)")
    args = ap.parse_args()
    args.bin = os.path.abspath(args.bin)
    if not os.access(args.bin, os.X_OK):
        sys.exit(f"no nerdr binary at {args.bin}; run `cargo build --release` or pass --bin PATH")

    print(f"machine: nproc {os.cpu_count()}, {platform.system()} {platform.release()}, "
          f"load {os.getloadavg()[0]:.2f} at start")
    print(f"nerdr: {args.bin} ({run([args.bin, '--version'], None, '/').strip()})")
    n = Nerdr(args.bin)
    failed = False
    try:
        if args.only in (None, "idle"):
            print(f"\n(a) {args.tabs} idle agent tabs (claude's rules), "
                  f"{args.idle_secs:.0f} s:", flush=True)
            r = idle(n, args)
            print(f"  agent states seen: {', '.join(r['states'])}")
            print(f"  {'':8} {'ticks':>6} {'context switches':>17} "
                  f"{'threads':>8} {'threads ended':>14}")
            for role in ("core", "holder"):
                x = r[role]
                print(f"  {role:8} {x['ticks']:6d} {x['switches']:17d} "
                      f"{x['threads']:8d} {x['ended']:14d}")
            print(f"  (a tick is 1/{os.sysconf('SC_CLK_TCK')} s of CPU)")
        if args.only in (None, "output"):
            size = make_data(n.data, int(args.mb * MB))
            mb = size / MB
            print(f"\n(b) {mb:.1f} MB of claude-like output, {args.runs} runs each, "
                  "alternating:", flush=True)
            runs = {"flow-on": [], "flow-off": []}
            for i in range(args.runs):
                for agent in ("flow-on", "flow-off"):
                    print(f"  run {i + 1}, {agent} ...", file=sys.stderr, flush=True)
                    runs[agent].append(flow_once(n, agent, size))
            print(f"  {'detection':10} {'core ms/MB':>11} {'holder ms/MB':>13} "
                  f"{'wall s':>7}  state at the end")
            med = {}
            for agent, label in (("flow-on", "on"), ("flow-off", "off")):
                rs = runs[agent]
                core = statistics.median(r["core"] for r in rs)
                holder = statistics.median(r["holder"] for r in rs)
                wall = statistics.median(r["wall"] for r in rs)
                med[label] = (core, holder)
                states = ",".join(sorted({str(r["state"]) for r in rs}))
                print(f"  {label:10} {fmt_ms_per_mb(core, mb):>11} "
                      f"{fmt_ms_per_mb(holder, mb):>13} {wall:7.1f}  {states}")
            (con, hon), (coff, hoff) = med["on"], med["off"]
            ratio = f"{con / coff:.2f}x" if coff else "n/a"
            print(f"  core on/off {ratio}; added by detection: "
                  f"{(con - coff) * 1000 / mb:.1f} ms of core CPU per MB (medians; "
                  f"each run's figures: on {[round(r['core'], 2) for r in runs['flow-on']]} s, "
                  f"off {[round(r['core'], 2) for r in runs['flow-off']]} s)")
    except (Failure, subprocess.TimeoutExpired) as e:
        print(f"FAILED: {e}", file=sys.stderr)
        failed = True
    finally:
        n.stop()
    print(f"\nload {os.getloadavg()[0]:.2f} at end (1-min average)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
