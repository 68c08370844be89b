#!/usr/bin/env python3
"""A session on another machine over SSH: `ssh -t HOST tmux attach` against
nerdr's window over `--host`, on the local SSH link and through a relay that
delays every chunk (issue 22's acceptance 6).

Everything runs as the test user in a private `systemd --user` session
(`bench/sysenv.py`, as the tests do; needs root), with a real OpenSSH server
of that user's own on 127.0.0.1 (key authentication, its own config, host key
and authorized keys under the session's HOME, as `tests/support/sshd.rs`).
The ssh client reads a config of the bench's own: `ssh` first on PATH is a
wrapper adding `-F` (ssh finds `~/.ssh` from the passwd entry, not HOME, so
the real one would be read otherwise), and nerdr's `--host` runs the same
`ssh` from PATH. Two hosts in it:

  direct    127.0.0.1, directly;
  delayed   the same sshd through `ProxyCommand delay_relay.py --delay-ms D`,
            each chunk held D ms (20) in each direction: latency where
            `tc netem` is not in the kernel.

For each link, the same measurements as `bench/attach.py` (its functions):
stream throughput (`cat FILE; printf MARKER` until the marker shows in the
window) and keystroke echo p50/p99 into bash's readline, behind a 40x120 PTY
read as the person's terminal. tmux: a private server of the user's, the
window `ssh -t HOST tmux -S SOCK attach`. nerdr: a bash tab started with
`nerdr --host HOST agent sh`, the window `nerdr --host HOST` (drawn here,
only the client protocol crossing ssh to `nerdr bridge` there).

Stdlib only; only processes this script started are ended (the session's
teardown ends the rest, by PID from its cgroup).
"""

import argparse
import grp
import math
import os
import platform
import pwd
import shutil
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from attach import (  # noqa: E402
    MB, PREFIX_DETACH, SHELL, keystroke_latency, make_data, sync_shell, throughput, version)
from sysenv import SystemdUser, SysenvError  # noqa: E402
from window import COLS, ROWS, Failure, Window  # noqa: E402

HERE = Path(__file__).resolve().parent
SSHD = "/usr/sbin/sshd"
LINKS = ("direct", "delayed")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def own_ptys(env):
    """A devpts of the session's own (its mount namespace only) whose
    terminals are group tty, mode 620, as a distribution mounts it: an sshd
    not run as root cannot chown a terminal it allocates for `ssh -t`, and
    stops when the terminal is not already so (a machine whose /dev/pts
    has no gid=5, as some VMs'). The window's own terminal is opened
    outside and passed as a descriptor, so it is not affected."""
    tty = grp.getgrnam("tty").gr_gid
    for argv in (["mount", "-t", "devpts", "-o",
                  f"newinstance,gid={tty},mode=620,ptmxmode=0666", "devpts", "/dev/pts"],
                 ["mount", "--bind", "/dev/pts/ptmx", "/dev/ptmx"]):
        p = subprocess.run(["nsenter", "-t", str(env.pid), "-m", "--", *argv],
                           capture_output=True, text=True)
        if p.returncode != 0:
            raise Failure(f"`{' '.join(argv)}` in the session failed: {p.stderr.strip()}")


