"""Profile some processes with `perf record -g` while a bench runs, and
print the top entries of each (self time, `perf report --no-children`).
Needs linux-perf and the right to profile those processes (root, or
kernel.perf_event_paranoid <= 1 for one's own). Stdlib only."""

import signal
import subprocess
import time
from pathlib import Path


class Recording:
    """`perf record -g` of `pids` ({name: pid}) into `out` until stop()."""

    def __init__(self, pids, out: Path, freq=999):
        self.pids, self.out = dict(pids), Path(out)
        self.out.parent.mkdir(parents=True, exist_ok=True)
        self.log = self.out.with_suffix(".record.log")
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen(
                ["perf", "record", "-g", "-F", str(freq), "-o", str(self.out),
                 "-p", ",".join(str(p) for p in self.pids.values())],
                stdout=log, stderr=subprocess.STDOUT)
        time.sleep(0.5)  # perf attaches to every thread before the work starts
        if self.proc.poll() is not None:
            raise OSError(f"perf record exited ({self.proc.returncode}): "
                          f"{self.log.read_text().strip()}")

    def stop(self):
        """End the recording (SIGINT, as ^C would: perf writes its file)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def report(data: Path, pid, top=25):
    """The `top` entries by self time of one process in `data`, in percent
    of that process's samples: the full text (with call chains) is saved
    beside it, the flat lines returned. (The default sort, with the
    thread's name: `--sort dso,sym --pid` gave wrong shares in perf 6.1,
    and `--percent-limit` with `--percentage relative` dropped every line.)"""
    base = ["perf", "report", "-i", str(data), "--stdio", "--no-children",
            "--percentage", "relative", "--pid", str(pid)]
    full = subprocess.run(base, capture_output=True, text=True, timeout=600).stdout
    Path(f"{data}.pid{pid}.txt").write_text(full)
    flat = subprocess.run(base + ["-g", "none"],
                          capture_output=True, text=True, timeout=600).stdout
    lines = [x for x in flat.splitlines() if x.strip() and not x.startswith("#")]
    return lines[:top]
