#!/usr/bin/env python3
"""A delaying relay for ssh's ProxyCommand: `delay_relay.py --delay-ms 20 HOST PORT`
connects to HOST:PORT and passes bytes both ways between it and its own
stdin/stdout, each chunk held DELAY ms from the moment it was read.

It stands in for a link with latency where `tc netem` is not available (this
kernel has none): a delay line, not a throttle, so a chunk read while others
wait is held its own DELAY and no more, and the bytes keep their order.
Each direction is a reader thread (timestamps each chunk, queues it) and a
writer (sleeps until the chunk is due, writes it). Stdlib only.
"""

import argparse
import os
import queue
import socket
import sys
import threading
import time

CHUNK = 64 << 10


def delay_line(read, write, end, delay):
    """Copy read() to write() until read() returns b"", each chunk `delay`
    seconds after it was read; then end()."""
    q = queue.Queue()

    def reader():
        while True:
            try:
                data = read()
            except OSError:
                data = b""
            q.put((time.monotonic() + delay, data))
            if not data:
                return

    threading.Thread(target=reader, daemon=True).start()
    while True:
        due, data = q.get()
        wait = due - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        if not data:
            end()
            return
        try:
            write(data)
        except OSError:
            end()
            return


def write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--delay-ms", type=float, default=20.0)
    ap.add_argument("host")
    ap.add_argument("port", type=int)
    args = ap.parse_args()
    delay = args.delay_ms / 1000
    sock = socket.create_connection((args.host, args.port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def up_end():
        try:
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    up = threading.Thread(
        target=delay_line,
        args=(lambda: os.read(0, CHUNK), sock.sendall, up_end, delay),
        daemon=True)
    up.start()
    # Down, on this thread: when the server's side ends, so does the relay.
    delay_line(lambda: sock.recv(CHUNK), lambda d: write_all(1, d), lambda: None, delay)
    sys.exit(0)


if __name__ == "__main__":
    main()
