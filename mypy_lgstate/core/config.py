"""The plugin's options: read from the file mypy took its own configuration from, validated in one place.

``[tool.mypy_lgstate]`` in pyproject.toml, ``[mypy_lgstate]`` in mypy.ini / setup.cfg / .mypy.ini.
A bad option stops mypy with one line that names the file, the section and the option, like mypy's own
configuration errors; it never ends in a traceback. So does a file that cannot be parsed.

``find_config_file`` is the discovery of ``lgstate`` and of the runtime checker, which also take a
file that has the plugin's section and no mypy section (docs/cli.md).
"""

from __future__ import annotations

import ast
import configparser
import difflib
import json
import os
import sys
from collections.abc import Iterable
from typing import Any, Final, Literal, NamedTuple, NoReturn

from mypy_lgstate.core.digest import short_digest
from mypy_lgstate.core.langgraph_json import (
    LangGraphJsonError,
    find_langgraph_json,
    read_langgraph_json,
)

Profile = Literal["json", "msgpack"]
PROFILES: Final = ("json", "msgpack")
# The checkpointer the checkpoints go to, where it changes a verdict (docs/rules.md, "Measured
# against the savers"): "sqlite" for every saver that serializes each value (the default: SQLite,
# and savers other than these three), "memory" for InMemorySaver, "postgres" for PostgresSaver,
# AsyncPostgresSaver and LangGraph's server.
Saver = Literal["sqlite", "memory", "postgres"]
SAVERS: Final = ("sqlite", "memory", "postgres")
_DEFAULT_SAVER: Final[Saver] = "sqlite"
INI_SECTION: Final = "mypy_lgstate"
TOML_SECTION: Final = "tool.mypy_lgstate"


class ConfigError(Exception):
    """A bad option: the message is the whole line shown to the user."""


class LGStateConfig(NamedTuple):
    """Every option of the plugin; the field names are the option names, the defaults those of the
    configuration reference (docs/configuration.md)."""

    profile: Profile = "json"
    strict_msgpack: bool = False
    derive_allowlist: bool = True
    allowed_msgpack_modules: tuple[str, ...] = ()
    state_classes: tuple[str, ...] = ()
    safe_types: tuple[str, ...] = ()
    lock_file: str = "lgstate.lock"  # relative to the configuration file's directory
    pickle_fallback: bool = False  # msgpack: JsonPlusSerializer(pickle_fallback=True)
    # A project with a langgraph.json and no checkpointer of its own deploys on PostgreSQL.
    saver: Saver = _DEFAULT_SAVER

    def digest(self) -> str:
        """A short hash of the options. mypy stores it with each user module (``report_config_data``:
        a change rechecks them), and the daemon's plugin version includes it (``dmypy run`` restarts)."""
        encoded = json.dumps(self._asdict(), sort_keys=True).encode()
        return short_digest(encoded)


# Each option's kind, told by its default: a str (the profile, the saver, or the lock file's path), a
# bool, or a tuple of dotted names.
_OPTION_KINDS: Final = {name: type(default) for name, default in LGStateConfig._field_defaults.items()}


# ``lgstate check --profile``: set by the command line before the build it runs in its own process.
# Applied here, it is part of the options' digest, so cached results never carry over between profiles.
profile_override: Profile | None = None


def load_config(config_file: str | None, start: str | None = None) -> LGStateConfig:
    """Read the plugin's section of ``config_file`` (mypy's own); defaults when there is none.
    ``start``: where the project's ``langgraph.json`` is looked for (default: the current
    directory)."""
    config = _read_config(config_file, start)
    return config if profile_override is None else config._replace(profile=profile_override)


def read_config(config_file: str | None) -> LGStateConfig:
    """The options of ``config_file``, without the command line's profile override. A file that
    cannot be read or parsed is a ``ConfigError``, like a bad option."""
    return _read_config(config_file, None)


def _read_config(config_file: str | None, start: str | None) -> LGStateConfig:
    config, given = _read_section(config_file)
    if "saver" in given:
        return config
    return config._replace(saver=project_saver(config_file, start))


def project_saver(config_file: str | None, start: str | None = None) -> Saver:
    """The saver a project without a ``saver`` option runs on: PostgreSQL when it has a
    ``langgraph.json`` that names no checkpointer of its own (LangGraph's server)."""
    found = find_langgraph_json(config_file, start)
    if found is None:
        return _DEFAULT_SAVER
    try:
        project = read_langgraph_json(found)
    except LangGraphJsonError as error:
        raise ConfigError(str(error)) from None
    return _DEFAULT_SAVER if project.own_checkpointer else "postgres"


