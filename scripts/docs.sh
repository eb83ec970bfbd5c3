#!/usr/bin/env bash
# Builds R2UpKit's DocC catalog (Sources/R2UpKit/R2UpKit.docc) with warnings as errors, so a
# broken symbol link, a missing page or a public function whose parameters or return value are
# not all documented (docc's parameters-and-returns validation) fails CI. Output: .build/docs/R2UpKit.doccarchive.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
mkdir -p .build/docs  # the plugin moves the archive here and does not make the folder
swift package --allow-writing-to-directory .build/docs generate-documentation --target R2UpKit \
  --warnings-as-errors --output-path .build/docs/R2UpKit.doccarchive "$@"
