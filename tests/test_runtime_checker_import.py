"""What the runtime checker and the pytest plugin cost at import time.

pytest imports ``mypy_lgstate.pytest_plugin`` in every session where the package is installed; a
test module imports ``mypy_lgstate.runtime``. Neither may pull in mypy, nor LangGraph before a
``CheckedSaver`` is asked for.
"""

from __future__ import annotations

import textwrap

import pytest

from test_runtime_import import _modules_after

pytest_plugins = ["pytester"]


def test_the_runtime_imports_neither_mypy_nor_langgraph() -> None:
    loaded = _modules_after("import mypy_lgstate.runtime\nfrom mypy_lgstate.runtime import find_problems")
    for heavy in ("mypy", "mypyc", "langgraph", "langchain_core", "pydantic"):
        assert heavy not in loaded


def test_checked_saver_imports_langgraph_when_used() -> None:
    loaded = _modules_after("from mypy_lgstate.runtime import CheckedSaver")
    assert "langgraph" in loaded and "mypy" not in loaded


def test_the_pytest_plugin_imports_nothing_heavy() -> None:
    loaded = set(_modules_after("import mypy_lgstate.pytest_plugin", packages=False))
    assert "mypy_lgstate.pytest_plugin" in loaded
    assert not {"mypy_lgstate.runtime", "mypy_lgstate.core.config"} & loaded
    assert not {name.split(".")[0] for name in loaded} & {"mypy", "langgraph", "pydantic"}


def test_the_fixture_in_a_project(pytester: pytest.Pytester) -> None:
    pytester.makefile(".toml", pyproject='[tool.mypy_lgstate]\nprofile = "msgpack"\n')
    pytester.makepyfile(
        test_graph=textwrap.dedent(
            '''
            from datetime import datetime

            import pytest
            from langgraph.graph import START, StateGraph
            from typing_extensions import TypedDict

            from mypy_lgstate.runtime import CheckpointValueError


            class State(TypedDict, total=False):
                when: datetime
                pair: object


            def graph(node, saver):
                builder = StateGraph(State)
                builder.add_node("node", node)
                builder.add_edge(START, "node")
                return builder.compile(checkpointer=saver)


            def test_msgpack_keeps_datetimes(lgstate_saver):
                config = {"configurable": {"thread_id": "1"}}
                graph(lambda state: {"when": datetime.now()}, lgstate_saver).invoke({}, config)


            def test_tuples_fail(lgstate_saver):
                config = {"configurable": {"thread_id": "1"}}
                with pytest.raises(CheckpointValueError, match=r'node\\(\\)\\.pair is "tuple"'):
                    graph(lambda state: {"pair": (1, 2)}, lgstate_saver).invoke({}, config)
            '''
        )
    )
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)


def test_the_fixture_reports_a_bad_option(pytester: pytest.Pytester) -> None:
    pytester.makefile(".toml", pyproject='[tool.mypy_lgstate]\nstrict = true\n')
    pytester.makepyfile(test_graph="def test_saver(lgstate_saver):\n    pass\n")
    # -rN: no short summary, whose line pytest shortens or not by the terminal's width.
    result = pytester.runpytest_subprocess("-q", "-rN", "-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*pyproject.toml: [[]tool.mypy_lgstate[]]: strict: unknown option*"])
    result.stdout.no_fnmatch_line("*Traceback*")
    # Once, and not chained to the ConfigError.
    assert len([line for line in result.stdout.lines if "strict: unknown option, did you" in line]) == 1
    result.stdout.no_fnmatch_line("*During handling of the above exception*")


def test_the_fixture_reports_a_file_that_cannot_be_parsed_once(pytester: pytest.Pytester) -> None:
    # pytest reads pyproject.toml and setup.cfg itself (and stops on a broken one): mypy.ini.
    pytester.makefile(".ini", mypy="[mypy]\n[mypy_lgstate\nprofile = msgpack\n")
    pytester.makepyfile(test_graph="def test_saver(lgstate_saver):\n    pass\n")
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    line = f"{pytester.path / 'mypy.ini'}:2: not valid ini syntax: [mypy_lgstate"
    # Once in the error's section, once in the summary (shortened there); no chained exception.
    assert result.stdout.lines.count(line) == 1
    result.stdout.no_fnmatch_line("*During handling of the above exception*")
    result.stdout.no_fnmatch_line("*Traceback*")


def test_a_failing_write_shows_the_test_and_the_message_not_the_checker(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        test_graph=textwrap.dedent(
            """
            from langgraph.graph import START, StateGraph
            from typing_extensions import TypedDict


            class State(TypedDict, total=False):
                pair: object


            def test_tuples(lgstate_saver):
                builder = StateGraph(State)
                builder.add_node("node", lambda state: {"pair": (1, 2)})
                builder.add_edge(START, "node")
                builder.compile(checkpointer=lgstate_saver).invoke({}, {"configurable": {"thread_id": "1"}})
            """
        )
    )
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(['E   *node().pair is "tuple": the JSON serializer writes it*'])
    # No frame of the checker (its source would come before the message); LangGraph's own stay.
    assert not [line for line in result.stdout.lines if "mypy_lgstate/" in line]
    assert len(result.stdout.lines) < 70  # 120 when the checker's frames showed
