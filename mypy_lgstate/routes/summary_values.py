"""The values of function summaries (``summaries``): each expression a summary keeps, rebuilt in
the module that reads it, with its type by the declarations it names as mypy has them now (a
function's signature, a class's attributes, a module variable's type), which mypy keeps in every
mode (docs/design.md, "Function summaries"). ``reach`` follows the calls; this module gives the
types and the rebuilt expressions the checks of writes judge.

A value whose type the declarations do not tell (what only mypy's inference of that body would
give) is counted as not read.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, NamedTuple

from mypy.erasetype import erase_typevars
from mypy.fixup import TypeFixer
from mypy.maptype import map_instance_to_supertype
from mypy.nodes import (
    ARG_POS,
    CallExpr,
    ConditionalExpr,
    Decorator,
    DictExpr,
    Expression,
    FakeInfo,
    FuncDef,
    ListExpr,
    MypyFile,
    NameExpr,
    OverloadedFuncDef,
    SetExpr,
    StarExpr,
    StrExpr,
    SymbolNode,
    TempNode,
    TupleExpr,
    TypeInfo,
    Var,
)
from mypy.typeops import bind_self, make_simplified_union
from mypy.types import (
    AnyType,
    CallableType,
    Instance,
    LiteralType,
    NoneType,
    Overloaded,
    ProperType,
    TupleType,
    Type,
    TypedDictType,
    TypeOfAny,
    TypeType,
    UninhabitedType,
    deserialize_type,
    has_type_vars,
)
from mypy.typevars import fill_typevars

from mypy_lgstate.routes import bodies, sites
from mypy_lgstate.routes.aliases import proper_type
from mypy_lgstate.routes.summaries import Encoded, Summary

# How many expressions deep a value's type is followed.
DEPTH: Final = 6
OVERWRITE: Final = "langgraph.types.Overwrite"
_ANY: Final = AnyType(TypeOfAny.special_form)
_AWAITABLE: Final = "typing.Awaitable"


class Origin(NamedTuple):
    """The function whose returned dict holds an item."""

    function: str  # its fullname (a closure's: ``outer.<name>``)
    name: str  # how messages name it: ``fn``, ``Class.method``
    path: str | None  # the file it is in, as mypy prints it; ``None``: the module being checked


class Written(NamedTuple):
    """One item of the update a node writes, found through a summary."""

    key: str | None  # ``None``: a ``**x`` spread
    key_line: int
    value: Expression  # rebuilt from the summary; its types are the ``Typer``'s
    origin: Origin


class Reached:
    """What the functions a node's update is built by return, as far as their summaries tell."""

    def __init__(self, typer: Typer) -> None:
        self.items: list[Written] = []
        # The declared update types of the functions reached (a helper declared ``-> Update``).
        self.declared: list[tuple[Type, Origin]] = []
        self.commands: list[tuple[str, int, Origin]] = []  # the keys of the Commands they return
        self.unread: list[str] = []  # what is not known, in words
        self.unread_values = 0  # values whose types the declarations do not tell
        self.followed: list[Origin] = []  # the functions read, in order
        self.reads: set[tuple[str, str]] = set()  # (module, fullname): records and declarations
        self.typer = typer


class Typer:
    """The types of expressions rebuilt from summaries: what ``sites.values_of`` and the channel
    checks ask a checker for."""

    def __init__(self, lookup: Callable[[str], SymbolNode | None]) -> None:
        self._lookup = lookup
        self.types: dict[Expression, Type] = {}

    def lookup_type_or_none(self, node: Expression) -> Type | None:
        return self.types.get(node)

    def named_generic_type(self, name: str, args: list[Type]) -> Instance:
        info = self._lookup(name)
        assert isinstance(info, TypeInfo)
        return Instance(info, args)


class Bound(NamedTuple):
    """An argument a followed function is called with."""

    type: Type | None
    callee: Callee | None  # when it is a function: what calling it runs


