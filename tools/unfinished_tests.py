#!/usr/bin/env python3
"""Names the Swift Testing tests a log shows started and never ended: what a hung `swift test` was
running when `.ci/run`'s timeout stopped it. Usage: unfinished_tests.py LOG"""
import re
import sys

STARTED = re.compile(r"^\S+ Test (.*) started\.$")
ENDED = re.compile(r"^\S+ Test (.*?) (?:with \d+ test cases? )?(?:passed|failed|skipped)\b")


def unfinished(lines):
    """The started tests without an end, in the order they started."""
    running = {}
    for line in lines:
        line = line.rstrip("\n")
        if match := STARTED.match(line):
            running[match.group(1)] = True
        elif match := ENDED.match(line):
            running.pop(match.group(1), None)
    return list(running)


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8", errors="replace") as log:
        names = unfinished(log)
    for name in names:
        print(f"unfinished: Test {name}")
