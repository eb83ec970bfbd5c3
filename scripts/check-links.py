#!/usr/bin/env python3
"""scripts/check-links.py — every relative link in README.md and docs/ must resolve.

    python3 scripts/check-links.py      # exit 1 and one line per broken link

A link is `[text](target)` or `![alt](target)` outside code. Web links (http:, https:, mailto:)
are not fetched. A target must be a file or folder of the repository; a `#fragment` on a
Markdown page must name one of its headings (GitHub's anchors: lower case, punctuation dropped,
spaces to hyphens, -1, -2 … for repeats). scripts/test.sh runs it.
"""
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(([^()\s]*(?:\([^()\s]*\)[^()\s]*)*)(?:\s+\"[^\"]*\")?\)")


def pages():
    yield os.path.join(ROOT, "README.md")
    for folder, _, files in os.walk(os.path.join(ROOT, "docs")):
        for name in sorted(files):
            if name.endswith(".md"):
                yield os.path.join(folder, name)


def prose(text, keep_code=False):
    """The lines outside fenced code blocks, with inline code blanked out (or kept)."""
    fenced = False
    for number, line in enumerate(text.split("\n"), 1):
        if re.match(r"^\s*(```|~~~)", line):
            fenced = not fenced
            continue
        if not fenced:
            yield number, line if keep_code else re.sub(r"`[^`]*`", "", line)


def anchors(path, cache={}):
    if path not in cache:
        found, seen = set(), {}
        with open(path, encoding="utf-8") as f:
            for _, line in prose(f.read(), keep_code=True):
                heading = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
                if not heading:
                    continue
                slug = re.sub(r"[^\w\- ]", "", heading.group(1).lower()).replace(" ", "-")
                count = seen.get(slug, 0)
                seen[slug] = count + 1
                found.add(slug if count == 0 else f"{slug}-{count}")
        cache[path] = found
    return cache[path]


def main():
    broken = checked = count = 0
    for page in pages():
        count += 1
        with open(page, encoding="utf-8") as f:
            text = f.read()
        for number, line in prose(text):
            for target in LINK.findall(line):
                if not target or re.match(r"^[a-z][a-z0-9+.-]*:", target):
                    continue
                path, _, fragment = target.partition("#")
                resolved = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
                checked += 1
                where = f"{os.path.relpath(page, ROOT)}:{number}"
                if not resolved.startswith(ROOT + os.sep) and resolved != ROOT:
                    print(f"{where}: {target}: leads outside the repository", file=sys.stderr)
                    broken += 1
                elif not os.path.exists(resolved):
                    print(f"{where}: {target}: no such file", file=sys.stderr)
                    broken += 1
                elif fragment and resolved.endswith(".md") and fragment not in anchors(resolved):
                    print(f"{where}: {target}: no heading '#{fragment}' in {os.path.relpath(resolved, ROOT)}", file=sys.stderr)
                    broken += 1
    if broken:
        print(f"check-links: {broken} broken link(s) in README.md and docs/", file=sys.stderr)
        return 1
    print(f"check-links: {checked} relative links in {count} pages resolve", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
