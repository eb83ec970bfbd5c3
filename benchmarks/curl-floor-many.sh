#!/usr/bin/env bash
# benchmarks/curl-floor-many.sh DIR URL_BASE [CURL_ARG…]: the floor for many small files — one
# signed PUT per file of DIR to URL_BASE/NAME, 4 at a time over reused connections (curl
# --parallel), UNSIGNED-PAYLOAD like r2up; extra arguments go to curl (e.g. -H 'If-None-Match: *',
# the conditional write r2up sends for a new key). Needs AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.
set -euo pipefail
list=$(mktemp)
trap 'rm -f "$list"' EXIT
dir=$1 base=$2
shift 2
for f in "$dir"/*; do
  printf 'upload-file = "%s"\nurl = "%s/%s"\noutput = /dev/null\n' "$f" "$base" "${f##*/}" >>"$list"
done
curl -fsS --parallel --parallel-max 4 --aws-sigv4 "aws:amz:us-east-1:s3" \
  --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" "$@" -K "$list"
