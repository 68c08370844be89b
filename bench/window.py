"""The person's terminal, stood in for by a PTY this script reads: a program
runs on it at a fixed size; output is drained as fast as it comes and
searched for tokens, whole or with escape sequences stripped. Knows nothing
about tmux or nerdr."""

import errno
import fcntl
import os
import random
import select
import string
import struct
import subprocess
import termios
import time

ROWS, COLS = 40, 120


class Failure(Exception):
    """A measurement that could not finish; the message says what was seen."""


def token(n=12):
    """Uppercase, no letter twice in a row (so no terminal repeat-char tricks)."""
    out = []
    while len(out) < n:
        c = random.choice(string.ascii_uppercase)
        if not out or out[-1] != c:
            out.append(c)
    return "".join(out)


def typed_printf(tok):
    """A command line printing `tok` whose own echo does not contain it."""
    half = len(tok) // 2
    return f"printf '%s%s\\n' {tok[:half]} {tok[half:]}\r".encode()


class Stripper:
    """Printable text of a terminal byte stream, escape sequences removed.
    Keeps its state across reads, so a sequence split over two reads is fine."""

    GROUND, ESC, CSI, INTER, STR, STR_ESC = range(6)

    def __init__(self):
        self.state = self.GROUND

    def feed(self, data):
        out = bytearray()
        s = self.state
        for b in data:
            if s == self.GROUND:
                if b == 0x1B:
                    s = self.ESC
                elif b >= 0x20 and b != 0x7F:
                    out.append(b)
            elif s == self.ESC:
                if b == 0x5B:  # [
                    s = self.CSI
                elif b in (0x5D, 0x50, 0x5F, 0x5E, 0x58):  # ] P _ ^ X: strings
                    s = self.STR
                elif 0x20 <= b <= 0x2F:  # ESC ( B and friends
                    s = self.INTER
                else:
                    s = self.GROUND
            elif s == self.CSI:
                if 0x40 <= b <= 0x7E:
                    s = self.GROUND
            elif s == self.INTER:
                if not 0x20 <= b <= 0x2F:
                    s = self.GROUND
            elif s == self.STR:
                if b == 0x07:
                    s = self.GROUND
                elif b == 0x1B:
                    s = self.STR_ESC
            elif s == self.STR_ESC:
                s = self.GROUND if b == 0x5C else self.STR
        self.state = s
        return bytes(out)


def _take_tty():
    # In the child after setsid: the window PTY becomes its controlling
    # terminal, so it gets SIGWINCH and SIGHUP like under a real terminal.
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class Window:
    """A PTY of ROWS x COLS (or `rows` x `cols`) that this script reads as the person's terminal,
    with `argv` running on it."""

    def __init__(self, name, argv, env, cwd, rows=ROWS, cols=COLS):
        self.name = name
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        self.proc = subprocess.Popen(
            argv, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=cwd,
            start_new_session=True, preexec_fn=_take_tty)
        os.close(slave)
        os.set_blocking(master, False)
        self.fd = master
        self.bytes_read = 0
        self.last = b""  # the latest output, to show when something fails

    def read(self, timeout):
        """Whatever the window emitted, waiting up to `timeout`; b"" if nothing."""
        data = self._read()
        if data is None:
            if not select.select([self.fd], [], [], max(timeout, 0))[0]:
                return b""
            data = self._read()
            if data is None:
                return b""
        if not data:
            raise Failure(f"{self.name}: the window's program exited "
                          f"(status {self.proc.poll()}); last output {self.last[-300:]!r}")
        self.bytes_read += len(data)
        self.last = (self.last + data)[-2000:]
        return data

    def _read(self):
        """One read: the bytes, None if none are ready, b"" at hang-up."""
        try:
            return os.read(self.fd, 1 << 16)
        except BlockingIOError:
            return None
        except OSError as e:
            if e.errno != errno.EIO:  # EIO: the program side closed
                raise
            return b""

    def write(self, data):
        while data:
            try:
                data = data[os.write(self.fd, data):]
            except BlockingIOError:
                select.select([], [self.fd], [], 1.0)

    def settle(self, quiet=0.15, timeout=10.0, sink=None):
        """Drain until the window has been silent for `quiet` seconds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            data = self.read(quiet)
            if not data:
                return
            if sink:
                sink(data)
        raise Failure(f"{self.name}: the window never went quiet within {timeout:.0f} s")

    def expect(self, needle, timeout, what):
        """Drain as fast as possible until `needle` is in the byte stream
        (across read boundaries); return the time it was seen."""
        deadline = time.monotonic() + timeout
        keep = len(needle) - 1
        tail = b""
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Failure(
                    f"{self.name}: {what}: {needle.decode()} not in the window output "
                    f"within {timeout:.0f} s ({self.bytes_read} bytes read); "
                    f"last output {self.last[-300:]!r}")
            data = self.read(min(left, 1.0))
            if data:
                buf = tail + data
                if needle in buf:
                    return time.perf_counter()
                tail = buf[-keep:]

    def close(self, detach_keys=None):
        """Detach (if the client has keys for it), else hang up; kill by PID
        if the client is still there after 5 s."""
        try:
            if detach_keys and self.proc.poll() is None:
                try:
                    self.write(detach_keys)
                except OSError:  # the client is already gone
                    pass
                end = time.monotonic() + 5
                while self.proc.poll() is None and time.monotonic() < end:
                    try:
                        self.read(0.1)
                    except Failure:
                        break
        finally:
            os.close(self.fd)  # hangs up the PTY
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def clear_screen(win):
    """readline's clear-screen (C-l), drained until painted. Clients that
    paint differences skip cells that did not change, so a token is only
    sure to come out whole on rows that were blank (or lowercase) before."""
    win.write(b"\x0c")
    win.settle()
