#!/usr/bin/env python3
"""Fails when the SDK's targets use a Swift standard-library or Foundation API that Apple ships only
above the package's floors (iOS 17, macOS 14, tvOS 17, watchOS 10, visionOS 1).

Linux has no availability checking, so such a call compiles here and breaks every Apple build (the
SDK once shipped `String(validating:as:)`, which needs iOS 18). This is a list, not a compiler: it
knows the APIs below, each with the first OS that has it, and nothing else; docs/SDK.md ("Apple
platforms") says what only an Apple build can check. Comments are skipped; a line behind an
`if #available` check that says so with a `// floors: guarded` comment is allowed.
"""
import pathlib
import re
import sys

SDK_TARGETS = ["Sources/CofferFormat", "Sources/Coffer"]

# pattern, what it is, the first releases that have it
ABOVE_FLOORS = [
    (r"\bString\s*\(\s*validating\s*:", "String(validating:as:)", "iOS 18, macOS 15"),
    (r"^\s*(?:@\w+\s+)*import\s+Synchronization\b", "the Synchronization module (Mutex, Atomic)", "iOS 18, macOS 15"),
    (r"\bMutex\s*<", "Mutex", "iOS 18, macOS 15"),
    (r"\bAtomic\s*<", "Atomic", "iOS 18, macOS 15"),
    (r"\bU?Int128\b", "Int128 / UInt128", "iOS 18, macOS 15"),
    (r"\bRangeSet\b|\.indices\s*\(\s*where\s*:|\.removeSubranges\s*\(|\.moveSubranges\s*\(", "RangeSet and its collection methods", "iOS 18, macOS 15"),
    (r"\b(?:Mutable|Raw|Output|UTF8)?Span\b|\bInlineArray\b|\.span\b", "Span and InlineArray", "iOS 26, macOS 26"),
    (r"\bTask\s*\.\s*immediate\b|\bTask\s*\(\s*name\s*:|withTaskPriorityEscalationHandler", "Task.immediate, named tasks, priority escalation", "iOS 26, macOS 26"),
]


def code_lines(text):
    """The file's lines with `//` comments removed (a `//` inside a string literal is rare here)."""
    for number, line in enumerate(text.splitlines(), 1):
        if "floors: guarded" not in line:
            yield number, re.sub(r"//.*", "", line)


def main() -> int:
    root = pathlib.Path(__file__).resolve().parent.parent
    rules = [(re.compile(pattern), what, since) for pattern, what, since in ABOVE_FLOORS]
    problems = []
    files = 0
    for target in SDK_TARGETS:
        for file in sorted((root / target).rglob("*.swift")):
            files += 1
            for number, line in code_lines(file.read_text(encoding="utf-8")):
                for rule, what, since in rules:
                    if rule.search(line):
                        problems.append(f"{file.relative_to(root)}:{number}: {what} needs {since}, above the SDK's floors "
                                        "(iOS 17, macOS 14): use another way, or guard it with if #available")
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        return 1
    print(f"apple floors: none of {len(ABOVE_FLOORS)} known newer APIs in the SDK's {files} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
