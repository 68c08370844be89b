"""What /proc says about a process: CPU ticks, memory, context switches;
and ending a process this bench started, by PID. Shared by the benches.
Linux only, stdlib only."""

import os
import signal
import time
from pathlib import Path

HZ = os.sysconf("SC_CLK_TCK")


def _stat_fields(pid):
    """The fields of /proc/PID/stat after the command name (which may hold
    spaces and parentheses): fields[0] is the state."""
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()


def pid_alive(pid):
    try:
        return _stat_fields(pid)[0] not in ("Z", "X")
    except (FileNotFoundError, IndexError):
        return False


def ticks(pid):
    """utime + stime of the whole process (every thread), in clock ticks."""
    fields = _stat_fields(pid)
    return int(fields[11]) + int(fields[12])


def cpu_seconds(pid):
    """User + system CPU seconds of `pid` (0 if it is gone)."""
    try:
        return ticks(pid) / HZ
    except (FileNotFoundError, IndexError, ValueError):
        return 0.0


def status_kb(pid, key):
    """A kB figure of /proc/PID/status (VmRSS, VmHWM, RssAnon...); 0 if the
    process is gone or has no such line."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except FileNotFoundError:
        pass
    return 0


def pss_kb(pid):
    """Proportional set size (/proc/PID/smaps_rollup), kB: pages shared
    with other processes (the nerdr binary's code, mapped by the core, the
    holder and the window alike) count once in all, split among them,
    where RSS counts them in full in each. 0 if the process is gone."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError):
        pass
    return 0


def peak_rss_mb(pid):
    """The process's resident high-water mark (VmHWM), MB."""
    return status_kb(pid, "VmHWM") / 1024


def thread_switches(pid):
    """Context switches of each thread of `pid`:
    {tid: (comm, voluntary, involuntary)}."""
    out = {}
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except FileNotFoundError:
        return out
    for task in tasks:
        vol = invol = 0
        try:
            comm = (task / "comm").read_text().strip()
            for line in (task / "status").read_text().splitlines():
                if line.startswith("voluntary_ctxt_switches:"):
                    vol = int(line.split()[1])
                elif line.startswith("nonvoluntary_ctxt_switches:"):
                    invol = int(line.split()[1])
        except FileNotFoundError:  # a thread that just ended
            continue
        out[task.name] = (comm, vol, invol)
    return out


def switches(pid):
    """Context switches of each thread of `pid`: {tid: voluntary + involuntary}."""
    return {tid: v + i for tid, (_, v, i) in thread_switches(pid).items()}


def switched(before, after):
    """Switches between two `switches` snapshots: of threads in both, and
    all of those that started since; and how many threads ended meanwhile."""
    n = sum(c - before.get(tid, 0) for tid, c in after.items())
    return n, len(set(before) - set(after))


def kill_pid(pid, must_contain, wait=3.0):
    """End a process we started (checked by its command line), by PID:
    SIGTERM, then SIGKILL if it is still there after `wait` seconds."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except FileNotFoundError:
        return
    if must_contain not in cmdline or not pid_alive(pid):
        return
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        end = time.monotonic() + wait
        while pid_alive(pid) and time.monotonic() < end:
            time.sleep(0.02)
        if not pid_alive(pid):
            return
