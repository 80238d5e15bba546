#!/usr/bin/env python3
"""The sources clang-tidy has to look at again after a change (.ci/run).

Usage: tidy-sources.py BUILD_DIR < candidates-and-changed
stdin: first the candidate sources (repo-relative .cpp, one per line), then a line `--`, then
the files the change touched. Prints the candidates the change touched and those whose compile
read a touched header, as ninja recorded it (`ninja -t deps`): a header change re-tidies only
the sources that include it, not its whole layer.
"""
import os
import subprocess
import sys


def main() -> int:
    build = sys.argv[1]
    lines = sys.stdin.read().splitlines()
    split = lines.index("--")
    candidates = set(lines[:split])
    changed = set(lines[split + 1:])
    headers = {f for f in changed if f.endswith(".h")}
    root = os.path.realpath(os.path.join(build, ".."))
    out = subprocess.run(["ninja", "-C", build, "-t", "deps"], check=True, capture_output=True, text=True).stdout
    picked = {c for c in candidates if c in changed}
    source, deps = None, []

    def flush() -> None:
        if source in candidates and any(d in headers for d in deps):
            picked.add(source)

    for line in out.splitlines():
        if line and not line[0].isspace():  # "obj.o: #deps N, …": a new compile
            flush()
            source, deps = None, []
        elif line.strip():
            dep = os.path.relpath(os.path.realpath(os.path.join(build, line.strip())), root)
            if source is None and dep.endswith(".cpp"):
                source = dep
            deps.append(dep)
    flush()
    for s in sorted(picked):
        print(s)
    return 0


if __name__ == "__main__":
    sys.exit(main())
