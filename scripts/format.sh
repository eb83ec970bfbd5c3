#!/usr/bin/env bash
# scripts/format.sh — swift-format with the committed .swift-format.
#
#   bash scripts/format.sh --check     # lint Sources/ and Tests/; exits 1 on a rule finding
#   bash scripts/format.sh FILE...     # reformat these files in place
#
# The check enforces swift-format's rules (doc comments with ///, no block comments,
# file-scoped `private`, spacing, trailing whitespace, ...). It leaves out the pretty-printer's
# layout findings (Indentation, AddLines, RemoveLine, LineLength, TrailingComma): the tree
# hugs a call's parentheses around its last argument (`append(Request(\n    a: 1))`), which
# swift-format cannot be configured to accept, and reformatting every file at once would
# collide with every branch in flight. Reformat a file you rewrite anyway, not the tree.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [[ "${1:-}" != "--check" ]]; then
    [[ $# -gt 0 ]] || { echo "usage: scripts/format.sh --check | FILE..." >&2; exit 2; }
    exec swift format format --in-place --configuration .swift-format "$@"
fi
layout='\[(Indentation|AddLines|RemoveLine|LineLength|TrailingComma)\]'
findings=$(swift format lint --recursive --parallel --configuration .swift-format Sources Tests 2>&1 \
    | grep -Ev "$layout" || true)
if [[ -n "$findings" ]]; then
    printf '%s\n' "$findings"
    echo "format.sh: $(printf '%s\n' "$findings" | wc -l) swift-format finding(s)" >&2
    exit 1
fi
echo "format.sh: no swift-format rule findings"
