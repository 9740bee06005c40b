#!/usr/bin/env python3
"""Reports the tests a ctest run skipped, with their reasons, and fails on an unexpected one.

    ctest_skips.py --build BUILD --junit RESULTS.xml [--allowed-label gpu] [--allow-skips]

Reads the JUnit file that `ctest --output-junit` wrote and the labels of every test
(`ctest --show-only=json-v1`). A test counts as skipped when ctest did not run it to a verdict
(its SKIP_RETURN_CODE, a gtest GTEST_SKIP, a missing executable); its reason is the last
lines it printed. Skips of tests that carry an allowed label (`gpu`: this machine may have no
GPU) are expected; any other skip fails the run (exit 1) unless --allow-skips is given
(tools/scripts/test.sh passes it when DSC_ALLOW_SKIPS=1), for a developer who runs the tests
without the Python packages some of them need.

The last line is the summary: how many tests ran, passed, failed and were skipped.
"""
import argparse
import json
import subprocess
import sys
import xml.etree.ElementTree as ET

# How many of a skipped test's last output lines make its reason.
REASON_LINES = 2


def labels_by_test(build):
    """{test name: set of labels}, from ctest's own description of the build's tests."""
    out = subprocess.run(["ctest", "--test-dir", build, "--show-only=json-v1"], check=True,
                         capture_output=True, text=True).stdout
    labels = {}
    for test in json.loads(out).get("tests", []):
        names = set()
        for prop in test.get("properties", []):
            if prop.get("name") == "LABELS":
                names.update(prop.get("value", []))
        labels[test["name"]] = names
    return labels


def reason_of(case):
    """The reason a skipped test gave: the last lines of its output that say something."""
    skipped = case.find("skipped")
    text = case.findtext("system-out") or ""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    # gtest prints its own bookkeeping last; the GTEST_SKIP message comes before it.
    lines = [line for line in lines if not line.startswith("[")] or lines
    reason = " / ".join(lines[-REASON_LINES:])
    if not reason and skipped is not None:
        reason = skipped.get("message", "")
    return reason or "(no output)"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", required=True, help="the build directory ctest ran in")
    parser.add_argument("--junit", required=True, help="the file `ctest --output-junit` wrote")
    parser.add_argument("--allowed-label", action="append", default=[],
                        help="a label whose tests may be skipped (repeatable)")
    parser.add_argument("--allow-skips", action="store_true",
                        help="report unexpected skips but do not fail on them")
    args = parser.parse_args()

    try:
        root = ET.parse(args.junit).getroot()
    except (OSError, ET.ParseError) as e:
        print(f"ctest_skips: cannot read {args.junit}: {e}", file=sys.stderr)
        return 1
    labels = labels_by_test(args.build)
    ran = passed = failed = 0
    expected, unexpected = [], []
    for case in root.iter("testcase"):
        name = case.get("name")
        status = case.get("status", "")
        if case.find("skipped") is not None or status in ("notrun", "disabled"):
            allowed = labels.get(name, set()) & set(args.allowed_label)
            (expected if allowed else unexpected).append((name, reason_of(case)))
            continue
        ran += 1
        if case.find("failure") is not None or case.find("error") is not None or status == "fail":
            failed += 1
        else:
            passed += 1

    if expected:
        print(f"skipped as expected (label {', '.join(args.allowed_label)}): {len(expected)}")
        for name, reason in expected:
            print(f"  {name}: {reason}")
    if unexpected:
        verdict = "allowed by DSC_ALLOW_SKIPS=1" if args.allow_skips else "not allowed"
        print(f"skipped unexpectedly ({verdict}): {len(unexpected)}")
        for name, reason in unexpected:
            print(f"  {name}: {reason}")
        if not args.allow_skips:
            print("  install what they need (tools/scripts/install_python_deps.sh --tests), or "
                  "set DSC_ALLOW_SKIPS=1 to run the rest without them")
    skipped = len(expected) + len(unexpected)
    print(f"ctest: {ran} tests ran ({passed} passed, {failed} failed), {skipped} skipped "
          f"({len(expected)} expected, {len(unexpected)} unexpected)")
    return 1 if unexpected and not args.allow_skips else 0


if __name__ == "__main__":
    sys.exit(main())
