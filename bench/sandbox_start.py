#!/usr/bin/env python3
"""Start-up cost of `nerdr sandbox -- true` against `true`.

Runs each N times (after a warm-up) in a fresh temporary root (HOME, XDG
config/state/data/runtime dirs, a one-commit git repository as the worktree)
and prints the median, the 10th and 90th percentiles and the ratio. Nothing
outside the temporary root is touched; it is removed at the end. Stdlib only.

    cargo build --release
    python3 bench/sandbox_start.py                 # 50 runs each
    python3 bench/sandbox_start.py --runs 200 --bin target/debug/nerdr
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def timed(cmd, cwd, env, runs):
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        p = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE)
        out.append(time.perf_counter() - t0)
        if p.returncode != 0:
            sys.exit(f"{cmd} failed ({p.returncode}): {p.stderr.decode(errors='replace')}")
    return out


def fresh_root():
    """A temporary root: HOME, XDG dirs and a one-commit repository."""
    root = Path(tempfile.mkdtemp(prefix="nerdr-bench-sandbox."))
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(root / "home"),
        "XDG_CONFIG_HOME": str(root / "config"),
        "XDG_STATE_HOME": str(root / "state"),
        "XDG_DATA_HOME": str(root / "data"),
        "XDG_RUNTIME_DIR": str(root / "run"),
        "LANG": "C.UTF-8",
    }
    for k in ("HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR"):
        Path(env[k]).mkdir(mode=0o700, parents=True)
    repo = root / "home" / "repo"
    repo.mkdir()
    git = ["git", "-c", "user.name=b", "-c", "user.email=b@b", "-c", "init.defaultBranch=main"]
    subprocess.run(git + ["init", "-q"], cwd=repo, check=True, env=env)
    subprocess.run(git + ["commit", "-q", "--allow-empty", "-m", "b"], cwd=repo, check=True, env=env)
    return root, env, repo


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default="target/release/nerdr")
    ap.add_argument("--runs", type=int, default=50)
    a = ap.parse_args()
    nerdr = Path(a.bin).resolve()
    if not nerdr.is_file():
        sys.exit(f"{nerdr} not found: cargo build --release, or pass --bin")
    if not shutil.which("bwrap"):
        sys.exit("bwrap not found: apt-get install bubblewrap")
    true = shutil.which("true")
    root, env, repo = fresh_root()
    try:
        plain = [true]
        sandboxed = [str(nerdr), "sandbox", "--", true]
        timed(plain, repo, env, 3)
        timed(sandboxed, repo, env, 3)
        t_plain = timed(plain, repo, env, a.runs)
        t_sb = timed(sandboxed, repo, env, a.runs)
        m_plain, m_sb = statistics.median(t_plain), statistics.median(t_sb)
        print(f"{a.runs} runs each, {nerdr}")
        for name, ts, m in (("true", t_plain, m_plain), ("nerdr sandbox -- true", t_sb, m_sb)):
            print(f"  {name:<24} median {m * 1000:7.2f} ms   p10 {pct(ts, .1) * 1000:7.2f}   p90 {pct(ts, .9) * 1000:7.2f}")
        print(f"  ratio {m_sb / m_plain:.1f}x, added {1000 * (m_sb - m_plain):.2f} ms")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
