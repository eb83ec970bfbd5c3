#!/usr/bin/env bash
# benchmarks/curl-floor-heads.sh BUCKET_URL DEPTH < KEYS: the floor for many HEADs — one signed
# HEAD per key (one a line on stdin) to BUCKET_URL/KEY, DEPTH at a time over reused connections
# (curl --parallel --parallel-max DEPTH, at most 300), signed with SigV4 as r2up signs them.
# Prints one line per reply, its HTTP status; exits non-zero when any HEAD failed.
# Needs AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.
set -euo pipefail
list=$(mktemp)
trap 'rm -f "$list"' EXIT
base=$1 depth=$2
# Each key's segments percent-encoded (a space is %20), as r2up sends them.
python3 -c '
import sys, urllib.parse
base = sys.argv[1]
for key in sys.stdin.read().splitlines():
    if key:
        url = base + "/" + urllib.parse.quote(key, safe="/~")
        print("url = \"%s\"\noutput = /dev/null" % url)
' "$base" >"$list"
curl -fsS -I --parallel --parallel-max "$depth" --aws-sigv4 "aws:amz:us-east-1:s3" \
  --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" \
  --no-progress-meter -w '%{http_code}\n' -K "$list"
