#!/usr/bin/env bash
# scripts/size-check.sh — no Swift file in Sources/ over 400 lines, no function over 80.
#
#   bash scripts/size-check.sh            # exits 1 and names each new offender
#
# A function is counted from its `func`/`init` line to its closing brace. There are no
# exceptions: the old offenders were split (issue 24), and a file or function over a limit is
# split too, into pieces that each do one job.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
exec python3 - "$@" <<'PY'
import os, re, sys

MAX_FILE, MAX_FUNC = 400, 80
decl = re.compile(r"^\s*(?:@[\w.]+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|private|fileprivate|static|final|"
                  r"mutating|nonisolated|override|convenience|required|class)\s+)*(?:func\s+(`?\w+`?|[^\s(]+)|init[?!]?)\s*[(<]")

def code(line):
    line = re.sub(r'"(?:[^"\\]|\\.)*"', '""', line)
    return line.split("//", 1)[0]

found = set()
for root, _, names in os.walk("Sources"):
    for name in sorted(names):
        if not name.endswith(".swift"):
            continue
        path = os.path.join(root, name)
        lines = open(path, encoding="utf-8").read().split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        if len(lines) > MAX_FILE:
            found.add((path, None, len(lines)))
        i = 0
        while i < len(lines):
            m = decl.match(lines[i])
            if not m:
                i += 1
                continue
            fname = m.group(1) or "init"
            depth, started, j = 0, False, i
            while j < len(lines):
                for ch in code(lines[j]):
                    if ch == "{":
                        depth += 1
                        started = True
                    elif ch == "}":
                        depth -= 1
                if started and depth <= 0:
                    break
                if not started and j > i and lines[j].strip() == "":
                    break  # a requirement without a body
                j += 1
            length = j - i + 1
            if started and length > MAX_FUNC:
                found.add((path, fname, length))
            i += 1

for path, fname, length in sorted(found, key=lambda f: (f[0], f[1] or "")):
    key = path if fname is None else f"{path}:{fname}"
    limit = MAX_FILE if fname is None else MAX_FUNC
    what = "file" if fname is None else f"function {fname}"
    print(f"size-check: {key}: {what} has {length} lines (at most {limit})", file=sys.stderr)
sys.exit(1 if found else 0)
PY
