#!/usr/bin/env bash
# scripts/face-check.sh — what an app that imports R2UpKit sees (issue 25), checked on the
# module just built (run by scripts/test.sh after `swift build`; needs that build):
#  1. R2UpKit's public symbol graph names no type of the layers below it but the model: no
#     R2UpStore, R2UpTransfer, R2UpAudio, SigV4, GRDB or CCurl type in a public declaration.
#  2. Examples/r2up-embed-example type-checks as a program outside this package: compiled
#     without `-package-name`, it sees R2UpKit's public declarations only, never `package` ones
#     (inside the package SwiftPM lets any target see those).
#  3. So does R2UpServe: `r2up serve` is an app on the face (Package.swift), so what it needs
#     that the face lacks goes into the face.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
BIN=$(swift build --show-bin-path)
TRIPLE=$(basename "$(dirname "$BIN")")
WORK=$(mktemp -d "${TMPDIR:-/tmp}/r2up-face.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# R2UpKit's module loads its dependencies' modules, C ones included: their module maps.
clang_flags=()
for map in "$ROOT"/Sources/*/module.modulemap "$BIN"/CAudioTags.build/module.modulemap \
  "$BIN"/CChecksum.build/module.modulemap "$ROOT"/.build/checkouts/GRDB.swift/Sources/GRDBSQLite/module.modulemap; do
  clang_flags+=(-Xcc "-fmodule-map-file=$map")
done
for include in "$ROOT"/Sources/*/include; do clang_flags+=(-Xcc -I -Xcc "$include"); done

mkdir -p "$WORK/graph"
swift-symbolgraph-extract -module-name R2UpKit -target "$TRIPLE" -I "$BIN/Modules" \
  -module-cache-path "$WORK/cache" -minimum-access-level public -output-dir "$WORK/graph" "${clang_flags[@]}"
python3 - "$WORK/graph" <<'PY'
import json, pathlib, sys
below = ("R2UpStore", "R2UpTransfer", "R2UpAudio", "SigV4", "GRDB", "CCurl", "CAudioTags")
# A USR names a module as <length><name> (s:9R2UpStore5StoreC); a graph file per extended module.
found = []
for path in sorted(pathlib.Path(sys.argv[1]).glob("*.symbols.json")):
    if any(path.name.startswith(f"R2UpKit@{m}.") for m in below):
        found.append(f"{path.name}: R2UpKit extends a type of {path.name.split('@')[1].split('.')[0]} publicly")
    graph = json.loads(path.read_text())
    for symbol in graph["symbols"]:
        name = ".".join(symbol["pathComponents"])
        fragments = symbol.get("declarationFragments", []) + [
            f for part in ("parameters", "returns") for f in
            (symbol.get("functionSignature", {}).get(part, []) if part == "returns" else
             [g for p in symbol.get("functionSignature", {}).get("parameters", []) for g in p.get("declarationFragments", [])])]
        for fragment in fragments:
            ident = fragment.get("preciseIdentifier", "")
            if any(f"{len(m)}{m}" in ident for m in below):
                found.append(f"{name}: `{fragment['spelling']}` ({ident}) is from a layer below R2UpKit")
    for relation in graph["relationships"]:
        target = relation.get("target", "")
        if relation["kind"] in ("conformsTo", "inheritsFrom") and any(f"{len(m)}{m}" in target for m in below):
            found.append(f"{relation['source']} {relation['kind']} {relation.get('targetFallback', target)}")
if found:
    print("face-check.sh: R2UpKit's public interface shows the layers below it:", *sorted(set(found)), sep="\n  ", file=sys.stderr)
    sys.exit(1)
PY

# The example as an app compiles it: no -package-name, so `package` declarations are invisible.
swiftc -typecheck -target "$TRIPLE" -swift-version 6 -I "$BIN/Modules" -module-cache-path "$WORK/cache" \
  -enable-upcoming-feature ExistentialAny -enable-upcoming-feature InternalImportsByDefault \
  -enable-upcoming-feature MemberImportVisibility "${clang_flags[@]}" Examples/r2up-embed-example/*.swift || {
  echo "face-check.sh: Examples/r2up-embed-example needs more than R2UpKit's public API (above)" >&2
  exit 1
}
# R2UpServe also loads Hummingbird's and NIO's C modules.
serve_flags=("${clang_flags[@]}")
for map in "$BIN"/*.build/module.modulemap; do serve_flags+=(-Xcc "-fmodule-map-file=$map"); done
while IFS= read -r include; do serve_flags+=(-Xcc -I -Xcc "$include"); done < <(find "$ROOT/.build/checkouts" -type d -path '*/Sources/*' -name include)
swiftc -typecheck -parse-as-library -module-name R2UpServe -target "$TRIPLE" -swift-version 6 -I "$BIN/Modules" \
  -module-cache-path "$WORK/cache" -enable-upcoming-feature ExistentialAny -enable-upcoming-feature InternalImportsByDefault \
  -enable-upcoming-feature MemberImportVisibility "${serve_flags[@]}" Sources/R2UpServe/*.swift || {
  echo "face-check.sh: R2UpServe needs more than R2UpKit's public API (above): make what it needs part of the face" >&2
  exit 1
}
echo "face-check.sh: R2UpKit's public interface names no lower layer; the example and R2UpServe use public API only" >&2
