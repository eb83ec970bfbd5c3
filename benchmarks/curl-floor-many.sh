#!/usr/bin/env bash
# benchmarks/curl-floor-many.sh DIR URL_BASE: the floor for many small files — one signed
# PUT per file of DIR to URL_BASE/NAME, 4 at a time over reused connections (curl --parallel),
# UNSIGNED-PAYLOAD like r2up. Needs AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.
set -euo pipefail
list=$(mktemp)
trap 'rm -f "$list"' EXIT
for f in "$1"/*; do
  printf 'upload-file = "%s"\nurl = "%s/%s"\noutput = /dev/null\n' "$f" "$2" "${f##*/}" >>"$list"
done
exec curl -fsS --parallel --parallel-max 4 --aws-sigv4 "aws:amz:us-east-1:s3" \
  --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" -K "$list"
