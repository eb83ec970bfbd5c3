#!/usr/bin/env bash
# scripts/manual.sh — regenerate docs/r2up.1 (man r2up).
#
# swift-argument-parser's generate-manual plugin writes NAME, SYNOPSIS, DESCRIPTION (every
# command and option) and a stock EXIT STATUS; r2up's own EXIT STATUS, ENVIRONMENT and FILES
# sections (docs/r2up.1.sections, mdoc) replace that stock section.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
swift package plugin generate-manual >&2
generated=.build/plugins/GenerateManual/outputs/r2up/r2up.1
[ -n "$generated" ] || { echo "manual.sh: generate-manual wrote no r2up.1" >&2; exit 1; }
{
  # Everything before the stock EXIT STATUS section, then ours.
  awk '/^\.Sh "EXIT STATUS"/ { exit } { print }' "$generated"
  cat docs/r2up.1.sections
} >docs/r2up.1.tmp
mv docs/r2up.1.tmp docs/r2up.1
echo "manual.sh: wrote docs/r2up.1 ($(grep -c '^\.Sh' docs/r2up.1) sections)" >&2
