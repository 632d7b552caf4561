"""A Python program that runs mrc-plan as on an install without some optional modules:
`python -c BASE_INSTALL MODULES ARGS...`, MODULES a comma-separated list of the top-level
modules whose import must fail as if they were not installed."""

BASE_INSTALL = """
import importlib.abc, sys
OPTIONAL = set(sys.argv.pop(1).split(","))
class NotInstalled(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in OPTIONAL:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, NotInstalled())
sys.argv[0] = "mrc-plan"
from mrc_plan_cli.main import run
run()
"""
