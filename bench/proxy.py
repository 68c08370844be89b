#!/usr/bin/env python3
"""Download throughput through nerdr's filtering proxy against a direct download.

One run, all on loopback: a local HTTP server (python3 -m http.server) serves
a file of --mb MB; curl downloads it directly, then through `nerdr
proxy-serve` as an absolute-URI HTTP request, as a CONNECT tunnel and as a
SOCKS5 CONNECT. Each way is timed --runs times; the best and median MB/s are
printed with the ratio of each proxied median to the direct median.

Everything lives in a temporary directory; only the processes this script
started are ended, by PID. Stdlib only; needs curl.
"""

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MB = 1_000_000
ROOT = Path(__file__).resolve().parent.parent


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, timeout=10):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.02)
    sys.exit(f"nothing listens on 127.0.0.1:{port} after {timeout}s")


def curl(url, extra, timeout):
    out = subprocess.run(
        ["curl", "-sS", "-o", "/dev/null", "--max-time", str(timeout),
         "-w", "%{http_code} %{size_download} %{time_total}", *extra, url],
        capture_output=True, text=True, check=False)
    fields = out.stdout.split()
    if out.returncode != 0 or len(fields) != 3 or fields[0] != "200":
        sys.exit(f"curl {' '.join(extra)} {url} failed: {out.stdout!r} {out.stderr!r}")
    return int(fields[1]), float(fields[2])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=500, help="file size in MB (default 500)")
    ap.add_argument("--runs", type=int, default=5, help="downloads per way (default 5)")
    ap.add_argument("--bin", help="nerdr binary (default target/release/nerdr, else target/debug/nerdr)")
    ap.add_argument("--timeout", type=int, default=300)
    a = ap.parse_args()
    binary = a.bin or next((str(p) for p in (ROOT / "target/release/nerdr", ROOT / "target/debug/nerdr") if p.exists()), None)
    if not binary or not shutil.which("curl"):
        sys.exit("needs curl and a built nerdr (cargo build --release)")

    tmp = Path(tempfile.mkdtemp(prefix="nerdr-bench-proxy-"))
    procs = []
    try:
        data = tmp / "blob"
        with open(data, "wb") as f:
            chunk = os.urandom(MB)
            for _ in range(a.mb):
                f.write(chunk)
        port = free_port()
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "http.server", "--bind", "127.0.0.1", "--directory", str(tmp), str(port)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        wait_port(port)
        network = tmp / "network.json"
        network.write_text(json.dumps({"allowedDomains": [f"127.0.0.1:{port}"], "allowLocalBinding": False}))
        proxy = subprocess.Popen([binary, "proxy-serve", "--tcp", "127.0.0.1:0", "--network", str(network)],
                                 stdout=subprocess.PIPE, text=True)
        procs.append(proxy)
        first = proxy.stdout.readline().strip()
        if not first.startswith("listening on tcp "):
            sys.exit(f"proxy-serve said {first!r}")
        paddr = first.removeprefix("listening on tcp ")

        url = f"http://127.0.0.1:{port}/blob"
        ways = [
            ("direct", []),
            ("proxy: absolute-URI HTTP", ["-x", f"http://{paddr}"]),
            ("proxy: CONNECT tunnel", ["-x", f"http://{paddr}", "--proxytunnel"]),
            ("proxy: SOCKS5", ["-x", f"socks5://{paddr}"]),
        ]
        print(f"nerdr {binary}; {a.mb} MB file, {a.runs} runs per way; load average {os.getloadavg()[0]:.2f}, {os.cpu_count()} CPUs")
        results = {}
        for name, extra in ways:
            speeds = []
            for _ in range(a.runs):
                size, secs = curl(url, extra, a.timeout)
                if size != a.mb * MB:
                    sys.exit(f"{name}: got {size} bytes, want {a.mb * MB}")
                speeds.append(size / MB / secs)
            results[name] = speeds
        direct = statistics.median(results["direct"])
        print(f"{'way':28} {'best MB/s':>10} {'median MB/s':>12} {'median / direct':>16}")
        for name, speeds in results.items():
            med = statistics.median(speeds)
            print(f"{name:28} {max(speeds):10.0f} {med:12.0f} {med / direct:15.2f}x")
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
