"""Build the compiled package (``MYPY_LGSTATE_COMPILE=1``, build_support/backend.py) into a
directory of its own, to measure it against plain mypy. Nothing is installed in the environment
(pip builds in the checkout's ``build/``, as for any install).

    python benchmarks/compiled.py DEST [--python PATH]
    python benchmarks/instructions.py --python PATH --source DEST
    python benchmarks/run.py --python PATH --source DEST

It runs the build pip runs for ``MYPY_LGSTATE_COMPILE=1 pip install .``: mypyc (which comes with
mypy) compiles the modules of ``checker/``, ``routes/`` and ``core/``; it needs a C compiler and the
Python headers, and takes a few minutes on two cores. The package lands in ``DEST/mypy_lgstate``
(mypyc's shared library beside it) and must be run by the interpreter it was built for.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dest", type=Path, help="directory to hold the compiled mypy_lgstate")
    parser.add_argument("--python", default=sys.executable, help="interpreter to build it for")
    args = parser.parse_args()
    dest = args.dest.resolve()
    # What an earlier build left: the package, its metadata and mypyc's shared library beside it.
    for old in (*dest.glob("mypy_lgstate*"), *dest.glob("*__mypyc*")):
        shutil.rmtree(old) if old.is_dir() else old.unlink()
    command = [
        args.python, "-m", "pip", "install", "--quiet", "--no-deps", "--upgrade",
        "--target", str(dest), str(REPO_ROOT),
    ]
    environment = {**os.environ, "MYPY_LGSTATE_COMPILE": "1"}
    result = subprocess.run(command, env=environment, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"the compiled build failed:\n{result.stdout[-3000:]}{result.stderr[-3000:]}")
    built = sorted(dest.rglob("*.so"))
    print(f"{len(built)} extension modules in {dest}")


if __name__ == "__main__":
    main()
