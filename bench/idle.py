#!/usr/bin/env python3
"""What idle tabs cost: nerdr's core and holder against a tmux server, in
one run, each holding the same shells. Prints figures and ratios; asserts
nothing about time.

Each tab (a tmux window) is `bash` that printed a screenful of coloured
text (39 rows of 120 columns, 256-colour foreground and background) and
waits at its prompt, at 40 x 120:

  nerdr  `nerdr agent idle` in one folder, while a window of 41 x 120 (one
         row is its status line) is attached there, so the tabs start at
         40 x 120; the window then detaches (C-b d).
  tmux   a private server (`-f /dev/null`, `default-size 120x40`),
         `new-window -d` in one detached session; no client ever attaches.

(a) memory: resident set (VmRSS; PSS, where the binary's code that the
    core and the holder share counts once; and RssAnon: the process's own
    heap) of the core + the holder and of the tmux server, at `--counts` tabs
    (1, 50, 100), once the processes are quiet; a least-squares line
    through those points gives the marginal cost per tab. nerdr is also
    measured after its window detached.
(b) idle CPU: with no window attached, `--settle-secs` (15) after the
    last activity, for `--idle-secs` (60): clock ticks (utime + stime)
    of each process and the wake-ups of each thread (voluntary +
    involuntary context switches from /proc/PID/task/TID/status), sampled
    every 0.5 s, so each wake-up gets a time. nerdr.service has a watchdog
    (WatchdogSec, read from the unit) and the core pings it at half that
    interval: wake-ups of the core on that cadence are named as the
    watchdog's, any tick in the same sample too.

Everything runs in a private systemd user manager (tests/env/sysenv.sh:
its own journald and D-Bus, a fresh HOME, a delegated cgroup; as the
test user), where `nerdr service install` sets nerdr up as a person
would: socket-activated core, holder in its own transient unit. The
manager's teardown ends every process of the run. Needs root, systemd,
tmux. Stdlib only.

    cargo build --release
    python3 bench/idle.py [--bin PATH] [--counts 1,50,100] [--idle-secs 60]
"""

import argparse
import fcntl
import json
import os
import platform
import re
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, str(Path(__file__).resolve().parent))
from agent_states import toml_str  # noqa: E402
from procs import HZ, pss_kb, status_kb, thread_switches, ticks  # noqa: E402
from sysenv import SysenvError, SystemdUser  # noqa: E402
from window import Failure, Window  # noqa: E402

ROWS, COLS = 40, 120
PROMPT = "idle$ "
PREFIX_DETACH = b"\x02d"  # C-b d


def screenful():
    """39 rows of 120 columns in 12 cells of 10, each its own 256-colour
    foreground and background, then a reset: what a busy program leaves."""
    rows = []
    for r in range(ROWS - 1):
        cells = []
        for c in range(COLS // 10):
            fg, bg = (r * 12 + c) % 256, (r * 7 + c * 19 + 16) % 256
            text = f"r{r:02d}c{c:02d} ab"[:10].ljust(10)
            cells.append(f"\x1b[38;5;{fg};48;5;{bg}m{text}")
        rows.append("".join(cells) + "\x1b[0m")
    return "\r\n".join(rows) + "\r\n"


def program(screen_file):
    """The tab's program: print the screen, then an interactive shell."""
    return ["bash", "-c", f'cat "$0"; PS1={PROMPT!r} exec bash --norc --noprofile -i',
            str(screen_file)]


def wait(what, timeout, cond, interval=0.2):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return
        time.sleep(interval)
    raise Failure(f"timed out after {timeout:.0f} s waiting for {what}")


def settle(pids, quiet=2.0, timeout=180):
    """Until none of `pids` used a tick for `quiet` seconds."""
    end = time.monotonic() + timeout
    last = sum(ticks(p) for p in pids)
    since = time.monotonic()
    while time.monotonic() < end:
        time.sleep(0.1)
        now = sum(ticks(p) for p in pids)
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return
    raise Failure(f"processes {pids} never went quiet")


def memory(pids):
    """{"rss": kB, "anon": kB, "pss": kB} summed over `pids` ({name: pid}),
    and "by": {name: {"rss": kB, "anon": kB, "pss": kB}}."""
    by = {n: {"rss": status_kb(p, "VmRSS"), "anon": status_kb(p, "RssAnon"),
              "pss": pss_kb(p)}
          for n, p in pids.items()}
    return {k: sum(m[k] for m in by.values()) for k in ("rss", "anon", "pss")} | {"by": by}


def by_mapping(pid):
    """Resident kB of `pid` by what its mappings are (/proc/PID/smaps):
    the nerdr binary, other files (libraries), the brk heap, glibc's other
    malloc arenas (anonymous, 64 MiB aligned), thread stacks (anonymous,
    right above a guard page), other anonymous memory (large allocations),
    and the rest. {kind: kB}; empty if the process is gone."""
    maps = []  # (start, end, perms, path, rss)
    try:
        with open(f"/proc/{pid}/smaps") as f:
            for line in f:
                head = line.split(None, 5)
                if len(head) >= 5 and "-" in head[0] and not head[0].endswith(":"):
                    start, end = (int(x, 16) for x in head[0].split("-"))
                    path = head[5].strip() if len(head) > 5 else ""
                    maps.append([start, end, head[1], path, 0])
                elif line.startswith("Rss:") and maps:
                    maps[-1][4] = int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError):
        return {}
    out = {}
    for i, (start, end, perms, path, rss) in enumerate(maps):
        prev = maps[i - 1] if i else None
        if path.split(" ")[0].endswith("/nerdr"):
            kind = "binary"
        elif path.startswith("/"):
            kind = "libraries"
        elif path == "[heap]":
            kind = "heap (brk)"
        elif path.startswith("["):
            kind = "stack, vdso"
        elif prev and prev[1] == start and prev[2] == "---p" and not prev[3] \
                and prev[1] - prev[0] <= 64 << 10:
            kind = "thread stacks"
        elif start % (64 << 20) == 0:
            kind = "malloc arenas"
        else:
            kind = "other anon"
        out[kind] = out.get(kind, 0) + rss
    return out


