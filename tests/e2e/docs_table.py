"""The command line of a test whose table is also in the docs (check_limits.py,
check_symbol_bindings.py): `--table` prints the table as Markdown, `--docs FILE` requires FILE
to hold it as printed, `--dscc` is the compiler the test runs."""

from __future__ import annotations

import argparse
import sys


def parse_args(doc: str, docs_file: str, table: str) -> argparse.Namespace | None:
    """The arguments, or None after printing the table for `--table`."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--dscc")
    ap.add_argument("--table", action="store_true", help="print the table as Markdown")
    ap.add_argument("--docs", help=f"{docs_file}, which must hold the table as printed")
    args = ap.parse_args()
    if args.table:
        print(table)
        return None
    if not args.dscc:
        ap.error("--dscc is required")
    return args


def docs_are_stale(args: argparse.Namespace, table: str) -> bool:
    """Whether --docs was given and does not hold `table` (then says so)."""
    if not args.docs:
        return False
    with open(args.docs) as f:
        if table in f.read():
            return False
    print(f"{args.docs} does not hold the table this test checks: paste the output of "
          f"`{sys.argv[0]} --table` into it")
    return True