def _read_section(config_file: str | None) -> tuple[LGStateConfig, frozenset[str]]:
    """The options of the plugin's section of ``config_file``, and the names it sets."""
    if not config_file or not os.path.isfile(config_file):
        return LGStateConfig(), frozenset()
    display = _display(config_file)
    if config_file.lower().endswith(".toml"):  # mypy's own test (config_parser.is_toml)
        data = _parse_toml(config_file, display)
        tool = data.get("tool")
        tables = tool if isinstance(tool, dict) else {}
        misspelled = _misspelled_section(tables, prefix="tool.")
        if misspelled is not None:
            _fail(display, misspelled, None, f"unknown section, did you mean [{TOML_SECTION}]?")
        section = tables.get("mypy_lgstate")
        if section is None:
            return LGStateConfig(), frozenset()
        if not isinstance(section, dict):
            _fail(display, TOML_SECTION, None, "must be a table")
        return _build(display, TOML_SECTION, section, from_ini=False), frozenset(section)
    parser = _parse_ini(config_file, display)
    misspelled = _misspelled_section(
        {name: dict(parser.items(name)) for name in parser.sections()}, prefix=""
    )
    if misspelled is not None:
        _fail(display, misspelled, None, f"unknown section, did you mean [{INI_SECTION}]?")
    if not parser.has_section(INI_SECTION):
        return LGStateConfig(), frozenset()
    raw = dict(parser.items(INI_SECTION))
    return _build(display, INI_SECTION, raw, from_ini=True), frozenset(raw)


def _misspelled_section(sections: dict[str, Any], *, prefix: str) -> str | None:
    """A section whose name is the plugin's misspelled (``mypy_lgstat``, ``mypy-lgstate``,
    ``lgstate``), with ``prefix`` (``tool.`` in pyproject.toml): its options would be silently
    ignored. A ``mypy-...`` section is mypy's own per-module section unless it holds one of the
    plugin's options."""
    for name, body in sections.items():
        if name == INI_SECTION or name == "mypy":
            continue
        normalized = name.lower().replace("-", "_")
        if name.startswith("mypy-") and not (
            isinstance(body, dict) and any(key in _OPTION_KINDS for key in body)
        ):
            continue
        close = difflib.SequenceMatcher(None, normalized, INI_SECTION).ratio() >= 0.8
        if close or "lgstat" in normalized:
            return prefix + name
    return None


def _parse_toml(config_file: str, display: str) -> dict[str, Any]:
    # Imported here: an ini configuration should not pay for a TOML parser.
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # mypy itself depends on tomli before 3.11
        import tomli as tomllib

    try:
        with open(config_file, "rb") as f:
            return tomllib.load(f)
    except tomllib.TOMLDecodeError as error:
        # mypy reads such a file as no configuration at all: nothing it says would apply.
        raise ConfigError(f"{display}: not valid TOML: {_one_line(str(error))}") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{display}: cannot be read: {_os_error(error)}") from None


def _parse_ini(config_file: str, display: str) -> configparser.RawConfigParser:
    # Raw, as mypy reads its own sections: a "%" in a value is not an interpolation.
    parser = configparser.RawConfigParser()
    try:
        with open(config_file, encoding="utf-8") as f:
            parser.read_file(f, source=config_file)
    except configparser.MissingSectionHeaderError as error:  # a ParsingError: first
        raise ConfigError(
            f"{display}:{error.lineno}: not valid ini syntax (no [section] above it):"
            f" {error.line.strip()}"
        ) from None
    except configparser.ParsingError as error:
        lineno, line = error.errors[0]
        if line[:1] in ("'", '"'):  # configparser stores the line's repr
            line = ast.literal_eval(line)
        raise ConfigError(f"{display}:{lineno}: not valid ini syntax: {line.strip()}") from None
    except configparser.Error as error:
        raise ConfigError(f"{display}: not valid ini syntax: {_one_line(error.message)}") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{display}: cannot be read: {_os_error(error)}") from None
    return parser


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _os_error(error: OSError | UnicodeDecodeError) -> str:
    if isinstance(error, OSError):
        return error.strerror or str(error)
    return f"not UTF-8 ({error.reason} at byte {error.start})"


# Finding the file ------------------------------------------------------------------------------

# mypy's order: its own files first, then the shared ones when they have a section.
_OWN_FILES: Final = ("mypy.ini", ".mypy.ini")
_SHARED_FILES: Final = ("pyproject.toml", "setup.cfg")


def find_config_file(start: str | None = None) -> str | None:
    """The project's configuration file, found as mypy finds its own from ``start`` (default: the
    current directory) up to the repository root (a directory holding ``.git`` or ``.hg``), except
    that a shared file (pyproject.toml, setup.cfg) counts when it has a section of this plugin's
    even without a mypy section, and when it cannot be parsed or misspells the plugin's section (so
    that the error is reported instead of the file being passed over). The path is relative when ``start`` is."""
    relative = start is None or not os.path.isabs(start)
    directory = os.path.abspath(start if start is not None else os.curdir)
    while True:
        for name in _OWN_FILES:
            if os.path.isfile(os.path.join(directory, name)):
                return _shown(os.path.join(directory, name), relative)
        for name in _SHARED_FILES:
            path = os.path.join(directory, name)
            if os.path.isfile(path) and _has_section(path, ("mypy", "mypy_lgstate"), broken=True):
                return _shown(path, relative)
        if any(os.path.exists(os.path.join(directory, vcs)) for vcs in (".git", ".hg")):
            return None
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def has_mypy_section(config_file: str) -> bool:
    """Whether ``config_file`` has options for mypy itself (a mypy section)."""
    return _has_section(config_file, ("mypy",), broken=False)


