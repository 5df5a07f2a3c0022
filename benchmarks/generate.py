"""Generate a synthetic application for benchmarking mypy-lgstate, in one of three layouts.

    python benchmarks/generate.py OUTDIR --modules 500 [--layout dense|realistic|plain] [--seed 0]

writes the package OUTDIR/app with at least ``--modules`` modules.

``dense`` (the default): nearly every module holds graph code. The app is a set of "domains"
(app/<domain>/...), each with TypedDict, pydantic and dataclass states, sync and async nodes in
modules of their own (``nodes/``: typed updates, and ``-> dict[str, Any]`` nodes whose updates are
read from their bodies), ``Command[Literal[...]]`` / ``interrupt`` / ``Send`` sites and three
compiled graphs registering those nodes (``graph.py``), a functional-API
workflow, a LangChain agent with middleware, and a graph built by a ``StateGraph`` subclass around a
helper schema, plus a few shared core modules. Domains import states, helpers and graphs from earlier domains, so the import
graph is a realistic DAG rather than isolated islands.

``realistic``: laid out like real LangGraph applications, in which most modules import neither
LangGraph nor LangChain. About 30% of the modules import langgraph, langchain or langchain_core
(tools, prompts, documents, chat messages, graph states, graphs) and about 10% build graphs, nodes or
agents: the dense layout's domains, each with one more graph whose nodes call the features'
services. The other two thirds are ordinary application code ("features": pydantic models,
dataclass entities, request schemas, repositories, HTTP clients over httpx, services, helpers and
API handlers, plus shared core and utility modules).

``plain``: the same ordinary application code only, with no LangGraph or LangChain import anywhere.
In both these layouts, most modules depend on ``app/core/types.py``, the module the
one-module-edit benchmark changes.

The code type-checks with plain ``mypy --strict`` without errors. About one graph-state field in
thirty has a type that does not survive a checkpoint round trip (datetime, tuple, set), so that the
plugin has something to report (the ordinary models have such fields too: they are no graph state,
and the plugin must not report them). The output is fully determined by ``--modules``, ``--layout``
and ``--seed``.

The generator is split by what it writes, into sibling modules this one imports as top-level
modules (the directory of a script run as ``python benchmarks/...`` is on ``sys.path``):

- ``gen_common.py``: what every layout shares (field types, the field maker, helpers for writing
  a module's text);
- ``dense_domain.py``: a LangGraph domain, and the writers of its state and node modules;
- ``dense_app.py``: the dense layout: the core modules, a domain's routing, graph, workflow and
  agent modules, and the layout put together;
- ``features.py``: the features of ordinary application code of the realistic and plain layouts;
- ``layered_core.py``: the shared core and utility modules of those two layouts;
- ``layered_app.py``: the realistic and plain layouts put together, and the realistic layout's
  additions to a LangGraph domain.

Standard library only: ``run.py`` imports this module and calls :func:`generate`.
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import shutil
from pathlib import Path

import dense_app
import layered_app
from gen_common import BUILDER_KINDS, LANGCHAIN_IMPORT, PACKAGE, FieldMaker

LAYOUTS = ("dense", "realistic", "plain")


@dataclasses.dataclass(frozen=True)
class GeneratedApp:
    root: Path  # directory to run mypy in; contains the package directory
    package_dir: Path
    module_count: int
    bad_field_count: int
    edit_target: Path  # the module the one-module-edit benchmark appends a public name to
    layout: str = "dense"
    langchain_modules: int = 0  # modules that import langgraph, langchain or langchain_core
    builder_modules: int = 0  # modules that build graphs, nodes or agents
    ordinary_modules: int = 0  # modules that do neither
    kinds: tuple[tuple[str, int], ...] = ()  # (what a module is, how many there are), most first

    def shares(self) -> str:
        """How much of the app is LangGraph code, in one line."""
        return (
            f"{self.langchain_modules} of {self.module_count} modules "
            f"({self.langchain_modules / self.module_count:.1%}) import langgraph/langchain, "
            f"{self.builder_modules} ({self.builder_modules / self.module_count:.1%}) "
            "build graphs, nodes or agents, "
            f"{self.ordinary_modules} ({self.ordinary_modules / self.module_count:.1%}) do neither"
        )


def generate(outdir: Path, modules: int, seed: int = 0, layout: str = "dense") -> GeneratedApp:
    """Write OUTDIR/app with at least `modules` modules, replacing any previous OUTDIR/app."""
    rng = random.Random(seed)
    maker = FieldMaker(rng, cycle_bad_types=layout != "dense")
    if layout == "dense":
        files, kinds = dense_app.app_files(modules, rng, maker)
        edit_target = "core/records.py"
    elif layout in LAYOUTS:
        files, kinds = layered_app.app_files(modules, rng, maker, langgraph=layout == "realistic")
        edit_target = "core/types.py"
    else:
        raise ValueError(f"unknown layout {layout!r}; expected one of {', '.join(LAYOUTS)}")

    package_dir = outdir / PACKAGE
    if package_dir.exists():
        shutil.rmtree(package_dir)
    for relative, text in files.items():
        path = package_dir / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    counts: dict[str, int] = {}
    for kind in kinds.values():
        counts[kind] = counts.get(kind, 0) + 1
    importing = {path for path, text in files.items() if LANGCHAIN_IMPORT.search(text)}
    building = {path for path, kind in kinds.items() if kind in BUILDER_KINDS}
    return GeneratedApp(
        root=outdir,
        package_dir=package_dir,
        module_count=len(files),
        bad_field_count=maker.bad,
        edit_target=package_dir / edit_target,
        layout=layout,
        langchain_modules=len(importing),
        builder_modules=len(building),
        ordinary_modules=len(files) - len(importing | building),
        kinds=tuple(sorted(counts.items(), key=lambda item: (-item[1], item[0]))),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("outdir", type=Path, help="directory to write the app package into")
    parser.add_argument("--modules", type=int, default=500, help="minimum number of modules (default 500)")
    parser.add_argument("--layout", choices=LAYOUTS, default="dense", help="which application (default dense)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    args = parser.parse_args()
    app = generate(args.outdir, args.modules, args.seed, args.layout)
    print(
        f"wrote {app.module_count} modules ({app.layout} layout) to {app.package_dir} "
        f"({app.bad_field_count} deliberately checkpoint-unsafe state fields)"
    )
    print(app.shares())
    print("modules by kind: " + ", ".join(f"{kind} {count}" for kind, count in app.kinds))
    print(f"edit target: {app.edit_target.relative_to(app.root)}")


if __name__ == "__main__":
    main()