class Frame(NamedTuple):
    """A function being read: its summary, and what its parameters are bound to."""

    summary: Summary
    key: str  # the summary's name (a closure's: ``outer.<name>``)
    module: str
    function: FuncDef | None  # its definition, for its declared parameter types (not a closure's)
    bound: dict[int, Bound]
    outer: Frame | None  # the frame of the function a closure was made in
    origin: Origin


class Callee(NamedTuple):
    """What a call runs: a function with its own summary (or only a signature), or a closure."""

    function: FuncDef | None
    closure: tuple[str, str, Frame] | None  # (module, summary name, the frame it was made in)
    bound: dict[int, Bound]

class Values:
    """Rebuilds and types the expressions of summaries, for the checks of one module."""

    def __init__(
        self, lookup: Callable[[str], SymbolNode | None], modules: dict[str, MypyFile]
    ) -> None:
        self._lookup = lookup
        self._modules = modules


    def _build(
        self, encoded: Encoded, line: int, frame: Frame, reached: Reached, depth: int
    ) -> Expression:
        """The expression ``encoded`` stands for: a display rebuilt as a display (each item by its
        own type, as a display of the body is read), anything else a ``TempNode`` of its type."""
        tag = encoded[0]
        typer = reached.typer
        expr: Expression
        if tag == "dict" and depth > 0:
            pairs: list[tuple[Expression | None, Expression]] = []
            for key, value, value_line in encoded[1]:
                built_key = None
                if key is not None:
                    built_key = (
                        StrExpr(key[1]) if key[0] == "s"
                        else self._build(key, value_line, frame, reached, depth - 1)
                    )
                    built_key.set_line(value_line)
                    if isinstance(built_key, StrExpr):
                        typer.types[built_key] = self._literal("builtins.str", key[1])
                pairs.append((built_key, self._build(value, value_line, frame, reached, depth - 1)))
            expr = DictExpr(pairs)
        elif tag in ("list", "tuple", "set") and depth > 0:
            items: list[Expression] = []
            for item, item_line in zip(encoded[1], encoded[2]):
                if item[0] == "*":
                    starred = StarExpr(self._build(item[1], item_line, frame, reached, depth - 1))
                    starred.set_line(item_line)
                    items.append(starred)
                else:
                    items.append(self._build(item, item_line, frame, reached, depth - 1))
            expr = {"list": ListExpr, "tuple": TupleExpr, "set": SetExpr}[tag](items)
        elif tag == "if" and depth > 0:
            condition = TempNode(_ANY)
            expr = ConditionalExpr(
                condition,
                self._build(encoded[1], line, frame, reached, depth - 1),
                self._build(encoded[2], line, frame, reached, depth - 1),
            )
        elif _is_overwrite(encoded) and depth > 0:
            callee = NameExpr("Overwrite")
            callee.fullname = OVERWRITE
            callee.node = self._lookup(OVERWRITE)
            expr = CallExpr(callee, [self._build(encoded[2][0], line, frame, reached, depth - 1)], [ARG_POS], [None])
        else:
            expr = TempNode(_ANY)
        expr.set_line(line)
        typ = self._type(encoded, frame, reached, DEPTH)
        if typ is None:
            if isinstance(expr, TempNode):
                reached.unread_values += 1
        else:
            typer.types[expr] = typ
        return expr

    def _type(self, encoded: Encoded, frame: Frame, reached: Reached, depth: int) -> Type | None:
        """The type of ``encoded`` by the declarations it names; ``None`` when they do not tell."""
        if depth <= 0:
            return None
        deeper = depth - 1
        tag = encoded[0]
        if tag == "s":
            return self._literal("builtins.str", encoded[1])
        if tag == "i":
            return self._literal("builtins.int", encoded[1])
        if tag in ("T", "F"):
            return self._literal("builtins.bool", tag == "T")
        if tag in _PLAIN:
            return self._instance(_PLAIN[tag])
        if tag == "N":
            return NoneType()
        if tag == "g":
            return self._global(encoded[1], reached)
        if tag in ("p", "P"):
            return self._parameter_type(frame, encoded)
        if tag == "t":
            return self._declared(encoded[1])
        if tag in ("n", "L"):
            return self._instance("builtins.function")
        if tag == "a":
            return self._attribute(self._type(encoded[1], frame, reached, deeper), encoded[2], reached)
        if tag == "x":
            return _item(self._type(encoded[1], frame, reached, deeper), encoded[2])
        if tag == "w":
            return self._awaited(self._type(encoded[1], frame, reached, deeper))
        if tag == "call":
            return self._call_type(encoded, frame, reached, deeper)
        if tag == "op":
            return self._operator(encoded, frame, reached, deeper)
        if tag == "if":
            both = [self._type(part, frame, reached, deeper) for part in encoded[1:]]
            return make_simplified_union([t for t in both if t is not None]) if None not in both else None
        if tag in ("list", "set", "tuple"):
            items = [
                self._type(item[1] if item[0] == "*" else item, frame, reached, deeper)
                for item in encoded[1]
            ]
            if None in items:
                return None
            known = [t for t in items if t is not None]
            if tag == "tuple" and not any(item[0] == "*" for item in encoded[1]):
                return TupleType(known, self._instance("builtins.tuple", [_union(known)]))
            if tag == "tuple":
                return self._instance("builtins.tuple", [_ANY])
            return self._instance(f"builtins.{tag}", [_union(known)])
        if tag == "dict":
            keys = [self._type(key, frame, reached, deeper) if key is not None else None for key, _, _ in encoded[1]]
            values = [self._type(value, frame, reached, deeper) for _, value, _ in encoded[1]]
            if None in values:
                return None
            return self._instance(
                "builtins.dict",
                [_union([k for k in keys if k is not None]) if all(k is not None for k in keys) else _ANY,
                 _union([v for v in values if v is not None])],
            )
        if tag == "comp":
            element = self._type(encoded[2], frame, reached, deeper)
            kind = encoded[1]
            if kind == "gen":
                return self._instance("typing.Generator", [element or _ANY, _ANY, _ANY])
            if kind == "dict":
                return self._instance("builtins.dict", [_ANY, element or _ANY])
            return self._instance(f"builtins.{kind}", [element or _ANY])
        return None

    def _literal(self, name: str, value: str | int | bool) -> Instance:
        base = self._instance(name)
        return base.copy_modified(last_known_value=LiteralType(value, base))

    def _instance(self, name: str, args: list[Type] | None = None) -> Instance:
        info = self._lookup(name)
        assert isinstance(info, TypeInfo), name
        return Instance(info, args if args is not None else [_ANY] * len(info.type_vars))

    def _declared(self, data: object) -> Type | None:
        typ = deserialize_type(data)  # type: ignore[arg-type]
        typ.accept(TypeFixer(self._modules, allow_missing=True))
        return None if _is_missing(typ) else typ

    def _global(self, fullname: str, reached: Reached) -> Type | None:
        node = self._lookup(fullname)
        if node is None:
            return None
        reached.reads.add((_module_of(node, fullname), fullname))
        if isinstance(node, TypeInfo):
            return TypeType.make_normalized(fill_typevars(node))
        if isinstance(node, Decorator):
            node = node.var
        if isinstance(node, (Var, FuncDef, OverloadedFuncDef)):
            return node.type
        return None

    def _parameter_type(self, frame: Frame, encoded: Encoded) -> Type | None:
        bound = bound_parameter(frame, encoded)
        if bound is not None and bound.type is not None:
            return bound.type
        holder = frame
        if encoded[0] == "P":
            for _ in range(encoded[1]):
                if holder.outer is None:
                    return None
                holder = holder.outer
        index = encoded[-1]
        defn = holder.function
        if defn is None or not isinstance(defn.type, CallableType):
            return AnyType(TypeOfAny.unannotated) if defn is not None else None
        if index == 0 and not isinstance(defn.info, FakeInfo) and not defn.is_static:
            return fill_typevars(defn.info)  # ``self``
        signature = defn.type
        return signature.arg_types[index] if index < len(signature.arg_types) else None

    def _attribute(self, owner: Type | None, name: str, reached: Reached) -> Type | None:
        proper = proper_type(owner) if owner is not None else None
        if isinstance(proper, AnyType):
            return proper
        class_access = isinstance(proper, TypeType)
        if isinstance(proper, TypeType):
            proper = proper_type(proper.item)
        if isinstance(proper, TypedDictType):
            proper = proper.fallback
        if not isinstance(proper, Instance):
            return None
        found = proper.type.get(name)
        node = found.node if found is not None else None
        if node is None:
            return None
        reached.reads.add((proper.type.module_name, proper.type.fullname))
        declarer = node.info if isinstance(node, (Var, FuncDef)) else None
        instance = (
            map_instance_to_supertype(proper, declarer)
            if isinstance(declarer, TypeInfo) and not isinstance(declarer, FakeInfo)
            else proper
        )
        if isinstance(node, Decorator):
            if node.func.is_property and node.func.type is not None:
                signature = proper_type(node.func.type)
                if isinstance(signature, CallableType):
                    return _expanded(signature.ret_type, instance)
                return None
            typ = node.var.type
            if typ is not None and isinstance(proper_type(typ), CallableType):
                return _bind(typ, instance, node.func.is_class or class_access, node.func.is_static)
            return typ
        if isinstance(node, FuncDef):
            if node.is_property and isinstance(node.type, CallableType):
                return _expanded(node.type.ret_type, instance)
            return _bind(node.type, instance, class_access or node.is_class, node.is_static) if node.type else None
        if isinstance(node, OverloadedFuncDef):
            return _bind(node.type, instance, class_access, False) if node.type else None
        if isinstance(node, Var):
            return _expanded(node.type, instance) if node.type is not None else None
        if isinstance(node, TypeInfo):
            return TypeType.make_normalized(fill_typevars(node))
        return None

    def _awaited(self, typ: Type | None) -> Type | None:
        proper = proper_type(typ) if typ is not None else None
        if isinstance(proper, AnyType):
            return proper
        if not isinstance(proper, Instance):
            return None
        awaitable = self._lookup(_AWAITABLE)
        if isinstance(awaitable, TypeInfo) and proper.type.has_base(_AWAITABLE):
            mapped = map_instance_to_supertype(proper, awaitable)
            return mapped.args[0] if mapped.args else None
        return None

    def _call_type(self, encoded: Encoded, frame: Frame, reached: Reached, depth: int) -> Type | None:
        callee = proper_type(self._type(encoded[1], frame, reached, depth))
        if isinstance(callee, AnyType):
            return callee
        if isinstance(callee, TypeType) and isinstance(callee.item, Instance):
            info = callee.item.type
            if info.type_vars:
                return Instance(info, [_ANY] * len(info.type_vars))
            return callee.item
        if isinstance(callee, Instance):
            call = callee.type.get_method("__call__")
            if isinstance(call, Decorator):
                call = call.func
            if not isinstance(call, FuncDef) or call.type is None:
                return None
            callee = proper_type(_bind(call.type, callee, False, False))
        if isinstance(callee, Overloaded):
            returned = {str(item.ret_type): item.ret_type for item in callee.items}
            if len(returned) != 1:
                return None
            ret = next(iter(returned.values()))
        elif isinstance(callee, CallableType):
            if callee.is_type_obj() and isinstance(proper_type(callee.ret_type), Instance):
                ret = callee.ret_type
            else:
                ret = callee.ret_type
        else:
            return None
        return erase_typevars(ret) if has_type_vars(ret) else ret

    def _operator(self, encoded: Encoded, frame: Frame, reached: Reached, depth: int) -> Type | None:
        _, op, left, right = encoded
        if op in ("and", "or"):
            both = [self._type(left, frame, reached, depth), self._type(right, frame, reached, depth)]
            return make_simplified_union([t for t in both if t is not None]) if None not in both else None
        left_type = proper_type(self._type(left, frame, reached, depth))
        right_type = proper_type(self._type(right, frame, reached, depth))
        if left_type is None or right_type is None:
            return None
        names = {_class_name(left_type), _class_name(right_type)}
        if names <= {"builtins.str"} and op in ("+", "%"):
            return self._instance("builtins.str")
        if names <= {"builtins.int", "builtins.bool"} and op in ("+", "-", "*", "//", "%", "<<", ">>", "&", "|", "^"):
            return self._instance("builtins.int")
        if names <= {"builtins.int", "builtins.float", "builtins.bool"} and op in ("+", "-", "*", "/", "//", "%", "**"):
            return self._instance("builtins.float") if op == "/" or "builtins.float" in names else self._instance("builtins.int")
        if names == {"builtins.list"} and op == "+":
            assert isinstance(left_type, Instance) and isinstance(right_type, Instance)
            return self._instance("builtins.list", [_union([left_type.args[0], right_type.args[0]])])
        if op == "%" and "builtins.str" in names:
            return self._instance("builtins.str")
        return None


