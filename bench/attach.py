#!/usr/bin/env python3
"""Attach throughput and keystroke echo latency: nerdr against tmux and a raw PTY.

One run measures three setups the same way, each behind a PTY this script
reads as the person's terminal (the "window", ROWS x COLS):

  raw PTY  bash runs directly on the window PTY;
  tmux     bash in a session of a private tmux server, `tmux attach` on the window;
  nerdr    bash in a nerdr tab, `nerdr` (attach) on the window.

Throughput: type `cat FILE; printf <marker>` and time until the marker shows in
what the window emits. Latency: type one key at a time into bash's readline and
time until the key shows in the window output (escape sequences stripped).
During the stream: the CPU time of the multiplexer's processes (tmux server
and client; nerdr core, holder and window) and their peak RSS (VmHWM); with
`--perf DIR`, a `perf record -g` profile of them.

Everything runs under a temporary root (HOME, XDG dirs, tmux socket); only
processes this script started are ended, by PID. Stdlib only.
"""

import argparse
import math
import os
import platform
import random
import shutil
import statistics
import string
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import perf  # noqa: E402
from procs import cpu_seconds, kill_pid, peak_rss_mb, pss_kb, switched, switches  # noqa: E402
from window import (  # noqa: E402
    COLS, ROWS, Failure, Stripper, Window, clear_screen, token, typed_printf)

SHELL = ["bash", "--norc", "--noprofile"]
# Keys typed for the echo test. Each batch types every one once, then clears
# the line, so a key can only match its own echo. B and C are left out: they
# are in the status lines ("C-b ? help", "0:bash*") that clients repaint.
KEYS = b"ADEFGHIJKLMNOPQRSTUVWXYZ"
PREFIX_DETACH = b"\x02d"  # C-b d, the same for tmux and nerdr
MB = 1_000_000


def sync_shell(win, timeout):
    """Wait until bash in the window runs a command and its output shows."""
    tok = token()
    clear_screen(win)
    win.write(typed_printf(tok))
    win.expect(tok.encode(), timeout, "shell check")
    win.settle()


def keystroke_latency(win, k, timeout, typed=None):
    """Seconds from writing one key into the window to seeing it echoed there.
    `typed` (a list), if given, gets one entry per key written."""
    strip = Stripper()
    deadline = time.monotonic() + timeout
    samples = []
    typed = [] if typed is None else typed

    def batch(n, keep):
        win.write(b"\x15")  # readline: clear the line, so old keys are gone
        typed.append(0x15)
        win.settle(sink=strip.feed)
        for ch in KEYS[:n]:
            typed.append(ch)
            t0 = time.perf_counter()
            win.write(bytes([ch]))
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise Failure(
                        f"{win.name}: key {chr(ch)!r} not echoed within the {timeout:.0f} s "
                        f"budget ({len(samples)} samples done); last output {win.last[-300:]!r}")
                data = win.read(min(left, 1.0))
                if data and ch in strip.feed(data):
                    if keep:
                        samples.append(time.perf_counter() - t0)
                    break

    batch(len(KEYS), keep=False)  # warm-up, not counted
    while len(samples) < k:
        batch(min(len(KEYS), k - len(samples)), keep=True)
    win.write(b"\x15")
    typed.append(0x15)
    win.settle()
    return samples


def throughput(win, data_file, timeout):
    """Seconds from typing `cat FILE; printf MARKER` to the marker in the window."""
    tok = token(16)
    cmd = f"cat {data_file}; ".encode() + typed_printf(tok)
    clear_screen(win)  # the marker then lands on a row of lowercase data
    t0 = time.perf_counter()
    win.write(cmd)
    t1 = win.expect(tok.encode(), timeout, "throughput")
    win.settle()
    return t1 - t0


# ---- the setups -----------------------------------------------------------

def run(argv, env, cwd, timeout=30):
    p = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        raise Failure(f"`{' '.join(map(str, argv))}` failed ({p.returncode}): "
                      f"{p.stderr.strip() or p.stdout.strip()}")
    return p.stdout


class Raw:
    name = "raw PTY"

    def __init__(self, ctx):
        self.ctx = ctx

    def start(self):
        self.win = Window(self.name, SHELL, self.ctx.env, self.ctx.work)
        return self.win

    def mux_pids(self):
        return {}

    def stop(self):
        if getattr(self, "win", None):
            self.win.close()


