"""Compile the plugin's checks with mypyc into a directory of their own, to measure what a compiled
build would cost mypy. Nothing is installed and the checkout is not touched.

    python benchmarks/compiled.py DEST [--python PATH]
    python benchmarks/instructions.py --python PATH --source DEST
    python benchmarks/run.py --python PATH --source DEST

mypyc ships with mypy; it needs a C compiler and the Python headers, and takes about two minutes on
two cores. ``DEST/mypy_lgstate`` is a copy of the package in which the modules of ``checker/``,
``routes/`` and ``core/`` are extension modules. ``plugin.py`` stays Python: its class derives from
mypy's own ``Plugin``, a class of mypy's compiled code, and compiled it crashes the interpreter. The
copy must be run by the interpreter (and so the mypy) it was built with.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
COMPILED = ("checker", "routes", "core")

SETUP = """\
import sys
from setuptools import setup
from mypyc.build import mypycify

modules, generated = sys.argv.pop(1).split(","), sys.argv.pop(1)
setup(
    name="mypy-lgstate-compiled",
    ext_modules=mypycify(modules, opt_level="3", target_dir=generated),
)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dest", type=Path, help="directory to hold the compiled copy of mypy_lgstate")
    parser.add_argument("--python", default=sys.executable, help="interpreter whose mypy compiles it")
    args = parser.parse_args()
    package = args.dest.resolve() / "mypy_lgstate"
    shutil.rmtree(package, ignore_errors=True)
    shutil.copytree(
        REPO_ROOT / "mypy_lgstate", package, ignore=shutil.ignore_patterns("__pycache__", "*.so")
    )
    modules = [
        str(path.relative_to(package.parent))
        for directory in COMPILED
        for path in sorted((package / directory).glob("*.py"))
        if path.name != "__init__.py"
    ]
    with tempfile.TemporaryDirectory() as build:
        setup = Path(build) / "setup.py"
        setup.write_text(SETUP)
        command = [
            args.python, str(setup), ",".join(modules), str(Path(build) / "generated"),
            "build_ext", "--inplace", "-j", "2",
            "--build-temp", str(Path(build) / "temp"), "--build-lib", str(Path(build) / "lib"),
        ]
        result = subprocess.run(command, cwd=package.parent, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"mypyc failed:\n{result.stdout[-3000:]}{result.stderr[-3000:]}")
    built = sorted(package.rglob("*.so"))
    print(f"{len(built)} extension modules in {package}")


if __name__ == "__main__":
    main()
