# lit configuration for dsc's FileCheck suite.
import os
import sys

import lit.formats

config.name = "dsc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".test", ".dsc"]
config.excludes = ["Inputs", "CMakeLists.txt"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.dsc_binary_dir, "tests", "lit")

config.substitutions.append(("%dscc", os.path.join(config.dsc_binary_dir, "tools", "dscc", "dscc")))
config.substitutions.append(
    ("%dsc_run", os.path.join(config.dsc_binary_dir, "tools", "dsc_run", "dsc-run")))
# The C compiler, for the hand-written model fixtures of dsc-run's tests.
config.substitutions.append(("%cc", config.c_compiler))
config.substitutions.append(("FileCheck", config.filecheck))
config.substitutions.append(("%dsc_src", config.dsc_source_dir))
# The Python that runs lit, for the small checks under Inputs/ (numpy comes with the test deps).
config.substitutions.append(("%python", sys.executable))

# AddressSanitizer reserves terabytes of shadow memory at start-up, so a test that limits the
# address space (`ulimit -v`) cannot run under it: such tests say `UNSUPPORTED: asan`.
if getattr(config, "dsc_sanitize", False):
    config.available_features.add("asan")