class Tmux:
    name = "tmux"

    def __init__(self, ctx):
        self.ctx = ctx
        self.tm = ["tmux", "-S", str(ctx.root / "tmux.sock"), "-f", "/dev/null"]
        self.server = None

    def start(self):
        env, work = self.ctx.env, self.ctx.work
        run(self.tm + ["new-session", "-d", "-s", "bench", "-x", str(COLS),
                       "-y", str(ROWS - 1)] + SHELL, env, work)
        self.server = int(run(self.tm + ["display-message", "-p", "#{pid}"], env, work))
        # Empty status sides: no clock redraws, and no key letters in the line.
        for opt in ("status-left", "status-right"):
            run(self.tm + ["set-option", "-g", opt, ""], env, work)
        self.win = Window(self.name, self.tm + ["attach-session", "-t", "bench"], env, work)
        return self.win

    def mux_pids(self):
        return {"server": self.server, "client": self.win.proc.pid}

    def stop(self):
        try:
            if getattr(self, "win", None):
                self.win.close(PREFIX_DETACH)
        finally:
            try:
                run(self.tm + ["kill-server"], self.ctx.env, self.ctx.work, timeout=10)
            except (Failure, subprocess.TimeoutExpired):
                pass
            if self.server:
                kill_pid(self.server, b"tmux")


class Nerdr:
    name = "nerdr"

    def __init__(self, ctx):
        self.ctx = ctx
        self.state = ctx.root / "state" / "nerdr"

    def recorded(self, role):
        try:
            return int((self.state / f"{role}.pid").read_text().split()[0])
        except (FileNotFoundError, IndexError, ValueError):
            return None

    def start(self):
        env, work, b = self.ctx.env, self.ctx.work, self.ctx.bin
        self.tab = run([b, "agent", "sh"], env, work).strip()
        self.win = Window(self.name, [b], env, work)
        return self.win

    def mux_pids(self):
        return {"core": self.recorded("core"), "holder": self.recorded("holder"),
                "window": self.win.proc.pid}

    def stop(self):
        try:
            if getattr(self, "win", None):
                self.win.close(PREFIX_DETACH)
        finally:
            try:
                run([self.ctx.bin, "quit"], self.ctx.env, self.ctx.work, timeout=20)
            except (Failure, subprocess.TimeoutExpired) as e:
                print(f"  note: nerdr quit: {e}", file=sys.stderr)
            for role in ("core", "holder"):
                pid = self.recorded(role)
                if pid:
                    kill_pid(pid, b"nerdr")


# ---- the run --------------------------------------------------------------

class Ctx:
    pass


def make_root(args):
    ctx = Ctx()
    ctx.root = Path(tempfile.mkdtemp(prefix="nerdr-bench."))
    ctx.bin = str(Path(args.bin).resolve())
    ctx.work = ctx.root / "work"
    for d in ("home", "config/nerdr", "state", "work"):
        (ctx.root / d).mkdir(parents=True)
    (ctx.root / "run").mkdir(mode=0o700)
    (ctx.root / "config/nerdr/config.toml").write_text(
        '[agents.sh]\ncommand = ["bash", "--norc", "--noprofile"]\n')
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("NERDR_", "HERDR_", "TMUX", "XDG_", "DBUS_"))}
    env.update(HOME=str(ctx.root / "home"), XDG_RUNTIME_DIR=str(ctx.root / "run"),
               XDG_CONFIG_HOME=str(ctx.root / "config"), XDG_STATE_HOME=str(ctx.root / "state"),
               TERM="xterm-256color", PS1="$ ")
    ctx.env = env
    return ctx


def make_data(path, size):
    """`size` bytes of numbered lowercase lines (never uppercase: the markers are)."""
    letters = string.ascii_lowercase + "0123456789 "
    rnd = random.Random(1)
    lines = [f"{i:06d} " + "".join(rnd.choice(letters) for _ in range(92)) + "\n"
             for i in range(10_000)]
    block = "".join(lines).encode()
    with open(path, "wb") as f:
        left = size
        while left > 0:
            f.write(block[:left])
            left -= min(left, len(block))
        # End on a full line, so the marker starts a line of its own.
        f.write(b"\n")


