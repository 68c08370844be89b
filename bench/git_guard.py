#!/usr/bin/env python3
"""The host git guard's per-invocation cost: `nerdr git check` against a bare
`git config --list`, median over N runs, on a repository with a realistic
configuration (a global config with aliases, helpers, includeIf and Git LFS
installed; a repository with remotes, branches, LFS-tracked files and a few
hundred files).

Measured, each N times after a warm-up:
  git config        `git config --list --show-origin --show-scope -z`: the
                    floor, what any guard must at least read;
  nerdr start       `nerdr --version`: the process start the guard does not
                    pay inside the core (it runs in-process there);
  check, clean      `nerdr git check` in a repository without sandbox history
                    (one rev-parse and the history file: the common case);
  check, history    the same repository with sandbox history, `--op diff`
                    (rev-parse, config, and, since LFS is installed and
                    assigned, the attribute files);
  check, history,   `--op fetch`: refused, after the same reads.
  refused

`--bin OLD --bin NEW` measures both binaries in one run against the same
bare git (before and after a change).

Everything runs under a temporary root (HOME, XDG dirs); the sandbox history
is written as the core would write it after a sandboxed agent ran in the
repository's worktree. Stdlib only; starts no long-lived process.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GLOBAL = """[user]
	name = A Person
	email = a@example.com
[core]
	editor = vim
	pager = less -FRX
	excludesFile = ~/.config/git/ignore
	autocrlf = input
[alias]
	st = status -sb
	co = checkout
	lg = log --graph --oneline --decorate
	amend = commit --amend --no-edit
[credential]
	helper = cache --timeout=3600
[credential "https://example.com"]
	username = person
[diff]
	algorithm = histogram
	colorMoved = default
[merge]
	conflictStyle = zdiff3
[pull]
	rebase = true
[push]
	autoSetupRemote = true
[init]
	defaultBranch = main
[rerere]
	enabled = true
[includeIf "gitdir:~/work/"]
	path = ~/.config/git/work.inc
[filter "lfs"]
	clean = git-lfs clean -- %f
	smudge = git-lfs smudge -- %f
	process = git-lfs filter-process
	required = true
"""

WORK_INC = """[user]
	email = a@work.example.com
[commit]
	gpgSign = false
"""


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, **kw)


def timed(cmd, n, env, cwd):
    for _ in range(3):
        subprocess.run(cmd, env=env, cwd=cwd, capture_output=True)
    times = []
    for _ in range(n):
        t = time.perf_counter()
        subprocess.run(cmd, env=env, cwd=cwd, capture_output=True)
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", action="append",
                    help="the nerdr binary; give it twice (before, after) to compare them in one run "
                         "(default: target/release/nerdr)")
    ap.add_argument("-n", type=int, default=100)
    a = ap.parse_args()
    bins = [os.path.abspath(b) for b in (a.bin or [str(Path(__file__).resolve().parent.parent / "target/release/nerdr")])]
    for b in bins:
        if not os.access(b, os.X_OK):
            sys.exit(f"{b} is not an executable: `cargo build --release`, or pass --bin")
    root = Path(tempfile.mkdtemp(prefix="nerdr-gitbench-"))
    try:
        home = root / "home"
        (home / ".config/git").mkdir(parents=True)
        (home / ".gitconfig").write_text(GLOBAL)
        (home / ".config/git/work.inc").write_text(WORK_INC)
        env = {
            "HOME": str(home),
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "XDG_STATE_HOME": str(root / "state"),
            "XDG_CONFIG_HOME": str(root / "config"),
            "XDG_DATA_HOME": str(root / "data"),
            "XDG_RUNTIME_DIR": str(root / "run"),
            "LANG": "C",
        }
        repo = home / "work/project"
        repo.mkdir(parents=True)
        genv = dict(env, GIT_CONFIG_GLOBAL="/dev/null")
        run(["git", "init", "-q", "-b", "main"], cwd=repo, env=genv)
        for d in range(20):
            sub = repo / f"src/mod{d}"
            sub.mkdir(parents=True)
            for f in range(15):
                (sub / f"f{f}.rs").write_text(f"// {d} {f}\n" * 20)
        (repo / "assets").mkdir()
        (repo / "assets/.gitattributes").write_text("*.png filter=lfs diff=lfs merge=lfs -text\n")
        (repo / "assets/logo.png").write_text("version https://git-lfs.github.com/spec/v1\n")
        (repo / ".gitattributes").write_text("*.rs text eol=lf\n")
        run(["git", "add", "."], cwd=repo, env=genv)
        run(["git", "-c", "user.name=b", "-c", "user.email=b@e", "commit", "-q", "-m", "init"], cwd=repo, env=genv)
        for name, url in [("origin", "git@example.com:p/project.git"), ("upstream", "https://example.com/u/project.git")]:
            run(["git", "remote", "add", name, url], cwd=repo, env=genv)
        for b in range(10):
            run(["git", "branch", f"feature/{b}"], cwd=repo, env=genv)
            run(["git", "config", f"branch.feature/{b}.remote", "origin"], cwd=repo, env=genv)
        wt = root / "data/nerdr/worktrees/project/abcd1234"
        wt.parent.mkdir(parents=True)
        run(["git", "worktree", "add", "-q", "-b", "nerdr/abcd1234", str(wt)], cwd=repo, env=genv)
        common = (repo / ".git").resolve()
        state = root / "state/nerdr"
        state.mkdir(parents=True)
        config_lines = len(run(["git", "config", "--list"], cwd=repo, env=env).stdout.splitlines())

        n = a.n
        history = json.dumps({
            "version": 1,
            "repos": {str(common): {"since_us": 1, "writable": [str(wt.resolve())], "imports": []}},
            "folders": [],
        })
        hist_file = state / "sandbox-history.json"
        check = lambda b, op: [b, "git", "check", str(repo), "--op", op]
        bare = timed(["git", "config", "--list", "--show-origin", "--show-scope", "-z"], n, env, repo)
        results = []
        for b in bins:
            hist_file.unlink(missing_ok=True)
            start = timed([b, "--version"], n, env, repo)
            clean = timed(check(b, "diff"), n, env, repo)
            hist_file.write_text(history)
            out = subprocess.run(check(b, "diff"), env=env, capture_output=True, text=True)
            refused_diff = out.returncode != 0
            hist = timed(check(b, "diff"), n, env, repo)
            fetch = timed(check(b, "fetch"), n, env, repo)
            results.append((b, start, clean, hist, fetch, refused_diff))

        print(f"repository: {config_lines} config entries, 301 files, LFS installed and assigned; "
              f"median of {n}")
        print(f"load average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
        print(f"  {'git config --list':<48} {bare:8.2f} ms")
        for b, start, clean, hist, fetch, refused_diff in results:
            print(f"binary {b}")
            rows = [
                ("nerdr --version (process start)", start),
                ("nerdr git check, no history", clean),
                (f"nerdr git check, history, diff ({'refused' if refused_diff else 'allowed'})", hist),
                ("nerdr git check, history, fetch (refused)", fetch),
            ]
            for name, ms in rows:
                print(f"  {name:<48} {ms:8.2f} ms  {ms / bare:6.2f}x git config")
            print(f"  guard cost in the core (check minus process start): "
                  f"no history {clean - start:.2f} ms, history {hist - start:.2f} ms")
        if len(results) > 1:
            (b0, _, c0, h0, f0, _), (b1, _, c1, h1, f1, _) = results[0], results[-1]
            print(f"after/before: no history {c1 / c0:.2f}x, history diff {h1 / h0:.2f}x, "
                  f"history fetch {f1 / f0:.2f}x")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
