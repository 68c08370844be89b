#!/usr/bin/env python3
"""nerdr's own sandbox in one run: start-up and download throughput.

1. Start-up: `nerdr sandbox -- true` against `true` (median of --runs).
2. Throughput: curl downloads a --mb MB file from a loopback HTTP server
   directly, and from inside `nerdr sandbox` where the only way out is the
   bridge to nerdr's filtering proxy (the server allowed by its IP entry in
   a --settings file). Median MB/s of each and the ratio.

Everything lives in a temporary root (HOME, XDG dirs, a one-commit git
repository as the worktree); only processes this script started are ended,
by PID. Stdlib only; needs bwrap and curl.

    cargo build --release
    python3 bench/sandbox.py                      # 30 start-ups, 5 x 200 MB
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from proxy import free_port, wait_port  # noqa: E402
from sandbox_start import fresh_root, pct, timed  # noqa: E402

MB = 1_000_000
ROOT = Path(__file__).resolve().parent.parent


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", help="nerdr binary (default target/release/nerdr, else target/debug/nerdr)")
    ap.add_argument("--runs", type=int, default=30, help="start-ups each (default 30)")
    ap.add_argument("--mb", type=int, default=200, help="download size in MB (default 200)")
    ap.add_argument("--downloads", type=int, default=5, help="downloads each (default 5)")
    a = ap.parse_args()
    nerdr = Path(a.bin) if a.bin else ROOT / "target/release/nerdr"
    if not a.bin and not nerdr.is_file():
        nerdr = ROOT / "target/debug/nerdr"
    nerdr = nerdr.resolve()
    for need in ("bwrap", "curl"):
        if not shutil.which(need):
            sys.exit(f"{need} not found (apt-get install bubblewrap curl)")
    if not nerdr.is_file():
        sys.exit(f"{nerdr} not found: cargo build --release, or pass --bin")

    root, env, repo = fresh_root()
    server = None
    try:
        # 1. Start-up.
        true = shutil.which("true")
        plain, boxed = [true], [str(nerdr), "sandbox", "--", true]
        timed(plain, repo, env, 3)
        timed(boxed, repo, env, 3)
        t_plain, t_box = timed(plain, repo, env, a.runs), timed(boxed, repo, env, a.runs)
        m_plain, m_box = statistics.median(t_plain), statistics.median(t_box)
        print(f"{nerdr}")
        print(f"start-up, {a.runs} runs each")
        for name, ts, m in (("true", t_plain, m_plain), ("nerdr sandbox -- true", t_box, m_box)):
            print(f"  {name:<24} median {m * 1000:7.2f} ms   p10 {pct(ts, .1) * 1000:7.2f}   p90 {pct(ts, .9) * 1000:7.2f}")
        print(f"  ratio {m_box / m_plain:.1f}x, added {1000 * (m_box - m_plain):.2f} ms")

        # 2. Throughput.
        www = root / "www"
        www.mkdir()
        with open(www / "blob", "wb") as f:
            f.truncate(a.mb * MB)
        port = free_port()
        server = subprocess.Popen(
            [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "-d", str(www)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_port(port)
        settings = root / "settings.json"
        settings.write_text(json.dumps({"sandbox": {"network": {"allowedDomains": [f"127.0.0.1:{port}"]}}}))
        url = f"http://127.0.0.1:{port}/blob"
        fetch = ["curl", "-s", "-o", "/dev/null", "-w", "%{size_download} %{time_total}", url]
        ways = {
            "direct": fetch,
            "inside nerdr sandbox": [str(nerdr), "sandbox", "--settings", str(settings), "--"] + fetch,
        }
        print(f"download of {a.mb} MB over loopback, {a.downloads} each")
        medians = {}
        for name, cmd in ways.items():
            rates = []
            for _ in range(a.downloads):
                out = subprocess.run(cmd, cwd=repo, env=env, capture_output=True, text=True, timeout=600)
                size, secs = out.stdout.split()
                if int(size) != a.mb * MB:
                    sys.exit(f"{name}: got {size} bytes: {out.stderr}")
                rates.append(int(size) / MB / float(secs))
            medians[name] = statistics.median(rates)
            print(f"  {name:<24} median {medians[name]:8.0f} MB/s   best {max(rates):8.0f}")
        print(f"  ratio {medians['inside nerdr sandbox'] / medians['direct']:.2f}x of direct")
    finally:
        if server:
            server.terminate()
            server.wait()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