def fit(points):
    """Least-squares line through [(n, y)]: (slope, intercept)."""
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    slope = sum((x - mx) * (y - my) for x, y in points) / sxx if sxx else 0.0
    return slope, my - slope * mx


def pty_size(pid):
    """Rows and columns of the terminal on `pid`'s stdin."""
    fd = os.open(f"/proc/{pid}/fd/0", os.O_RDONLY | os.O_NOCTTY | os.O_NONBLOCK)
    try:
        rows, cols, _, _ = struct.unpack(
            "HHHH", fcntl.ioctl(fd, termios.TIOCGWINSZ, b"\0" * 8))
    finally:
        os.close(fd)
    return rows, cols


def systemd_seconds(value):
    """A systemd time span as `systemctl show` prints it ("30s", "1min 30s")."""
    units = {"us": 1e-6, "ms": 1e-3, "s": 1, "min": 60, "h": 3600}
    total = 0.0
    for num, unit in re.findall(r"([\d.]+)\s*(us|ms|min|s|h)", value):
        total += float(num) * units[unit]
    return total


# ---- nerdr ----------------------------------------------------------------

class Nerdr:
    def __init__(self, env, folder):
        self.env, self.folder = env, folder
        self.state = env.home / ".local/state/nerdr"
        self.tabs = []

    def __call__(self, *args, timeout=60):
        return self.env.run(["nerdr", *args], cwd=self.folder, timeout=timeout)

    def recorded(self, role):
        try:
            return int((self.state / f"{role}.pid").read_text().split()[0])
        except (FileNotFoundError, IndexError, ValueError):
            return None

    def pids(self):
        core, holder = self.recorded("core"), self.recorded("holder")
        if not core or not holder:
            raise Failure(f"no core or holder recorded (core {core}, holder {holder})")
        return {"core": core, "holder": holder}

    def attach(self):
        self.win = Window("nerdr", self.env.user_argv(["nerdr"]),
                          self.env.user_env({"TERM": "xterm-256color"}), self.folder,
                          rows=ROWS + 1, cols=COLS)
        self.win.settle(quiet=0.5, timeout=30)

    def detach(self):
        self.win.close(PREFIX_DETACH)

    def grow(self, count):
        while len(self.tabs) < count:
            self.tabs.append(self("agent", "idle").strip())
            self.win.read(0)  # keep the window's PTY drained
        last = self.tabs[-1]
        wait(f"nerdr tab {last} to show its prompt", 60,
             lambda: PROMPT.strip() in self("read", last))
        self.win.settle(quiet=0.3, timeout=60)
        settle(self.pids().values())

    def all_ready(self):
        return all(PROMPT.strip() in self("read", t) for t in self.tabs)

    def a_program(self):
        for t in json.loads(self("tabs", "--json")):
            if t.get("pid"):
                return t["pid"]
        raise Failure("no tab with a pid in `nerdr tabs --json`")


# ---- tmux -----------------------------------------------------------------

