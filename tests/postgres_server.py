"""A PostgreSQL server for the tests that read a real PostgreSQL store.

The server is Debian's PostgreSQL (``/usr/lib/postgresql/<version>/bin``; ``.ci/run`` installs it
on a machine without it). It refuses to run as root, so as root it runs as the ``postgres`` user,
in a temporary data directory that user owns, listening only on a unix socket in that directory:
no port to collide with. A missing PostgreSQL fails the test that needs it, with what to install:
never a silent skip.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator

import pytest

USER = "postgres"


def _bindir() -> str:
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda path: int(path.split("/")[4]) if path.split("/")[4].isdigit() else 0,
    )
    if not found:
        pytest.fail(
            "PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb): apt-get install -y"
            " postgresql, as .ci/run does",
            pytrace=False,
        )
    return os.path.dirname(found[-1])


def _as_server_user(command: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return command
    return ["runuser", "-u", USER, "--", *command]


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """The socket directory of a running server; databases are made with ``make_database``."""
    bindir = _bindir()
    root = tempfile.mkdtemp(prefix="lgstate-pg-")
    data = os.path.join(root, "data")
    if os.geteuid() == 0:
        account = pwd.getpwnam(USER)
        os.chown(root, account.pw_uid, account.pw_gid)
    os.chmod(root, 0o755)
    subprocess.run(
        _as_server_user([
            f"{bindir}/initdb", "-D", data, "-U", USER, "--auth=trust", "-E", "UTF8", "--no-sync",
        ]),
        check=True, capture_output=True,
    )
    options = f"-k {root} -c listen_addresses='' -c fsync=off -c full_page_writes=off"
    subprocess.run(
        _as_server_user([
            f"{bindir}/pg_ctl", "-D", data, "-o", options, "-l", os.path.join(root, "log"), "-w",
            "start",
        ]),
        check=True, capture_output=True,
    )
    try:
        yield root
    finally:
        subprocess.run(
            _as_server_user([f"{bindir}/pg_ctl", "-D", data, "-m", "immediate", "-w", "stop"]),
            capture_output=True,
        )
        shutil.rmtree(root, ignore_errors=True)


def make_database(server: str, name: str) -> str:
    """A new, empty database on ``server``; its URL."""
    import psycopg

    with psycopg.connect(f"postgresql://{USER}@/postgres?host={server}", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    return f"postgresql://{USER}@/{name}?host={server}"


def checksum(url: str) -> dict[str, str]:
    """A digest of every row of every table: equal before and after, nothing was written."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        tables = [
            row[0] for row in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename"
            )
        ]
        digests = {}
        for table in tables:
            row = conn.execute(
                f"SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) FROM {table} t"
            ).fetchone()
            digests[table] = row[0] if row else ""
        return digests
