#!/usr/bin/env python3
"""Fails when a Swift file imports a module its target does not declare in Package.swift, or a target
declares a product none of its files imports.

SwiftPM's `--explicit-target-dependency-import-check=error` (which CI also runs) checks imports of the
package's own targets only; an import of a module from another package (SQLKit, NIOCore, ...) that happens
to be built anyway passes it. This script checks both, from `swift package dump-package` and the sources.
Module names of products are their product names in every package Coffer uses.
"""
import json
import pathlib
import re
import subprocess
import sys

# Modules of the toolchain and the operating systems: never declared.
SYSTEM = {
    "Foundation", "FoundationNetworking", "FoundationEssentials", "Dispatch", "Darwin", "Glibc", "Musl",
    "XCTest", "Testing", "Security", "DeviceCheck", "os", "Synchronization", "_Concurrency", "Swift",
    "CryptoKit", "CoreML", "UIKit",
}
IMPORT = re.compile(r"^\s*(?:@[A-Za-z_]+(?:\([^)]*\))?\s+)*import\s+(?:(?:struct|class|enum|protocol|func|var|let|typealias)\s+)?([A-Za-z_][A-Za-z_0-9]*)", re.M)


def main() -> int:
    root = pathlib.Path(__file__).resolve().parent.parent
    package = json.loads(subprocess.run(["swift", "package", "dump-package"], cwd=root, check=True,
                                        capture_output=True, text=True).stdout)
    targets = {target["name"]: target for target in package["targets"]}
    problems = []
    for name, target in targets.items():
        declared, products = set(), set()
        for dependency in target["dependencies"]:
            kind, value = next(iter(dependency.items()))
            module = value[0].replace("-", "_")
            declared.add(module)
            if kind == "product":
                products.add(module)
        default = ("Tests/" if target["type"] == "test" else "Sources/") + name
        folder = root / (target.get("path") or default)
        imported = set()
        for file in sorted(folder.rglob("*.swift")):
            for module in sorted(set(IMPORT.findall(file.read_text(encoding="utf-8")))):
                imported.add(module)
                if module in SYSTEM or module in declared or module == name.replace("-", "_"):
                    continue
                problems.append(f"{file.relative_to(root)}: imports {module}, which target {name} does not declare")
        # A product nobody imports only lengthens every build (and an app's graph, for the SDK's targets).
        for module in sorted(products - imported):
            problems.append(f"Package.swift: target {name} declares {module}, which none of its files imports")
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        return 1
    print(f"imports: every module imported by the {len(targets)} targets is declared in Package.swift")
    return 0


if __name__ == "__main__":
    sys.exit(main())