class Tmux:
    def __init__(self, env, folder, prog):
        self.env, self.folder, self.prog = env, folder, prog
        self.tm = ["tmux", "-S", str(env.home / "tmux.sock"), "-f", "/dev/null"]
        self.windows = 0
        self.server = None

    def __call__(self, *args):
        return self.env.run(self.tm + list(args), cwd=self.folder)

    def grow(self, count):
        if not self.windows:
            self("new-session", "-d", "-s", "bench", "-x", str(COLS), "-y", str(ROWS),
                 *self.prog)
            self("set-option", "-g", "default-size", f"{COLS}x{ROWS}")
            self.server = int(self("display-message", "-p", "#{pid}"))
            self.windows = 1
        while self.windows < count:
            self("new-window", "-d", "-t", "bench:", *self.prog)
            self.windows += 1
        wait("the last tmux window to show its prompt", 60,
             lambda: PROMPT.strip() in self("capture-pane", "-p", "-t",
                                            f"bench:{self.windows - 1}"))
        settle([self.server])

    def all_ready(self):
        return all(PROMPT.strip() in self("capture-pane", "-p", "-t", f"bench:{i}")
                   for i in range(self.windows))

    def a_program(self):
        return int(self("display-message", "-p", "-t", "bench:0", "#{pane_pid}"))


# ---- idle CPU -------------------------------------------------------------

def watch(procs, secs, step=0.5):
    """For `secs`: per process, ticks used and the wake-ups of each thread,
    sampled every `step` s. procs: {name: pid}. Returns {name: {...}}."""
    def snap():
        return {n: (ticks(p), thread_switches(p)) for n, p in procs.items()}

    start = time.monotonic()
    first = prev = snap()
    events = {n: [] for n in procs}  # (t, tick delta, [(comm, tid, switches)])
    while time.monotonic() - start < secs:
        time.sleep(step)
        now = snap()
        t = time.monotonic() - start
        for n in procs:
            (t0, s0), (t1, s1) = prev[n], now[n]
            woke = [(comm, tid, v + i - sum(s0.get(tid, ("", 0, 0))[1:]))
                    for tid, (comm, v, i) in s1.items()]
            woke = [(c, tid, d) for c, tid, d in woke if d]
            if woke or t1 != t0:
                events[n].append((t, t1 - t0, woke))
        prev = now
    out = {}
    for n in procs:
        (t0, s0), (t1, s1) = first[n], prev[n]
        out[n] = {
            "ticks": t1 - t0,
            "voluntary": sum(v - s0.get(tid, ("", 0, 0))[1] for tid, (_, v, _) in s1.items()),
            "involuntary": sum(i - s0.get(tid, ("", 0, 0))[2] for tid, (_, _, i) in s1.items()),
            "threads": len(s1),
            "ended": len(set(s0) - set(s1)),
            "events": events[n],
        }
    return out


# tokio's timer wheel: a deadline more than 4.096 s away (64 slots of 64
# ms) waits on a coarser level, and the runtime wakes once at that level's
# slot boundary to move it down, up to this long before the deadline itself.
WHEEL_AHEAD = 4.2


def watchdog_events(events, every, slack=0.75):
    """Which of the wake-up samples are the watchdog's: (pings, ahead).
    Pings fall on a cadence of `every` seconds (the phase the most samples
    agree with); `ahead` are the timer wheel's wake-ups for the same
    deadline, up to WHEEL_AHEAD s before a ping."""
    if not events or not every:
        return set(), set()
    best = set()
    for t, _, _ in events:
        on = {i for i, (u, _, _) in enumerate(events)
              if min((u - t) % every, every - (u - t) % every) <= slack}
        if len(on) > len(best):
            best = on
    # One wake-up alone is no cadence.
    if len(best) < 2:
        return set(), set()
    pings = [events[i][0] for i in best]
    ahead = {i for i, (t, _, _) in enumerate(events)
             if i not in best and any(0 < p - t <= WHEEL_AHEAD for p in pings)}
    return best, ahead


# ---- the run --------------------------------------------------------------

def kb_mb(kb):
    return f"{kb / 1024:.1f}"