_PLAIN: Final = {
    "f": "builtins.float", "c": "builtins.complex", "b": "builtins.bytes", "S": "builtins.str",
    "B": "builtins.bool",
}


def _union(types: list[Type]) -> Type:
    return make_simplified_union(types) if types else UninhabitedType()


def _class_name(typ: ProperType) -> str | None:
    if isinstance(typ, LiteralType):
        typ = typ.fallback
    return typ.type.fullname if isinstance(typ, Instance) else None


def bound_parameter(frame: Frame, encoded: Encoded) -> Bound | None:
    holder: Frame | None = frame
    if encoded[0] == "P":
        for _ in range(encoded[1]):
            holder = holder.outer if holder is not None else None
    if holder is None:
        return None
    return holder.bound.get(encoded[-1])


def _module_of(node: SymbolNode, fullname: str) -> str:
    """The module that defines ``node`` (``fullname`` may name a class member)."""
    if isinstance(node, TypeInfo):
        return node.module_name
    if isinstance(node, Decorator):
        node = node.func
    if isinstance(node, FuncDef):
        return bodies.module_of(node)
    if isinstance(node, Var) and not isinstance(node.info, FakeInfo):
        return node.info.module_name
    return fullname.rpartition(".")[0]

def _bind(typ: Type, instance: Instance, is_class: bool, is_static: bool) -> Type:
    proper = proper_type(typ)
    if is_static or not isinstance(proper, (CallableType, Overloaded)):
        return typ
    bound = bind_self(proper, instance, is_classmethod=is_class)
    return _expanded(bound, instance)