class SshSetup:
    """sshd for the session's user, a client config naming both links, and
    the `ssh` wrapper first on PATH."""

    def __init__(self, env, delay_ms):
        self.env = env
        home = env.home
        self.dir = home / "bench-ssh"
        env.run(["mkdir", "-p", "-m", "0700", str(self.dir)])
        host_key, user_key = self.dir / "host_key", self.dir / "id_ed25519"
        for key in (host_key, user_key):
            env.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)])
        rel = lambda p: p.relative_to(home)  # noqa: E731
        authorized = env.write_user_file(rel(self.dir / "authorized_keys"),
                                         (user_key.with_suffix(".pub")).read_text())
        self.port = free_port()
        path = f"{env.bin_dir}:/usr/local/bin:/usr/bin:/bin"
        config = env.write_user_file(rel(self.dir / "sshd_config"), (
            f"Port {self.port}\nListenAddress 127.0.0.1\nHostKey {host_key}\n"
            f"PidFile {self.dir / 'sshd.pid'}\nAuthorizedKeysFile {authorized}\n"
            "PubkeyAuthentication yes\nPasswordAuthentication no\n"
            "KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n"
            f"SetEnv XDG_RUNTIME_DIR={env.runtime} "
            f"DBUS_SESSION_BUS_ADDRESS=unix:path={env.runtime}/bus PATH={path} HOME={home}\n"))
        kind, key = host_key.with_suffix(".pub").read_text().split()[:2]
        known = env.write_user_file(rel(self.dir / "known_hosts"),
                                    f"[127.0.0.1]:{self.port} {kind} {key}\n")
        # The relay where the user's ssh can run it (the session's /tmp is
        # its own; the bin dir is seen from both sides).
        relay = env.bin_dir / "delay_relay.py"
        shutil.copy(HERE / "delay_relay.py", relay)
        os.chmod(relay, 0o755)
        common = (f"  HostName 127.0.0.1\n  Port {self.port}\n  User {pwd.getpwuid(env.uid).pw_name}\n"
                  f"  IdentityFile {user_key}\n  IdentitiesOnly yes\n"
                  f"  UserKnownHostsFile {known}\n  StrictHostKeyChecking yes\n"
                  "  ControlMaster no\n  ControlPath none\n")
        # Through the relay ssh still checks the key under HostName and
        # Port: the one known_hosts line serves both.
        client = env.write_user_file(rel(self.dir / "ssh_config"), (
            f"Host direct\n{common}"
            f"Host delayed\n{common}"
            f"  ProxyCommand python3 {relay} --delay-ms {delay_ms:g} %h %p\n"))
        wrapper = env.bin_dir / "ssh"
        wrapper.write_text(f"#!/bin/sh\nexec /usr/bin/ssh -F {client} \"$@\"\n")
        os.chmod(wrapper, 0o755)
        own_ptys(env)
        self.sshd = subprocess.Popen(
            env.user_argv([SSHD, "-D", "-f", str(config), "-E", str(self.dir / "sshd.log")]),
            cwd=home, env=env.user_env(), stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while True:  # sshd says nothing when it listens: try until it does
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise Failure("sshd did not listen within 20 s: " + self.log())
                time.sleep(0.05)

    def log(self):
        try:
            return (self.dir / "sshd.log").read_text()[-2000:]
        except OSError as e:
            return str(e)

    def stop(self):
        self.sshd.terminate()  # our own child, by PID
        try:
            self.sshd.wait(10)
        except subprocess.TimeoutExpired:
            self.sshd.kill()
            self.sshd.wait()


class TmuxOverSsh:
    """A private tmux server of the user's (on "the other machine", which is
    this one), its window `ssh -t LINK tmux attach`."""

    def __init__(self, env, link):
        self.env, self.link = env, link
        self.name = f"tmux {link}"
        self.sock = str(env.home / "tmux.sock")
        self.tm = ["tmux", "-S", self.sock, "-f", "/dev/null"]

    def start(self):
        env = self.env
        env.run(self.tm + ["new-session", "-d", "-s", "bench", "-x", str(COLS),
                           "-y", str(ROWS - 1)] + SHELL)
        for opt in ("status-left", "status-right"):
            env.run(self.tm + ["set-option", "-g", opt, ""])
        argv = env.user_argv(["ssh", "-t", self.link] + self.tm + ["attach-session", "-t", "bench"])
        self.win = Window(self.name, argv, env.user_env({"TERM": "xterm-256color"}), env.home)
        return self.win

    def stop(self):
        try:
            if getattr(self, "win", None):
                self.win.close(PREFIX_DETACH)
        finally:
            self.env.run(self.tm + ["kill-server"], check=False)


class NerdrOverSsh:
    """nerdr's window over `--host LINK`: the core "there" (this machine's,
    reached through ssh and `nerdr bridge`), a bash tab in it started over
    the same link, and the window drawn here from the protocol."""

    def __init__(self, env, link):
        self.env, self.link = env, link
        self.name = f"nerdr {link}"
        self.tab = None

    def start(self):
        env = self.env
        env.write_user_file(".config/nerdr/config.toml",
                            '[agents.sh]\ncommand = ["bash", "--norc", "--noprofile"]\n')
        self.tab = env.run(["nerdr", "--host", self.link, "agent", "sh"]).strip()
        argv = env.user_argv(["nerdr", "--host", self.link])
        self.win = Window(self.name, argv, env.user_env({"TERM": "xterm-256color"}), env.home)
        return self.win

    def stop(self):
        try:
            if getattr(self, "win", None):
                self.win.close(PREFIX_DETACH)
        finally:
            if self.tab:
                # "There" is this machine: its own nerdr closes the tab.
                self.env.run(["nerdr", "close", self.tab], check=False)


def measure(setup, args, data_file):
    r = {"setup": setup.name}
    try:
        win = setup.start()
        sync_shell(win, args.timeout)
        lat = sorted(keystroke_latency(win, args.keys, args.timeout))
        r["p50"] = statistics.median(lat) * 1000
        r["p99"] = lat[max(0, math.ceil(0.99 * len(lat)) - 1)] * 1000
        before = win.bytes_read
        r["secs"] = throughput(win, data_file, args.timeout)
        r["win_mb"] = (win.bytes_read - before) / MB
        sync_shell(win, 30)
    except (Failure, OSError, subprocess.SubprocessError, SysenvError) as e:
        r["error"] = str(e)
    finally:
        try:
            setup.stop()
        except Exception as e:  # cleanup must not hide the results
            r.setdefault("error", f"cleanup: {e}")
    return r


def measure_nerdr(env, link, args, data_file):
    return measure(NerdrOverSsh(env, link), args, data_file)


def ssh_version():
    try:  # ssh -V writes to stderr
        return subprocess.run(["ssh", "-V"], capture_output=True, text=True,
                              timeout=10).stderr.strip()
    except (OSError, subprocess.SubprocessError) as e:
        return f"ssh unknown ({e})"


def fmt(x, spec):
    return format("-", ">" + spec.split(".")[0]) if x is None else format(x, spec)


def ratio(a, b):
    return "-" if a is None or b is None or b == 0 else f"{a / b:.2f}x"


def report(rows, args, facts):
    print()
    for k, v in facts:
        print(f"{k:<8} {v}")
    print(f"window   {ROWS}x{COLS}; stream {args.mb} MB of 100-byte lines; {args.keys} keys; "
          f"delayed link: each chunk held {args.delay_ms:g} ms each way")
    print()
    hdr = f"{'setup':<16} {'stream s':>9} {'MB/s':>8} {'window MB':>10} {'echo p50':>9} " \
          f"{'echo p99':>9}"
    print(hdr)
    print("-" * len(hdr))
    for r in rows:
        if r is None:
            continue
        secs = r.get("secs")
        print(f"{r['setup']:<16} {fmt(secs, '9.2f')} "
              f"{fmt(args.mb / secs if secs else None, '8.1f')} {fmt(r.get('win_mb'), '10.1f')} "
              f"{fmt(r.get('p50'), '7.2f')}ms {fmt(r.get('p99'), '7.2f')}ms")
    for r in rows:
        if r and "error" in r:
            print(f"\n{r['setup']} FAILED: {r['error']}")
    by = {r["setup"]: r for r in rows if r}
    print(f"\nratios (>1: nerdr slower)  {'stream':>8} {'echo p50':>9} {'echo p99':>9}")
    for link in LINKS:
        a, b = by.get(f"nerdr {link}", {}), by.get(f"tmux {link}", {})
        print(f"{'nerdr / tmux, ' + link:<26} {ratio(a.get('secs'), b.get('secs')):>8} "
              f"{ratio(a.get('p50'), b.get('p50')):>9} {ratio(a.get('p99'), b.get('p99')):>9}")


def main():
    here = HERE.parent
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.environ.get("NERDR_BENCH_BIN",
                                                    str(here / "target/release/nerdr")))
    ap.add_argument("--mb", type=int, default=50, help="MB streamed through each setup")
    ap.add_argument("--keys", type=int, default=100, help="keystroke samples per setup")
    ap.add_argument("--delay-ms", type=float, default=20, help="the relay's hold per chunk")
    ap.add_argument("--timeout", type=float, default=300)
    args = ap.parse_args()
    if not os.access(args.bin, os.X_OK):
        sys.exit(f"no nerdr binary at {args.bin}; run `cargo build --release` or pass --bin PATH")
    for prog in ("tmux", SSHD, "ssh-keygen"):
        if not shutil.which(prog):
            sys.exit(f"{prog} is missing (install tmux, openssh-server and openssh-client)")
    facts = [
        ("machine", f"nproc {os.cpu_count()}, {platform.system()} {platform.release()}, "
                    f"load {os.getloadavg()[0]:.2f} at start"),
        ("versions", f"{version(['tmux', '-V'])}, {version([args.bin, '--version'])}, "
                     f"{ssh_version()}"),
    ]
    rows = []
    try:
        with SystemdUser(args.bin) as env:
            ssh = SshSetup(env, args.delay_ms)
            try:
                data_file = env.home / "data.txt"
                make_data(data_file, args.mb * MB)
                env.chown(data_file)
                for link in LINKS:
                    for name, run in (
                            ("tmux", lambda: measure(TmuxOverSsh(env, link), args, data_file)),
                            ("nerdr", lambda: measure_nerdr(env, link, args, data_file))):
                        print(f"measuring {name} over the {link} link ...", file=sys.stderr,
                              flush=True)
                        t = time.monotonic()
                        r = run()
                        if r and "error" in r:
                            r["error"] += "\nsshd's log (end):\n" + ssh.log()
                        rows.append(r)
                        print(f"  done in {time.monotonic() - t:.1f} s", file=sys.stderr,
                              flush=True)
            finally:
                ssh.stop()
    except (SysenvError, Failure) as e:
        sys.exit(f"cannot set up: {e}")
    facts.append(("load", f"{os.getloadavg()[0]:.2f} at end (1-min average)"))
    report(rows, args, facts)
    return 1 if any(r and "error" in r for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
