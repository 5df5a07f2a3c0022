"""The plugin's options, end to end: mypy runs in a subprocess on a temporary project.

A bad option must stop mypy with exactly one line naming the file, the section and the option, exit
status 2 and no traceback (docs/runtime.md). Valid options are read from the file mypy itself took its
configuration from, whichever way it found it, and they change verdicts.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

KNOWN = (
    "known options: allowed_msgpack_modules, derive_allowlist, lock_file, pickle_fallback, profile,"
    " safe_types, saver, state_classes, strict_msgpack"
)

# Checked with every configuration below. It needs no langgraph, so each run takes about a second.
APP = '''\
from datetime import datetime
from typing import TypedDict
from mypy_lgstate import graph_state

@graph_state
class State(TypedDict):
    when: datetime
    buf: list[bytearray]
'''
JSON_WHEN = (
    'app.py:7: error: State.when is "datetime": the JSON serializer raises TypeError when the checkpoint'
    " is written. Fix: store an ISO string (value.isoformat()) and parse it back with fromisoformat()"
    "  [lgstate-unserializable]"
)
JSON_BUF = (
    'app.py:8: error: State.buf[] is "bytearray": the JSON serializer raises TypeError when the checkpoint'
    " is written. Fix: store base64.b64encode(value).decode() (a str)  [lgstate-unserializable]"
)
MSGPACK_BUF = (
    'app.py:8: error: State.buf[] is "bytearray": the msgpack serializer writes it, but it comes back as'
    " bytes. Fix: declare the field as bytes  [lgstate-lossy]"
)

TOML_HEAD = '[tool.mypy]\nplugins = ["mypy_lgstate.plugin"]\n\n'
INI_HEAD = "[mypy]\nplugins = mypy_lgstate.plugin\n\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    # A .git directory stops mypy's upward search for a configuration file at the project root.
    (tmp_path / ".git").mkdir()
    (tmp_path / "app.py").write_text(APP)
    return tmp_path


def run_mypy(cwd: Path, *args: str) -> tuple[int, list[str]]:
    """mypy's exit status and its output lines (stdout and stderr), without the summary line."""
    env = {
        "PATH": os.environ.get("PATH", ""),
        # No user-level mypy configuration (~/.config/mypy/config) may leak in.
        "HOME": str(cwd),
        "XDG_CONFIG_HOME": str(cwd / ".config"),
    }
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-error-summary", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = done.stdout + done.stderr
    assert "Traceback" not in output, output
    return done.returncode, output.splitlines()


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


# Bad options ---------------------------------------------------------------------------------------

TOML_ERRORS = [
    pytest.param(
        'profil = "json"\n',
        f"profil: unknown option, did you mean profile? ({KNOWN})",
        id="unknown-option",
    ),
    pytest.param(
        'strict_msgpack = "true"\n',
        'strict_msgpack: must be true or false, not "true"',
        id="bool-given-as-string",
    ),
    pytest.param(
        "derive_allowlist = 1\n",
        "derive_allowlist: must be true or false, not 1",
        id="bool-given-as-int",
    ),
    pytest.param(
        "state_classes = 5\n",
        "state_classes: must be a list of dotted names, not 5",
        id="list-given-as-int",
    ),
    pytest.param(
        "allowed_msgpack_modules = [1]\n",
        "allowed_msgpack_modules: 1 is not a dotted name such as pkg.module.Class",
        id="list-item-not-a-string",
    ),
    pytest.param(
        'profile = "pickle"\n',
        'profile: must be "json" or "msgpack", not "pickle"',
        id="unknown-profile",
    ),
    pytest.param(
        "profile = 1979-05-27\n",
        "profile: must be \"json\" or \"msgpack\", not datetime.date(1979, 5, 27)",
        id="profile-given-as-toml-date",
    ),
    pytest.param(
        "lock_file = false\n",
        "lock_file: must be a file path, not false",
        id="lock-file-given-as-bool",
    ),
    pytest.param(
        'saver = "redis"\n',
        'saver: must be "sqlite", "memory" or "postgres", not "redis"',
        id="unknown-saver",
    ),
    pytest.param(
        'safe_types = ["my pkg.Type"]\n',
        'safe_types: "my pkg.Type" is not a dotted name such as pkg.module.Class',
        id="bad-dotted-name",
    ),
    pytest.param(
        'state_classes = ["app.State", "app..Other"]\n',
        'state_classes: "app..Other" is not a dotted name such as pkg.module.Class',
        id="empty-dotted-part",
    ),
]