def _expanded(typ: Type, instance: Instance) -> Type:
    from mypy.expandtype import expand_type_by_instance

    return expand_type_by_instance(typ, instance)


def _item(container: Type | None, index: Encoded) -> Type | None:
    proper = proper_type(container) if container is not None else None
    if isinstance(proper, AnyType):
        return proper
    if isinstance(proper, TypedDictType):
        return proper.items.get(index[1]) if index[0] == "s" else None
    if isinstance(proper, TupleType) and index[0] == "i":
        position = index[1]
        return proper.items[position] if -len(proper.items) <= position < len(proper.items) else None
    if isinstance(proper, Instance) and proper.args:
        name = proper.type.fullname
        if name in sites.MAPPINGS or name in ("collections.defaultdict", "collections.OrderedDict"):
            return proper.args[-1]
        if name in ("builtins.list", "typing.Sequence", "typing.MutableSequence") and index[0] != "slice":
            return proper.args[0]
    return None


def _is_overwrite(encoded: Encoded) -> bool:
    return (
        encoded[0] == "call"
        and encoded[1] == ["g", OVERWRITE]
        and len(encoded[2]) == 1
    )


def _is_missing(typ: Type) -> bool:
    """Whether a type read back from a summary names a class this build does not have."""
    proper = proper_type(typ)
    return isinstance(proper, Instance) and proper.type.fullname.startswith("<missing")

