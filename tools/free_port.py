#!/usr/bin/env python3
"""Prints a loopback TCP port nothing listens on, for a server a script is about to start.

    python3 tools/free_port.py [USED_FILE]

The port is below the kernel's ephemeral range (net.ipv4.ip_local_port_range), so no outgoing
connection and no bind to port 0 takes it between this pick and the server's bind (a port found by
binding to 0 is in that range: CI's benchmark smoke run once failed on "Address already in use"). With USED_FILE, a port listed there is never printed, and the printed one is added:
a script picking several ports gets different ones.
"""
import random
import socket
import sys

used_file = sys.argv[1] if len(sys.argv) > 1 else None
used = set()
if used_file:
    try:
        with open(used_file) as f:
            used = set(f.read().split())
    except FileNotFoundError:
        pass
with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
    low = int(f.read().split()[0])
for _ in range(1000):
    port = random.randrange(10000, max(low, 10001))
    if str(port) in used:
        continue
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port))
    except OSError:
        continue
    finally:
        s.close()
    if used_file:
        with open(used_file, "a") as f:
            f.write(f"{port}\n")
    print(port)
    sys.exit(0)
sys.exit("free_port: no free loopback port below the ephemeral range")
