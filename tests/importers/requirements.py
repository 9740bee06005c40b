"""The Python packages an importer check needs: skip_unless_installed exits with 77, which
ctest counts as a skip (SKIP_RETURN_CODE), naming the first package missing and the script
that installs them. Imports nothing beyond the standard library, so it runs before them."""

import importlib.util
import sys


def skip_unless_installed(*modules: str) -> None:
    for module in modules:
        if importlib.util.find_spec(module) is None:
            print(f"SKIP: {module} is not installed: run tools/scripts/install_python_deps.sh --tests")
            sys.exit(77)
