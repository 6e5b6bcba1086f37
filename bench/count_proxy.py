#!/usr/bin/env python3
"""A TCP proxy that counts every byte it carries, both ways, for bench/delta.sh.

    count_proxy.py LISTEN_PORT UPSTREAM_PORT STATUS_FILE

Listens on 127.0.0.1:LISTEN_PORT and relays each connection to 127.0.0.1:UPSTREAM_PORT. STATUS_FILE
always holds one line, "accepted closed up down": connections accepted and finished so far, and the
payload bytes (TCP payload, no headers) carried client to server and server to client. It is
rewritten (atomically) at every accept and every close, so a reader that sees accepted == closed
after a client exited has every byte of it. Counts only grow: a measurement is the difference of
two readings.

Bytes move with splice(2) through a pipe, never through Python buffers, so the proxy adds little
time to what it measures (a recv/sendall loop is used where splice is missing).
"""
import os
import socket
import sys
import threading

PIECE = 1 << 20


class Totals:
    def __init__(self, path):
        self.path = path
        self.lock = threading.Lock()
        self.accepted = self.closed = self.up = self.down = 0
        self.write()

    def write(self):  # under self.lock, or before any thread starts
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            f.write(f"{self.accepted} {self.closed} {self.up} {self.down}\n")
        os.replace(tmp, self.path)

    def change(self, accepted=0, closed=0, up=0, down=0):
        with self.lock:
            self.accepted += accepted
            self.closed += closed
            self.up += up
            self.down += down
            if accepted or closed:
                self.write()


def pump(src, dst, count):
    """Moves src's bytes to dst until src ends or either fails; count(n) for each piece; half-closes dst."""
    try:
        if hasattr(os, "splice"):
            r, w = os.pipe()
            try:
                while True:
                    n = os.splice(src.fileno(), w, PIECE)
                    if n == 0:
                        break
                    count(n)
                    while n:
                        n -= os.splice(r, dst.fileno(), n)
            finally:
                os.close(r)
                os.close(w)
        else:
            buf = bytearray(PIECE)
            while n := src.recv_into(buf):
                count(n)
                dst.sendall(memoryview(buf)[:n])
    except OSError:
        pass
    try:
        dst.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def relay(client, upstream_port, totals):
    up = down = 0

    def add_up(n):
        nonlocal up
        up += n

    def add_down(n):
        nonlocal down
        down += n

    try:
        server = socket.create_connection(("127.0.0.1", upstream_port))
    except OSError:
        client.close()
        totals.change(closed=1)
        return
    for s in (client, server):
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    back = threading.Thread(target=pump, args=(server, client, add_down), daemon=True)
    back.start()
    pump(client, server, add_up)
    # The client has finished sending (or gone): the server closes once it has answered; if it
    # keeps the connection open, stop waiting after a few seconds.
    back.join(5)
    if back.is_alive():
        for s in (client, server):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        back.join()
    client.close()
    server.close()
    totals.change(closed=1, up=up, down=down)


def main():
    listen_port, upstream_port, status = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    totals = Totals(status)
    listener = socket.create_server(("127.0.0.1", listen_port), backlog=128)
    while True:
        client, _ = listener.accept()
        totals.change(accepted=1)
        threading.Thread(target=relay, args=(client, upstream_port, totals), daemon=True).start()


if __name__ == "__main__":
    main()
