#!/usr/bin/env python3
"""A synthetic library for the local benchmarks (status.sh, du.sh, serve.sh).

  library.py files ROOT ALBUMS            ALBUMS folders "Artist NNN/Album NNNN" of 100 small .flac files
  library.py rows ROOT BUCKET [LIMIT]     SQL (to sqlite3) marking the first LIMIT files, in byte order
                                          of their paths below ROOT, uploaded to BUCKET
"""
import os
import sys


def files(root, albums):
    for a in range(albums):
        folder = os.path.join(root, f"Artist {a // 10:03d}", f"Album {a:04d}")
        os.makedirs(folder, exist_ok=True)
        for t in range(100):
            with open(os.path.join(folder, f"{t:02d} - A Track Title Long Enough.flac"), "w") as f:
                f.write("x" * (t + 1))


def quoted(text):
    return "'" + text.replace("'", "''") + "'"


def rows(root, bucket, limit):
    found = []
    for folder, _, names in os.walk(root):
        for name in names:
            path = os.path.join(folder, name)
            found.append(os.path.relpath(path, root))
    found.sort(key=lambda rel: rel.encode())
    print("BEGIN;")
    for rel in found[:limit]:
        info = os.stat(os.path.join(root, rel))
        print("INSERT INTO tracks (path, size, mtimeNs, uploadState, bucket, \"key\", etag, updatedAt) VALUES "
              f"({quoted(root + '/' + rel)}, {info.st_size}, {info.st_mtime_ns}, 'uploaded', {quoted(bucket)}, "
              f"{quoted(rel)}, '\"e\"', '2026-11-24T00:00:00Z');")
    print("COMMIT;")


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "files":
        files(sys.argv[2], int(sys.argv[3]))
    elif len(sys.argv) >= 4 and sys.argv[1] == "rows":
        rows(sys.argv[2], sys.argv[3], int(sys.argv[4]) if len(sys.argv) > 4 else None)
    else:
        sys.exit(__doc__)
