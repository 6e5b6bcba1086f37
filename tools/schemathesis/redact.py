"""Copies stdin to stdout with the owner's token (COFFER_SCHEMATHESIS_TOKEN) replaced by [token].

schemathesis already masks Authorization headers in what it prints; this is the second lock, for
anything that quotes the token elsewhere (a response body, a curl line).
"""
import os
import sys

token = os.environ.get("COFFER_SCHEMATHESIS_TOKEN", "")
for line in sys.stdin:
    if token:
        line = line.replace(token, "[token]")
    sys.stdout.write(line)
    sys.stdout.flush()