def _shown(path: str, relative: bool) -> str:
    return os.path.relpath(path) if relative else path


def _has_section(path: str, names: tuple[str, ...], *, broken: bool) -> bool:
    """Whether ``path`` has one of the sections ``names`` (``broken``: also when it cannot be
    parsed, or has the plugin's section misspelled, so that the error is reported)."""
    try:
        if path.lower().endswith(".toml"):
            tool = _parse_toml(path, path).get("tool")
            tables = tool if isinstance(tool, dict) else {}
            misspelled = broken and _misspelled_section(tables, prefix="") is not None
            return misspelled or any(name in tables for name in names)
        parser = _parse_ini(path, path)
    except ConfigError:
        return broken
    sections = {name: dict(parser.items(name)) for name in parser.sections()}
    misspelled = broken and _misspelled_section(sections, prefix="") is not None
    return misspelled or any(parser.has_section(name) for name in names)


def _build(file: str, section: str, raw: dict[str, Any], *, from_ini: bool) -> LGStateConfig:
    values: dict[str, Any] = {}
    for key, value in raw.items():
        kind = _OPTION_KINDS.get(key)
        if kind is None:
            known = ", ".join(sorted(_OPTION_KINDS))
            meant = closest_name(key, _OPTION_KINDS)
            guess = f", did you mean {meant}?" if meant is not None else ""
            _fail(file, section, key, f"unknown option{guess} (known options: {known})")
        if kind is bool:
            values[key] = _as_bool(file, section, key, value, from_ini)
        elif key == "lock_file":
            if not isinstance(value, str) or not value.strip():
                _fail(file, section, key, f"must be a file path, not {_show(value)}")
            values[key] = value.strip()
        elif key == "saver":
            if value not in SAVERS:
                _fail(
                    file, section, key,
                    f'must be "sqlite", "memory" or "postgres", not {_show(value)}',
                )
            values[key] = value
        elif kind is str:
            if value not in PROFILES:
                _fail(file, section, key, f'must be "json" or "msgpack", not {_show(value)}')
            values[key] = value
        else:
            values[key] = _as_names(file, section, key, value)
    return LGStateConfig(**values)


def _as_bool(file: str, section: str, key: str, value: Any, from_ini: bool) -> bool:
    if isinstance(value, bool):
        return value
    if from_ini and isinstance(value, str):
        lowered = value.strip().lower()
        if lowered in configparser.ConfigParser.BOOLEAN_STATES:
            return configparser.ConfigParser.BOOLEAN_STATES[lowered]
    _fail(file, section, key, f"must be true or false, not {_show(value)}")


def _as_names(file: str, section: str, key: str, value: Any) -> tuple[str, ...]:
    # A comma-separated string is accepted in TOML too, as mypy does for its own list options.
    if isinstance(value, str):
        items: list[Any] = [item.strip() for item in value.replace("\n", ",").split(",")]
        items = [item for item in items if item]
    elif isinstance(value, list):
        items = value
    else:
        _fail(file, section, key, f"must be a list of dotted names, not {_show(value)}")
    for item in items:
        if not isinstance(item, str) or not _is_dotted_name(item):
            _fail(file, section, key, f"{_show(item)} is not a dotted name such as pkg.module.Class")
    return tuple(items)


def closest_name(name: str, known: Iterable[str]) -> str | None:
    """The known name ``name`` most probably misspells: one it starts (``strict`` for
    ``strict_msgpack``), else the closest by difflib's ratio, if any is close."""
    candidates = sorted(known)
    started = [candidate for candidate in candidates if name and candidate.startswith(name)]
    if len(started) == 1:
        return started[0]
    close = difflib.get_close_matches(name, candidates, n=1, cutoff=0.6)
    return close[0] if close else None


def _is_dotted_name(name: str) -> bool:
    return all(part.isidentifier() for part in name.split("."))


def _show(value: Any) -> str:
    """A value as the user wrote it (TOML also has dates and tables, which JSON cannot show)."""
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)


def option_error(config_file: str | None, key: str, problem: str) -> str:
    """The line that names ``config_file`` (mypy's own, or the command's), the plugin's section in
    it and option ``key``, for a problem found once the code is read (a ``state_classes`` entry)."""
    if not config_file:
        return f"{key}: {problem}"
    section = TOML_SECTION if config_file.lower().endswith(".toml") else INI_SECTION
    return f"{_display(config_file)}: [{section}]: {key}: {problem}"


def _display(config_file: str) -> str:
    """The file as messages name it: relative to the current directory, as given."""
    return os.path.relpath(config_file) if not os.path.isabs(config_file) else config_file


def _fail(file: str, section: str, key: str | None, problem: str) -> NoReturn:
    where = f"{file}: [{section}]" + (f": {key}" if key else "")
    raise ConfigError(f"{where}: {problem}")