def main():
    here = Path(__file__).resolve().parent.parent
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.environ.get("NERDR_BENCH_BIN",
                                                    str(here / "target/release/nerdr")),
                    help="the nerdr binary (default: $NERDR_BENCH_BIN, else "
                         "target/release/nerdr)")
    ap.add_argument("--counts", default="1,50,100",
                    help="tab counts to measure memory at (the last is the idle run's)")
    ap.add_argument("--idle-secs", type=float, default=60)
    ap.add_argument("--settle-secs", type=float, default=15,
                    help="how long to wait, once all is quiet, before watching")
    ap.add_argument("--probe-trim", action="store_true",
                    help="after the detach, call malloc_trim(0) in the core and holder "
                         "through gdb and measure again: how much of their RSS is memory "
                         "glibc keeps freed")
    ap.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                    help="set in the user manager's environment before nerdr starts "
                         "(e.g. MALLOC_ARENA_MAX=1), to try a setting without a build")
    args = ap.parse_args()
    args.bin = os.path.abspath(args.bin)
    counts = sorted({int(x) for x in args.counts.split(",")})
    if not os.access(args.bin, os.X_OK):
        sys.exit(f"no nerdr binary at {args.bin}; run `cargo build --release` or pass --bin PATH")

    print(f"machine: nproc {os.cpu_count()}, {platform.system()} {platform.release()}, "
          f"load {os.getloadavg()[0]:.2f} at start")
    ver = subprocess.run([args.bin, "--version"], capture_output=True, text=True).stdout.strip()
    tmux_ver = subprocess.run(["tmux", "-V"], capture_output=True, text=True).stdout.strip()
    print(f"nerdr: {args.bin} ({ver}); {tmux_ver}")
    print(f"tabs: bash with a {ROWS - 1}x{COLS} screenful of 256-colour text at its prompt, "
          f"{ROWS}x{COLS}", flush=True)
    failed = False
    try:
        with SystemdUser(args.bin) as env:
            failed = run(env, args, counts)
    except (Failure, SysenvError, subprocess.SubprocessError, OSError) as e:
        print(f"FAILED: {e}", file=sys.stderr)
        failed = True
    print(f"\nload {os.getloadavg()[0]:.2f} at end (1-min average)")
    return 1 if failed else 0


def run(env, args, counts):
    folder = env.home / "work"
    folder.mkdir()
    env.chown(folder)
    screen = env.write_user_file("screen.txt", screenful())
    prog = program(screen)
    env.write_user_file(".config/nerdr/config.toml",
                        "[tabs]\nworktree = false\n\n[agents.idle]\n"
                        f"command = [{', '.join(toml_str(a) for a in prog)}]\n")
    if args.env:
        env.run(["systemctl", "--user", "set-environment", *args.env])
        print(f"user manager environment: {' '.join(args.env)}")
    env.run(["nerdr", "service", "install"])
    n = Nerdr(env, folder)
    t = Tmux(env, folder, prog)
    print("\n(a) memory", flush=True)
    report_memory(*measure_memory(n, t, counts))
    if args.probe_trim:
        probe_trim(n.pids())

    every = systemd_seconds(env.run(["systemctl", "--user", "show", "-P", "WatchdogUSec",
                                     "nerdr.service"]).strip()) / 2
    print(f"\n(b) idle CPU over {args.idle_secs:.0f} s, no window attached, "
          f"{counts[-1]} tabs each (after {args.settle_secs:.0f} s of quiet); "
          f"the core's watchdog ping every {every:g} s (WatchdogSec/2)", flush=True)
    procs = dict(n.pids(), tmux=t.server)
    settle(procs.values())
    time.sleep(args.settle_secs)
    report_idle(watch(procs, args.idle_secs), every)
    return False


def measure_memory(n, t, counts):
    """nerdr's tabs, then tmux's, grown to each count; memory at each."""
    mem = {"nerdr": [], "tmux": [], "maps": {}}
    n.attach()
    for c in counts:
        print(f"  nerdr: {c} tabs ...", file=sys.stderr, flush=True)
        n.grow(c)
        mem["nerdr"].append((c, memory(n.pids())))
        mem["maps"][f"{c} tabs"] = {k: by_mapping(p) for k, p in n.pids().items()}
    if not n.all_ready():
        raise Failure("not every nerdr tab shows its prompt")
    sizes = {"nerdr with its window": pty_size(n.a_program())}
    n.detach()
    settle(n.pids().values())
    detached = memory(n.pids())
    mem["maps"]["detached"] = {k: by_mapping(p) for k, p in n.pids().items()}
    sizes["nerdr after it detached"] = pty_size(n.a_program())
    for c in counts:
        print(f"  tmux: {c} windows ...", file=sys.stderr, flush=True)
        t.grow(c)
        mem["tmux"].append((c, memory({"server": t.server})))
    if not t.all_ready():
        raise Failure("not every tmux window shows its prompt")
    sizes["tmux"] = pty_size(t.a_program())
    return mem, detached, sizes


