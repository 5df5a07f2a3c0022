"""Test-suite set-up shared by the Python tests and the YAML cases."""

import os
import sys

# pytest-mypy-plugins finds mypy on PATH: put this interpreter's scripts first, so the suite runs the
# mypy (and the plugin) installed next to pytest even when the virtual environment is not activated.
os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")
