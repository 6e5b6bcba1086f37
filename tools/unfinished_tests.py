#!/usr/bin/env python3
"""Names the Swift Testing tests a log shows started and never ended: what a hung `swift test` was
running when `.ci/run`'s timeout stopped it. Usage: unfinished_tests.py LOG [MOST]. Prints at most
MOST names (default 40) and always exits 0: it only explains, the log's own checks judge."""
import re
import sys

STARTED = re.compile(r"^\S+ Test (.*) started\.$")
# A name may itself hold "passed" or "failed": the end is the last "passed/failed after N seconds".
ENDED = re.compile(r"^\S+ Test (.*) (?:passed|failed) after [\d.]+ seconds")
CASES = re.compile(r" with \d+ test cases?$")
SKIPPED = re.compile(r"^\S+ Test (.*) skipped")


def unfinished(lines):
    """The started tests without an end, in the order they started."""
    running = {}
    for line in lines:
        line = line.rstrip("\n")
        if match := STARTED.match(line):
            # "Test run" and a parametrized test's cases (only the test as a whole reports its end).
            if match.group(1) != "run" and not match.group(1).startswith("case passing "):
                running[match.group(1)] = True
        elif match := ENDED.match(line) or SKIPPED.match(line):
            running.pop(CASES.sub("", match.group(1)), None)
    return list(running)


if __name__ == "__main__":
    most = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    with open(sys.argv[1], encoding="utf-8", errors="replace") as log:
        names = unfinished(log)
    for name in names[:most]:
        print(f"unfinished: Test {name}")
    if len(names) > most:
        print(f"unfinished: {len(names) - most} more")
