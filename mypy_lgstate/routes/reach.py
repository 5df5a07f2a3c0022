"""What a node writes, followed from where it is registered through the functions that build its
update, across modules, from their summaries (``summaries``, docs/design.md "Function summaries").

A summary holds expressions, not types: they are evaluated here, in the module that reads them,
against the declarations they name as mypy has them now (a function's signature, a class's
attributes, a module variable's type), which mypy keeps in every mode. What is read (each record,
each declaration) is returned with the result, so that the check records it: an edit to any of them
rechecks the reader, in a warm run as in the daemon.

Each item of a dict a followed function returns becomes an expression rebuilt from its summary (the
displays as displays, every other value a ``TempNode``) with its type in a ``Typer``, the map the
checks of writes read types from (``summary_values``): the checks then judge it as they judge an
item of a body read here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from mypy.nodes import Decorator, FuncDef, MypyFile, SymbolNode
from mypy.types import AnyType, CallableType, Instance, NoneType, Type, TypeType

from mypy_lgstate.core.libraries import is_library
from mypy_lgstate.routes import bodies, exported, sites
from mypy_lgstate.routes.aliases import proper_type
from mypy_lgstate.routes.summaries import Encoded, Summary, summarize
from mypy_lgstate.routes.summary_values import (
    Bound,
    Callee,
    Frame,
    Origin,
    Reached,
    Typer,
    Values,
    Written,
    bound_parameter,
)

# How many calls deep an update is followed (a guard against recursion, too).
DEPTH: Final = 6


class Follower(Values):
    """Follows node updates through summaries, for the checks of one module."""

    def __init__(
        self,
        lookup: Callable[[str], SymbolNode | None],
        records: exported.Records,
        tree: MypyFile,
        modules: dict[str, MypyFile],
        path_of: Callable[[str], str],
    ) -> None:
        super().__init__(lookup, modules)
        self._records = records
        self._tree = tree
        self._path_of = path_of
        self._local: dict[FuncDef, dict[str, Summary]] = {}
        self._skip: FuncDef | None = None

    # Summaries -----------------------------------------------------------------------------------

    def summary(self, defn: FuncDef, reads: set[tuple[str, str]]) -> Summary | None:
        """The summary of ``defn``: read from the syntax tree when it is a function of the module
        being checked, else from what its module recorded."""
        module = bodies.module_of(defn)
        if module == self._tree.fullname and defn.body.body:
            known = self._local.get(defn)
            if known is None:
                known = self._local[defn] = summarize(defn, self._tree)
            return known.get(defn.fullname)
        reads.add((module, exported.member_name(module)))
        return self._records.summary(module, defn.fullname)

    def _closure_summary(self, module: str, key: str, reads: set[tuple[str, str]]) -> Summary | None:
        if module == self._tree.fullname:
            for found in self._local.values():
                if key in found:
                    return found[key]
            return None
        reads.add((module, exported.member_name(module)))
        return self._records.summary(module, key)

    def _origin(self, module: str, key: str, defn: FuncDef | None) -> Origin:
        name = bodies.function_name(defn) if defn is not None else key.rpartition(".")[2]
        path = None if module == self._tree.fullname else self._path_of(module)
        return Origin(key, name, path)

    def _unread(self, module: str) -> str:
        """Why no summary of a function of ``module`` is known, in words."""
        if self._records.recorded(module):
            return "not read"
        file = self._modules.get(module)
        if file is None or is_library(file.path):
            return "in an installed library"
        # mypy parses such a module without its function bodies: nothing to summarize.
        return "not read: mypy follows its module silently or ignores its errors, and drops its bodies"

    # Following a node ----------------------------------------------------------------------------

    def has_summary(self, defn: FuncDef) -> bool:
        """Whether ``defn``'s body can be read here or from its module's record."""
        return self.summary(defn, set()) is not None

    def node(self, defn: FuncDef, state: Type | None, *, skip: FuncDef | None = None) -> Reached:
        """What the node ``defn`` writes, as far as its summary and those of the functions it calls
        tell. ``state``: the graph's state, read for the node's state parameter when that is not
        declared as a state class; ``skip``: a function whose own items are not rebuilt (a node of
        the module being checked, whose body is read with mypy's types)."""
        reached = Reached(Typer(self._lookup))
        self._skip = skip
        if self.summary(defn, reached.reads) is None:
            module = bodies.module_of(defn)
            reached.unread.append(f"the body of {bodies.function_name(defn)}() is {self._unread(module)}")
            return reached
        self.run(Callee(defn, None, {}), reached, DEPTH, state, node=True)
        return reached

    def wrapped(
        self,
        wrapper: FuncDef,
        arguments: list[FuncDef | None],
        state: Type | None,
        *,
        skip: FuncDef | None = None,
    ) -> Reached:
        """What a node registered through ``wrapper`` (``traced(fn)``, ``@traced``) writes: what the
        function the wrapper returns returns, with the wrapper's parameters bound to ``arguments``
        (pass-through when it returns the wrapped call's result unchanged)."""
        reached = Reached(Typer(self._lookup))
        self._skip = skip
        bound = {
            index: Bound(None, Callee(function, None, {}))
            for index, function in enumerate(arguments)
            if function is not None
        }
        runs = self.returned_function(Callee(wrapper, None, bound), reached, DEPTH)
        if runs is None:
            reached.unread.append(
                f"{bodies.function_name(wrapper)}() returns a function no summary tells (a lambda, a"
                " functools.partial, a value typed Any)"
            )
            return reached
        self.run(runs, reached, DEPTH, state)
        return reached

    def _read(self, frame: Frame, reached: Reached, depth: int) -> None:
        summary = frame.summary
        reached.followed.append(frame.origin)
        own = frame.function is None or frame.function is not self._skip
        if own:
            for key, key_line, value_line, value in summary.items:
                built = self._build(value, value_line, frame, reached, DEPTH)
                reached.items.append(Written(key, key_line, built, frame.origin))
            reached.commands.extend((key, line, frame.origin) for key, line in summary.commands)
            reached.unread.extend(f"{frame.origin.name}() returns {why}" for why in summary.opaque)
        for call in summary.calls:
            self._follow_call(call, frame, reached, depth - 1)

    def _follow_call(self, call: Encoded, frame: Frame, reached: Reached, depth: int) -> None:
        """The update a returned call gives: what its function returns."""
        while call[0] == "w":
            call = call[1]
        if call[0] != "call":
            reached.unread.append(f"{frame.origin.name}() returns a value built elsewhere")
            return
        if depth <= 0:
            reached.unread.append(f"{frame.origin.name}() returns through too many calls")
            return
        callee = self._callee(call[1], frame, reached, depth)
        if callee is None:
            typ = self._type(call, frame, reached, depth)
            self._declared_result(typ, call, frame, reached)
            return
        callee = callee._replace(bound={**callee.bound, **self._arguments(call, callee, frame, reached)})
        self.run(callee, reached, depth)

    def run(
        self,
        callee: Callee,
        reached: Reached,
        depth: int,
        state: Type | None = None,
        *,
        node: bool = False,
    ) -> None:
        """What calling ``callee`` returns, read into ``reached``. ``state``: the graph's state, for
        a node's state parameter that is not declared as a state class; ``node``: ``callee`` is the
        node itself, whose returned dicts are read whatever it declares (their keys are checked
        when its declared type names none, or names the whole state)."""
        if callee.closure is not None:
            module, key, outer = callee.closure
            summary = self._closure_summary(module, key, reached.reads)
            if summary is None:
                reached.unread.append(f"{key.rpartition('.')[2]}() records no summary")
                return
            bound = callee.bound
            if state is not None and summary.state not in bound:
                bound = {**bound, summary.state: Bound(state, None)}
            frame = Frame(summary, key, module, None, bound, outer, self._origin(module, key, None))
            self._read(frame, reached, depth)
            return
        defn = callee.function
        assert defn is not None
        reached.reads.add((bodies.module_of(defn), defn.fullname))
        ret = sites.node_return_type(defn.type) if defn.type is not None else None
        module = bodies.module_of(defn)
        origin = self._origin(module, defn.fullname, defn)
        if ret is not None and not node and not bodies.is_loose(ret) and not _names_no_key(ret):
            reached.declared.append((ret, origin))
            return
        summary = self.summary(defn, reached.reads)
        if summary is None:
            reached.unread.append(f"{origin.name}() returns a dict whose body is {self._unread(module)}")
            return
        bound = callee.bound
        if state is not None and summary.state not in bound and _loose_parameter(defn, summary.state):
            bound = {**bound, summary.state: Bound(state, None)}
        self._read(Frame(summary, defn.fullname, module, defn, bound, None, origin), reached, depth)

    def _declared_result(self, typ: Type | None, call: Encoded, frame: Frame, reached: Reached) -> None:
        proper = proper_type(typ) if typ is not None else None
        if proper is None or isinstance(proper, AnyType) or bodies.is_loose(proper):
            reached.unread.append(
                f"{frame.origin.name}() returns a dict built elsewhere (a call whose type names no key)"
            )
        elif not isinstance(proper, NoneType):
            reached.declared.append((proper, frame.origin))

    def _arguments(
        self, call: Encoded, callee: Callee, frame: Frame, reached: Reached
    ) -> dict[int, Bound]:
        """The parameters of ``callee`` bound to the call's arguments (positional ones by their
        place, keywords by their name)."""
        _, _, args, kinds, names = call
        first = len(callee.bound)  # a method's ``self``, already bound
        defn = callee.function
        # ``arg_names``: a function of a module loaded from the cache has no ``arguments``
        parameters = list(defn.arg_names) if defn is not None else []
        found: dict[int, Bound] = {}
        position = first
        for arg, kind, name in zip(args, kinds, names):
            if kind == "p":
                index: int | None = position
                position += 1
            elif kind == "n" and name in parameters:
                index = parameters.index(name)
            else:
                continue
            assert index is not None
            found[index] = Bound(
                self._type(arg, frame, reached, DEPTH), self._callee(arg, frame, reached, DEPTH)
            )
        return found

    def _callee(self, encoded: Encoded, frame: Frame, reached: Reached, depth: int) -> Callee | None:
        """What calling ``encoded`` runs, when a summary can tell: a function, a method of a
        value's class, a closure, a function a parameter is bound to, or one a call returns."""
        tag = encoded[0]
        if tag == "g":
            node = self._lookup(encoded[1])
            if isinstance(node, Decorator):
                node = node.func
            if isinstance(node, FuncDef):
                return Callee(node, None, {})
            return None
        if tag == "n":
            return Callee(None, (frame.module, f"{frame.key}.{encoded[1]}", frame), {})
        if tag in ("p", "P"):
            bound = bound_parameter(frame, encoded)
            return bound.callee if bound is not None else None
        if tag == "a":
            owner = proper_type(self._type(encoded[1], frame, reached, depth))
            info = owner.type if isinstance(owner, Instance) else None
            class_access = False
            if isinstance(owner, TypeType) and isinstance(owner.item, Instance):
                info, class_access = owner.item.type, True
            method = info.get_method(encoded[2]) if info is not None else None
            if isinstance(method, Decorator):
                method = method.func
            if not isinstance(method, FuncDef):
                return None
            reached.reads.add((method.info.module_name, method.info.fullname))
            if method.is_static or class_access and not method.is_class:
                return Callee(method, None, {})
            assert owner is not None
            return Callee(method, None, {0: Bound(owner, None)})
        if tag == "call":
            made = self._callee(encoded[1], frame, reached, depth)
            if made is None or depth <= 0:
                return None
            made = made._replace(bound={**made.bound, **self._arguments(encoded, made, frame, reached)})
            return self.returned_function(made, reached, depth - 1)
        return None

    def returned_function(self, callee: Callee, reached: Reached, depth: int) -> Callee | None:
        """The function calling ``callee`` returns (a factory's closure, what a decorator is
        given), when its summary names exactly one."""
        if callee.closure is not None:
            module, key, outer = callee.closure
            summary = self._closure_summary(module, key, reached.reads)
            frame_outer: Frame | None = outer
            defn = None
        else:
            defn = callee.function
            assert defn is not None
            module, key = bodies.module_of(defn), defn.fullname
            summary = self.summary(defn, reached.reads)
            frame_outer = None
        if summary is None or len(summary.functions) != 1:
            return None
        frame = Frame(
            summary, key, module, defn, callee.bound, frame_outer, self._origin(module, key, defn)
        )
        return self._callee(summary.functions[0], frame, reached, depth)


def _names_no_key(ret: Type) -> bool:
    """``dict[str, V]``: a declared type that names no key (the summary tells them)."""
    proper = proper_type(ret)
    return isinstance(proper, Instance) and proper.type.fullname in sites.MAPPINGS


def _loose_parameter(defn: FuncDef, index: int) -> bool:
    """Whether a node's state parameter is not declared as a state class (``dict[str, Any]``,
    ``Any``, nothing): LangGraph gives it the graph's state."""
    signature = defn.type
    if not isinstance(signature, CallableType) or index >= len(signature.arg_types):
        return True
    declared = proper_type(signature.arg_types[index])
    if isinstance(declared, AnyType):
        return True
    return isinstance(declared, Instance) and declared.type.fullname in sites.MAPPINGS