@pytest.mark.parametrize(("body", "problem"), TOML_ERRORS)
def test_bad_option_in_pyproject(project: Path, body: str, problem: str) -> None:
    write(project / "pyproject.toml", TOML_HEAD + "[tool.mypy_lgstate]\n" + body)
    status, lines = run_mypy(project, "app.py")
    assert (status, lines) == (2, [f"pyproject.toml: [tool.mypy_lgstate]: {problem}"])


# The saver: the option, else a langgraph.json ----------------------------------------------------

ENUM_APP = '''\
import enum
from typing import TypedDict
from mypy_lgstate import graph_state

class Status(str, enum.Enum):
    OPEN = "open"

@graph_state
class State(TypedDict):
    status: Status
'''
INLINED = (
    'app.py:10: error: State.status is "Status": PostgresSaver (and AsyncPostgresSaver, LangGraph\'s'
    " server) stores a channel's value inline as JSON when it is a str, without its class: it comes"
    " back as a plain str. Fix: declare the field as str and store member.value, rebuilding the"
    " member with Status(value) where it is read  [lgstate-lossy]"
)


def test_a_langgraph_json_makes_the_saver_postgres_unless_the_options_say(project: Path) -> None:
    """LangGraph's server checkpoints to PostgreSQL, unless langgraph.json names a checkpointer of
    its own; the option wins over both. A langgraph.json that is not JSON is one line."""
    write(project / "app.py", ENUM_APP)
    config = write(project / "mypy.ini", INI_HEAD + "[mypy_lgstate]\nprofile = msgpack\n")
    assert run_mypy(project, "app.py") == (0, [])
    write(project / "langgraph.json", '{"graphs": {"agent": "./app.py:graph"}}')
    assert run_mypy(project, "app.py") == (1, [INLINED])
    write(project / "langgraph.json", '{"checkpointer": {"path": "./saver.py:make_saver"}}')
    assert run_mypy(project, "app.py") == (0, [])
    write(project / "langgraph.json", "{")
    assert run_mypy(project, "app.py") == (
        2, ["langgraph.json: not valid JSON: Expecting property name enclosed in double quotes:"
            " line 1 column 2 (char 1)"],
    )
    write(project / "langgraph.json", '{"graphs": {}}')
    config.write_text(config.read_text() + "saver = sqlite\n")
    assert run_mypy(project, "app.py") == (0, [])


def test_section_that_is_not_a_table(project: Path) -> None:
    write(project / "pyproject.toml", '[tool]\nmypy_lgstate = "msgpack"\n\n' + TOML_HEAD)
    status, lines = run_mypy(project, "app.py")
    assert (status, lines) == (2, ["pyproject.toml: [tool.mypy_lgstate]: must be a table"])


INI_ERRORS = [
    pytest.param("profil = json\n", f"profil: unknown option, did you mean profile? ({KNOWN})", id="unknown-option"),
    pytest.param(
        "strict_msgpack = maybe\n",
        'strict_msgpack: must be true or false, not "maybe"',
        id="not-a-bool",
    ),
    pytest.param(
        "profile = pickle\n",
        'profile: must be "json" or "msgpack", not "pickle"',
        id="unknown-profile",
    ),
    pytest.param(
        "state_classes = app.State, 3rd.Party\n",
        'state_classes: "3rd.Party" is not a dotted name such as pkg.module.Class',
        id="bad-dotted-name",
    ),
    pytest.param(
        # mypy reads its sections raw; a "%" must not turn into an interpolation error.
        "safe_types = money%Amount\n",
        'safe_types: "money%Amount" is not a dotted name such as pkg.module.Class',
        id="percent-sign",
    ),
]


@pytest.mark.parametrize("filename", ["mypy.ini", "setup.cfg", ".mypy.ini"])
@pytest.mark.parametrize(("body", "problem"), INI_ERRORS)
def test_bad_option_in_ini(project: Path, filename: str, body: str, problem: str) -> None:
    write(project / filename, INI_HEAD + "[mypy_lgstate]\n" + body)
    status, lines = run_mypy(project, "app.py")
    assert (status, lines) == (2, [f"{filename}: [mypy_lgstate]: {problem}"])


def test_bad_option_in_explicit_config_file(project: Path) -> None:
    write(project / "configs" / "lint.toml", TOML_HEAD + '[tool.mypy_lgstate]\nprofile = "yaml"\n')
    status, lines = run_mypy(project, "--config-file", "configs/lint.toml", "app.py")
    assert (status, lines) == (
        2,
        ['configs/lint.toml: [tool.mypy_lgstate]: profile: must be "json" or "msgpack", not "yaml"'],
    )