def measure(setup, args, data_file):
    """Run both measurements on one setup; a dict of results or of the failure."""
    r = {"setup": setup.name}
    try:
        win = setup.start()
        sync_shell(win, args.timeout)
        pids = {k: v for k, v in setup.mux_pids().items() if v}
        sw0 = {k: switches(p) for k, p in pids.items()}
        typed = []
        lat = keystroke_latency(win, args.keys, args.timeout, typed)
        s = sorted(lat)
        r["p50"] = statistics.median(s) * 1000
        r["p99"] = s[max(0, math.ceil(0.99 * len(s)) - 1)] * 1000
        # Context switches of the multiplexer's threads per key typed (each
        # key and its echo, plus the quiet waits around them): its wake-ups.
        r["switches"] = {k: switched(sw0[k], switches(p))[0] / len(typed)
                         for k, p in pids.items()}
        rec = None
        if args.perf and pids:
            data = Path(args.perf) / f"perf-{setup.name.replace(' ', '-')}.data"
            rec = perf.Recording(pids, data)
            r["perf"] = (data, pids)
        cpu0 = {k: cpu_seconds(p) for k, p in pids.items()}
        before = win.bytes_read
        try:
            r["secs"] = throughput(win, data_file, args.timeout)
        finally:
            if rec:
                rec.stop()
        r["cpus"] = {k: cpu_seconds(p) - cpu0[k] for k, p in pids.items()}
        r["cpu"] = sum(r["cpus"].values()) if pids else None
        r["win_mb"] = (win.bytes_read - before) / MB
        # VmHWM: each process's high-water mark, which the stream sets.
        r["rss"] = {k: peak_rss_mb(p) for k, p in pids.items()}
        r["rss_sum"] = sum(r["rss"].values()) if pids else None
        # PSS right after it: the binary's code shared by nerdr's three
        # processes counts once, where each one's RSS counts it in full.
        r["pss"] = {k: pss_kb(p) / 1024 for k, p in pids.items()}
        sync_shell(win, 30)  # the tab still answers after the stream
    except (Failure, OSError, subprocess.SubprocessError) as e:
        r["error"] = str(e)
    finally:
        try:
            setup.stop()
        except Exception as e:  # cleanup must not hide the results
            r.setdefault("error", f"cleanup: {e}")
    return r


def no_perf(args):
    """`args` without the profile: one profiled run is enough."""
    return argparse.Namespace(**{**vars(args), "perf": None})


def median_of(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def combine(rs):
    """One setup's runs as one result: the median of each figure, the
    stream times of every run, every failure."""
    ok = [r for r in rs if "error" not in r]
    out = {"setup": rs[0]["setup"], "runs": len(rs),
           "secs_each": [r.get("secs") for r in rs]}
    for key in ("secs", "p50", "p99", "cpu", "win_mb", "rss_sum"):
        out[key] = median_of(r.get(key) for r in ok)
    for key in ("cpus", "rss", "pss", "switches"):
        names = ok[0].get(key, {}) if ok else {}
        out[key] = {n: median_of(r[key].get(n) for r in ok) for n in names}
    for r in rs:
        if "perf" in r:
            out["perf"] = r["perf"]
    errors = [r["error"] for r in rs if "error" in r]
    if errors:
        out["error"] = "; ".join(errors)
    return out


def version(argv):
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError) as e:
        return f"unknown ({e})"


def fmt(x, spec):
    """`x` formatted, or a dash as wide as `spec` would have made it."""
    return format("-", ">" + spec.split(".")[0]) if x is None else format(x, spec)


def ratio(a, b):
    return "-" if a is None or b is None or b == 0 else f"{a / b:.2f}x"


def report(results, args, facts):
    print()
    for k, v in facts:
        print(f"{k:<8} {v}")
    print(f"window   {ROWS}x{COLS}; stream {args.mb} MB (1 MB = 10^6 bytes) of 100-byte lines; "
          f"{args.keys} keys (after {len(KEYS)} warm-up)")
    if args.runs > 1:
        print(f"runs     {args.runs} of each setup, in turn: medians of each figure")
    if args.perf:
        print("perf     `perf record -g` ran on the multiplexers during the first run's "
              "stream: its cost is in that run's figures")
    print()
    hdr = f"{'setup':<8} {'stream s':>9} {'MB/s':>8} {'window MB':>10} {'echo p50':>9} " \
          f"{'echo p99':>9} {'mux CPU s':>10} {'peak RSS MB':>12}"
    print(hdr)
    print("-" * len(hdr))
    for r in results:
        secs = r.get("secs")
        print(f"{r['setup']:<8} {fmt(secs, '9.2f')} "
              f"{fmt(args.mb / secs if secs else None, '8.1f')} {fmt(r.get('win_mb'), '10.1f')} "
              f"{fmt(r.get('p50'), '7.2f')}ms {fmt(r.get('p99'), '7.2f')}ms "
              f"{fmt(r.get('cpu'), '10.2f')} {fmt(r.get('rss_sum'), '12.1f')}")
    if args.runs > 1:
        print("\nstream s of each run: " + "; ".join(
            f"{r['setup']} " + " ".join(fmt(x, ".2f") for x in r["secs_each"])
            for r in results))
    print("\nper process during the stream (CPU s / peak RSS MB / PSS MB right after):")
    for r in results:
        if r.get("cpus"):
            print(f"  {r['setup']:<8} " + ", ".join(
                f"{k} {r['cpus'][k]:.2f} s / {r['rss'][k]:.1f} / {r['pss'][k]:.1f} MB"
                for k in r["cpus"]) + f"; PSS in all {sum(r['pss'].values()):.1f} MB")
    print("\ncontext switches per key typed, while echoing (the multiplexer's wake-ups):")
    for r in results:
        if r.get("switches"):
            sw = r["switches"]
            print(f"  {r['setup']:<8} {sum(sw.values()):.1f} (" + ", ".join(
                f"{k} {v:.1f}" for k, v in sw.items()) + ")")
    for r in results:
        if "error" in r:
            print(f"\n{r['setup']} FAILED: {r['error']}")
    by = {r["setup"]: r for r in results}
    print(f"\nratios (>1: nerdr slower or bigger)  {'stream':>8} {'echo p50':>9} {'echo p99':>9} "
          f"{'mux CPU':>8} {'peak RSS':>9}")
    for a, b in (("nerdr", "tmux"), ("nerdr", "raw PTY"), ("tmux", "raw PTY")):
        ra, rb = by.get(a, {}), by.get(b, {})
        mux = (ratio(ra.get('cpu'), rb.get('cpu')), ratio(ra.get('rss_sum'), rb.get('rss_sum'))) \
            if b != "raw PTY" else ("", "")
        print(f"{a + ' / ' + b:<37} {ratio(ra.get('secs'), rb.get('secs')):>8} "
              f"{ratio(ra.get('p50'), rb.get('p50')):>9} {ratio(ra.get('p99'), rb.get('p99')):>9} "
              f"{mux[0]:>8} {mux[1]:>9}")
    for r in results:
        if "perf" in r:
            data, pids = r["perf"]
            print(f"\nprofile of {r['setup']} during the stream ({data}; top entries by "
                  "self time, per process):")
            for name, pid in pids.items():
                print(f"  {name} (pid {pid}):")
                for line in perf.report(data, pid, args.perf_top):
                    print(f"    {line}")


