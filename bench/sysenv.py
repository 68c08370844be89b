"""A private, real `systemd --user` (its own journald, user D-Bus, fresh HOME,
delegated cgroup) for benches, built on the test harness's
`tests/env/sysenv.sh` and `tests/env/as-user.sh` (see their headers and
`tests/support/sysenv.rs`). Needs root, like the tests that use it; the
commands run as the test user (`nerdrt`, or `$NERDR_TEST_USER`).

    with SystemdUser(nerdr_binary) as env:
        env.run(["nerdr", "service", "install"])
        out = env.run(["nerdr", "tabs"], cwd=env.home / "work")

The nerdr binary is copied to a directory first on the user's PATH.
Leaving the `with` block ends the manager and every process of the user
in the environment (sysenv.sh does that, by PID from the cgroup), then
removes its temporary directory.
"""

import os
import queue
import shutil
import subprocess
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SYSENV_SH = REPO / "tests/env/sysenv.sh"
AS_USER_SH = REPO / "tests/env/as-user.sh"


class SysenvError(Exception):
    pass


class SystemdUser:
    def __init__(self, nerdr_bin, ready_timeout=90):
        if os.geteuid() != 0:
            raise SysenvError("a private systemd --user needs root (as the tests do)")
        for f in ("/lib/systemd/systemd", "/lib/systemd/systemd-journald"):
            if not os.path.exists(f):
                raise SysenvError(f"{f} is missing (install systemd)")
        self.nerdr_bin = str(Path(nerdr_bin).resolve())
        self.ready_timeout = ready_timeout
        self.proc = None

    def __enter__(self):
        user = os.environ.get("NERDR_TEST_USER", "nerdrt")
        self.proc = subprocess.Popen(
            ["unshare", "-m", "--propagation", "private", "/bin/bash", str(SYSENV_SH), user],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.log = []
        threading.Thread(target=self._keep_stderr, daemon=True).start()
        lines = queue.Queue()
        threading.Thread(target=self._pass_stdout, args=(lines,), daemon=True).start()
        end = time.monotonic() + self.ready_timeout
        while True:
            try:
                line = lines.get(timeout=max(0.1, end - time.monotonic()))
            except queue.Empty:
                self.__exit__(None, None, None)
                raise SysenvError("sysenv.sh did not become READY; its stderr:\n"
                                  + "".join(self.log))
            if line.startswith("READY "):
                break
        kv = dict(x.split("=", 1) for x in line.split()[1:])
        self.uid, self.gid = int(kv["uid"]), int(kv["gid"])
        self.home, self.runtime = Path(kv["home"]), Path(kv["runtime"])
        self.cgroup, self.bin_dir = kv["cgroup"], Path(kv["bin"])
        self.pid = int(kv["pid"])
        shutil.copy(self.nerdr_bin, self.bin_dir / "nerdr")
        os.chmod(self.bin_dir / "nerdr", 0o755)
        # The checkout may be where the namespace cannot see it (its /tmp is
        # private): the script that enters it travels with the binary.
        shutil.copy(AS_USER_SH, self.bin_dir / "as-user.sh")
        return self

    def _pass_stdout(self, lines):
        for line in self.proc.stdout:
            lines.put(line)

    def _keep_stderr(self):
        for line in self.proc.stderr:
            self.log.append(line)

    def __exit__(self, *exc):
        if not self.proc:
            return
        try:
            self.proc.stdin.close()  # EOF: sysenv.sh tears everything down
        except OSError:
            pass
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.terminate()  # our own child, by PID
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def user_argv(self, argv):
        """`argv` run as the user inside the environment, in its delegated
        cgroup; the working directory is the caller's (same path inside)."""
        return ["nsenter", "-t", str(self.pid), "-m", "--wd=.", "--", "/bin/bash",
                str(self.bin_dir / "as-user.sh"), self.cgroup, str(self.uid),
                str(self.home), str(self.runtime), "--", *argv]

    def user_env(self, extra=None):
        """The environment to start `user_argv` with: as-user.sh passes all
        of it on (PATH with nerdr first, HOME, XDG_RUNTIME_DIR and the bus
        are its own)."""
        env = {"NERDR_AS_USER_PASS_ENV": "1", "NERDR_TEST_PATH_PREFIX": str(self.bin_dir)}
        env.update(extra or {})
        return env

    def run(self, argv, cwd=None, env=None, timeout=60, check=True):
        """Run as the user; its stdout (raises with stderr if it failed)."""
        p = subprocess.run(self.user_argv(argv), cwd=cwd or self.home,
                           env=self.user_env(env), capture_output=True, text=True,
                           timeout=timeout)
        if check and p.returncode != 0:
            raise SysenvError(f"`{' '.join(argv)}` failed ({p.returncode}): "
                              f"{p.stderr.strip() or p.stdout.strip()}")
        return p.stdout

    def chown(self, path):
        os.chown(path, self.uid, self.gid)

    def write_user_file(self, rel, text):
        """Write HOME/rel (parents made), owned by the user."""
        path = self.home / rel
        d = self.home
        for part in Path(rel).parent.parts:
            d = d / part
            if not d.is_dir():
                d.mkdir()
                self.chown(d)
        path.write_text(text)
        self.chown(path)
        return path