def test_bad_option_found_by_upward_search_names_the_relative_path(project: Path) -> None:
    write(project / "pyproject.toml", TOML_HEAD + "[tool.mypy_lgstate]\nstrict_msgpack = 'no'\n")
    (project / "src").mkdir()
    status, lines = run_mypy(project / "src", "../app.py")
    assert (status, lines) == (
        2,
        ['../pyproject.toml: [tool.mypy_lgstate]: strict_msgpack: must be true or false, not "no"'],
    )


@pytest.mark.parametrize(
    ("filename", "text", "line"),
    [
        pytest.param(
            "pyproject.toml", TOML_HEAD + '[tool.mypy_lgstat]\nprofile = "msgpack"\n',
            "pyproject.toml: [tool.mypy_lgstat]: unknown section, did you mean [tool.mypy_lgstate]?",
            id="toml",
        ),
        pytest.param(
            "mypy.ini", INI_HEAD + "[mypy_lgstat]\nprofile = msgpack\n",
            "mypy.ini: [mypy_lgstat]: unknown section, did you mean [mypy_lgstate]?", id="ini",
        ),
        pytest.param(
            "setup.cfg", INI_HEAD + "[lgstate]\nprofile = msgpack\n",
            "setup.cfg: [lgstate]: unknown section, did you mean [mypy_lgstate]?", id="short",
        ),
    ],
)
def test_a_misspelled_section_is_one_line(project: Path, filename: str, text: str, line: str) -> None:
    # Its options would be ignored without a word, and the defaults used.
    write(project / filename, text)
    assert run_mypy(project, "app.py") == (2, [line])


def test_a_per_module_section_holding_the_plugins_options_is_a_misspelling(project: Path) -> None:
    # mypy takes it for the options of a module named lgstate, and warns of an option it does not
    # know: the plugin says which section was meant.
    write(project / "mypy.ini", INI_HEAD + "[mypy-lgstate]\nprofile = msgpack\n")
    assert run_mypy(project, "app.py") == (2, [
        "mypy.ini: [mypy-lgstate]:Unrecognized option: profile = msgpack",  # (sic)
        "mypy.ini: [mypy-lgstate]: unknown section, did you mean [mypy_lgstate]?",
    ])


def test_a_per_module_section_of_mypys_own_is_no_misspelling(project: Path) -> None:
    write(project / "mypy.ini", INI_HEAD + "[mypy-lgstate.*]\nignore_errors = true\n")
    assert run_mypy(project, "app.py") == (1, [JSON_WHEN, JSON_BUF])


STATE_MODULE = '''\
from typing import TypedDict


class Ticket(TypedDict):
    when: "datetime"


class Helper:
    pass


from datetime import datetime
'''


def test_a_state_classes_entry_that_names_no_state_class_is_reported_in_its_module(
    project: Path,
) -> None:
    # The entry's module is checked: the plugin looks the class up there, in every run (the error
    # is the module's, and a warm run replays it from the cache).
    write(project / "state.py", STATE_MODULE)
    config = "[mypy_lgstate]\nstate_classes = state.Tickt, state.Helper, state.Ticket\n"
    write(project / "mypy.ini", INI_HEAD + config)
    expected = (1, [
        'state.py:1: error: mypy.ini: [mypy_lgstate]: state_classes: "state.Tickt" names no class of'
        " module state, did you mean state.Ticket?  [misc]",
        'state.py:1: error: mypy.ini: [mypy_lgstate]: state_classes: "state.Helper" is not a'
        " TypedDict, a pydantic model or a dataclass, so it is not graph state  [misc]",
        'state.py:5: error: Ticket.when is "datetime": the JSON serializer raises TypeError when the'
        " checkpoint is written. Fix: store an ISO string (value.isoformat()) and parse it back with"
        " fromisoformat()  [lgstate-unserializable]",
    ])
    assert run_mypy(project, "--cache-dir", ".cache", "state.py") == expected
    assert run_mypy(project, "--cache-dir", ".cache", "state.py") == expected


# Which file is read --------------------------------------------------------------------------------


def test_defaults_without_a_plugin_section(project: Path) -> None:
    write(project / "mypy.ini", INI_HEAD)
    assert run_mypy(project, "app.py") == (1, [JSON_WHEN, JSON_BUF])