def main():
    here = Path(__file__).resolve().parent.parent
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.environ.get("NERDR_BENCH_BIN",
                                                    str(here / "target/release/nerdr")),
                    help="the nerdr binary to test (default: $NERDR_BENCH_BIN, else "
                         "target/release/nerdr)")
    ap.add_argument("--mb", type=int, default=200, help="MB streamed through each setup")
    ap.add_argument("--keys", type=int, default=200, help="keystroke samples per setup")
    ap.add_argument("--timeout", type=float, default=300,
                    help="seconds each measurement may take before it fails")
    ap.add_argument("--only", action="append", choices=["raw", "tmux", "nerdr"],
                    help="run only these setups (repeatable)")
    ap.add_argument("--runs", type=int, default=1,
                    help="measure every setup this many times, in turn, and report "
                         "medians (a busy machine's noise)")
    ap.add_argument("--perf", metavar="DIR",
                    help="profile the multiplexers' processes during the stream with "
                         "`perf record -g` into DIR and print their top entries")
    ap.add_argument("--perf-top", type=int, default=25, help="entries per process")
    args = ap.parse_args()
    if not os.access(args.bin, os.X_OK):
        sys.exit(f"no nerdr binary at {args.bin}; run `cargo build --release` or pass --bin PATH")
    if not shutil.which("tmux"):
        sys.exit("tmux is not on PATH; install it (the comparison needs it)")

    facts = [
        ("machine", f"nproc {os.cpu_count()} ({len(os.sched_getaffinity(0))} usable), "
                    f"{platform.system()} {platform.release()}, "
                    f"load {os.getloadavg()[0]:.2f} at start"),
        ("versions", f"{version(['tmux', '-V'])}, {version([args.bin, '--version'])}, "
                     f"{version(['bash', '-c', 'echo bash $BASH_VERSION'])}, "
                     f"python {platform.python_version()}"),
    ]
    roots = []
    runs = {key: [] for key in ("raw", "tmux", "nerdr") if not args.only or key in args.only}
    try:
        roots.append(make_root(args))
        data_file = roots[0].root / "data.txt"
        make_data(data_file, args.mb * MB)
        setups = {"raw": Raw, "tmux": Tmux, "nerdr": Nerdr}
        for i in range(args.runs):
            # A fresh root per run: no core, tab or server left from the last one.
            ctx = roots[0] if i == 0 else make_root(args)
            roots.append(ctx)
            for key in runs:
                setup = setups[key](ctx)
                print(f"run {i + 1}/{args.runs}: measuring {setup.name} ...",
                      file=sys.stderr, flush=True)
                t = time.monotonic()
                runs[key].append(measure(setup, args if i == 0 else no_perf(args), data_file))
                print(f"  done in {time.monotonic() - t:.1f} s", file=sys.stderr, flush=True)
        facts.append(("load", f"{os.getloadavg()[0]:.2f} at end (1-min average)"))
    finally:
        for ctx in roots:
            shutil.rmtree(ctx.root, ignore_errors=True)
    results = [combine(rs) for rs in runs.values()]
    report(results, args, facts)
    return 1 if any("error" in r for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