def probe_trim(pids):
    """RSS of each of `pids` before and after gdb calls malloc_trim(0) in it."""
    print("  malloc_trim(0) called through gdb (memory glibc kept freed):")
    for name, pid in pids.items():
        before = status_kb(pid, "VmRSS")
        p = subprocess.run(["gdb", "-p", str(pid), "-batch", "-nx",
                            "-ex", "call (int) malloc_trim(0)"],
                           capture_output=True, text=True, timeout=120)
        after = status_kb(pid, "VmRSS")
        ok = "" if p.returncode == 0 else f" (gdb failed: {p.stderr.strip()[-200:]})"
        print(f"    {name:6} {before} kB -> {after} kB ({before - after} kB released){ok}")


def report_memory(mem, detached, sizes):
    print("  tab size (a program's PTY): "
          + "; ".join(f"{k} {r}x{c}" for k, (r, c) in sizes.items()))
    print(f"  {'tabs':>5} {'nerdr RSS MB':>13} {'(anon)':>7} {'tmux RSS MB':>12} "
          f"{'(anon)':>7} {'nerdr/tmux':>11}")
    for (c, a), (_, b) in zip(mem["nerdr"], mem["tmux"]):
        print(f"  {c:5d} {kb_mb(a['rss']):>13} {kb_mb(a['anon']):>7} {kb_mb(b['rss']):>12} "
              f"{kb_mb(b['anon']):>7} {a['rss'] / b['rss']:10.2f}x")
    print(f"  {mem['nerdr'][-1][0]:5d} {kb_mb(detached['rss']):>13} "
          f"{kb_mb(detached['anon']):>7}   (nerdr after its window detached)")
    print("  marginal cost per tab (least squares over the counts above):")
    for key, label in (("rss", "RSS"), ("pss", "PSS"), ("anon", "anon")):
        sn, bn = fit([(c, m[key]) for c, m in mem["nerdr"]])
        st, bt = fit([(c, m[key]) for c, m in mem["tmux"]])
        ratio = f"{sn / st:.2f}x" if st else "-"
        print(f"    {label:5} nerdr {sn:7.1f} kB/tab (+{bn / 1024:.1f} MB base), "
              f"tmux {st:7.1f} kB/tab (+{bt / 1024:.1f} MB base); nerdr/tmux {ratio}")
    for name in mem["nerdr"][0][1]["by"]:
        sl, _ = fit([(c, m["by"][name]["rss"]) for c, m in mem["nerdr"]])
        print(f"    nerdr's {name}: {sl:.1f} kB/tab RSS; at each count "
              + ", ".join(f"{c}: {m['by'][name]['rss']} kB" for c, m in mem["nerdr"]))
    for who in ("nerdr", "tmux"):
        print(f"    {who} points (tabs: RSS kB): "
              + ", ".join(f"{c}: {m['rss']}" for c, m in mem[who]))
    print("  resident kB by mapping (/proc/PID/smaps):")
    for when, procs in mem["maps"].items():
        for name, kinds in procs.items():
            print(f"    {when:>9} {name:6} {sum(kinds.values()):6d}: "
                  + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items(), key=lambda x: -x[1])
                              if v))


def report_idle(w, every):
    marks = {name: watchdog_events(r["events"], every) if name == "core" else (set(), set())
             for name, r in w.items()}
    print(f"  {'process':8} {'ticks':>6} {'wake-ups':>9} {'(vol)':>6} {'(invol)':>8} "
          f"{'threads':>8} {'ended':>6}  the watchdog's share")
    for name, r in w.items():
        pings, ahead = marks[name]
        dog = pings | ahead
        dog_ticks = sum(r["events"][i][1] for i in dog)
        dog_wakes = sum(d for i in dog for _, _, d in r["events"][i][2])
        share = f"{len(pings)} pings: {dog_wakes} wake-ups, {dog_ticks} ticks" if pings else "-"
        print(f"  {name:8} {r['ticks']:6d} {r['voluntary'] + r['involuntary']:9d} "
              f"{r['voluntary']:6d} {r['involuntary']:8d} {r['threads']:8d} {r['ended']:6d}  "
              f"{share}")
    print(f"  (a tick is 1/{HZ} s of CPU; wake-ups are context switches summed over threads)")
    for name, r in w.items():
        pings, ahead = marks[name]
        if not r["events"]:
            continue
        print(f"  {name} wake-ups by time (s, mark, +ticks, thread/tid x switches; "
              "W: on the watchdog's cadence, w: the timer wheel ahead of a ping):")
        for i, (ts, dt, woke) in enumerate(r["events"]):
            mark = "W" if i in pings else "w" if i in ahead else " "
            threads = ", ".join(f"{c}/{tid} x{d}" for c, tid, d in woke)
            print(f"    {ts:5.1f} {mark} +{dt} {threads}")


if __name__ == "__main__":
    sys.exit(main())