def test_pyproject_found_by_mypys_own_discovery(project: Path) -> None:
    write(project / "pyproject.toml", TOML_HEAD + '[tool.mypy_lgstate]\nprofile = "msgpack"\n')
    assert run_mypy(project, "app.py") == (1, [MSGPACK_BUF])


def test_mypy_ini_found_by_mypys_own_discovery(project: Path) -> None:
    write(project / "mypy.ini", INI_HEAD + "[mypy_lgstate]\nprofile = msgpack\n")
    assert run_mypy(project, "app.py") == (1, [MSGPACK_BUF])


def test_setup_cfg_section(project: Path) -> None:
    write(project / "setup.cfg", "[metadata]\nname = app\n\n" + INI_HEAD + "[mypy_lgstate]\nprofile = msgpack\n")
    assert run_mypy(project, "app.py") == (1, [MSGPACK_BUF])


def test_explicit_config_file_wins_over_discovered_one(project: Path) -> None:
    # mypy takes --config-file; the plugin must read the same file, and nothing from pyproject.toml.
    write(project / "pyproject.toml", TOML_HEAD + '[tool.mypy_lgstate]\nprofile = "broken"\n')
    write(project / "ci" / "mypy.ini", INI_HEAD + "[mypy_lgstate]\nprofile = msgpack\n")
    assert run_mypy(project, "--config-file", "ci/mypy.ini", "app.py") == (1, [MSGPACK_BUF])


def test_section_in_a_file_mypy_did_not_use_is_ignored(project: Path) -> None:
    # mypy.ini wins over pyproject.toml in mypy's discovery, so the bad section is never read.
    write(project / "mypy.ini", INI_HEAD)
    write(project / "pyproject.toml", '[tool.mypy_lgstate]\nprofile = "broken"\n')
    assert run_mypy(project, "app.py") == (1, [JSON_WHEN, JSON_BUF])


def test_setup_cfg_without_mypy_section_is_not_read(project: Path) -> None:
    # mypy skips a setup.cfg that has no [mypy] section and goes on to pyproject.toml.
    write(project / "setup.cfg", "[mypy_lgstate]\nprofile = broken\n")
    write(project / "pyproject.toml", TOML_HEAD + '[tool.mypy_lgstate]\nprofile = "msgpack"\n')
    assert run_mypy(project, "app.py") == (1, [MSGPACK_BUF])


# Valid options take effect -------------------------------------------------------------------------


def test_safe_types_as_list_and_as_comma_string(project: Path) -> None:
    write(
        project / "pyproject.toml",
        TOML_HEAD + '[tool.mypy_lgstate]\nsafe_types = ["datetime.datetime", "builtins.bytearray"]\n',
    )
    assert run_mypy(project, "app.py") == (0, [])
    write(
        project / "pyproject.toml",
        TOML_HEAD + '[tool.mypy_lgstate]\nsafe_types = "datetime.datetime, builtins.bytearray"\n',
    )
    assert run_mypy(project, "app.py") == (0, [])


def test_ini_list_on_several_lines(project: Path) -> None:
    write(
        project / "mypy.ini",
        INI_HEAD + "[mypy_lgstate]\nsafe_types =\n    datetime.datetime\n    builtins.bytearray\n",
    )
    assert run_mypy(project, "app.py") == (0, [])


def test_ini_bool_spellings(project: Path) -> None:
    for spelling in ("True", "yes", "on", "1", "false", "No", "off", "0"):
        write(project / "mypy.ini", INI_HEAD + f"[mypy_lgstate]\nstrict_msgpack = {spelling}\n")
        status, lines = run_mypy(project, "app.py")
        assert status == 1 and lines == [JSON_WHEN, JSON_BUF], spelling


def test_changed_options_are_not_replayed_from_the_cache(project: Path) -> None:
    # report_config_data: a warm run after an option change must not show the old errors.
    pyproject = project / "pyproject.toml"
    write(pyproject, TOML_HEAD)
    assert run_mypy(project, "app.py") == (1, [JSON_WHEN, JSON_BUF])
    write(pyproject, TOML_HEAD + '[tool.mypy_lgstate]\nprofile = "msgpack"\n')
    assert run_mypy(project, "app.py") == (1, [MSGPACK_BUF])
    write(pyproject, TOML_HEAD + '[tool.mypy_lgstate]\nprofile = "msgpack"\nsafe_types = ["builtins.bytearray"]\n')
    assert run_mypy(project, "app.py") == (0, [])
    write(pyproject, TOML_HEAD)
    assert run_mypy(project, "app.py") == (1, [JSON_WHEN, JSON_BUF])
