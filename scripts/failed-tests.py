#!/usr/bin/env python3
"""failed-tests.py XUNIT...: the tests that failed in `swift test --xunit-output` files.

Prints one `swift test --filter` pattern a line ("^Module.Suite/name()", regex-escaped), each
failed test once, for scripts/test.sh's second run of what failed. Missing files are skipped;
an unreadable one prints nothing for it (the first run's status stands)."""
import re
import sys
import xml.etree.ElementTree as ET


def failed(path):
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return []
    names = []
    for case in root.iter("testcase"):
        if case.find("failure") is None and case.find("error") is None:
            continue
        suite, name = case.get("classname", ""), case.get("name", "")
        if suite and name:
            names.append(f"{suite}/{name}")
    return names


def main(paths):
    seen = []
    for path in paths:
        for name in failed(path):
            if name not in seen:
                seen.append(name)
    for name in seen:
        print("^" + re.escape(name))


if __name__ == "__main__":
    main(sys.argv[1:])
