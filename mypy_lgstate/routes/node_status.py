"""Why a node is checked or not, in words the user can act on (``lgstate report``, and the coverage
line of ``lgstate check``): its status, the reason, and the category the coverage line counts it
under (a key of ``NOT_CHECKED``; a new kind of reason adds a row there).

A node is *checked* from its declared return type, or from its *body* once the checks have read it
(``coverage_records.NodeRecord``); else it is *unchecked* (its type is too loose and no body of it can be
read here) or *opaque* (no return type can be read at all).
"""

from __future__ import annotations

from typing import Final, Literal, NamedTuple

from mypy.checker import TypeChecker
from mypy.messages import format_type_bare
from mypy.nodes import CallExpr, Decorator, Expression, MemberExpr, NameExpr, RefExpr, TypeInfo
from mypy.types import AnyType, Instance, Type, TypeOfAny, get_proper_type

from mypy_lgstate.core.libraries import is_library
from mypy_lgstate.routes import bodies, discovery, sites

# "checked": from its declared return type; "body": from what its body returns (``bodies``).
NodeStatus = Literal["checked", "body", "unchecked", "opaque"]
NODE_STATUSES: Final[tuple[NodeStatus, ...]] = ("checked", "body", "unchecked", "opaque")


class Category(NamedTuple):
    """How the coverage line counts the nodes of one kind that are not checked."""

    one: str  # after "1"
    many: str  # after any other count


# Why nodes are not checked, by category: the coverage line reads "not checked: 3 defined in another
# module, 1 compiled subgraph". In the order the line lists them.
NOT_CHECKED: Final[dict[str, Category]] = {
    "wrapper": Category("through an Any-typed wrapper", "through an Any-typed wrapper"),
    "other module": Category("defined in another module", "defined in another module"),
    "unannotated": Category("unannotated", "unannotated"),
    "built elsewhere": Category(
        "returning a dict built elsewhere", "returning a dict built elsewhere"
    ),
    "inferred": Category(
        "with values only mypy's inference types", "with values only mypy's inference types"
    ),
    "loose": Category("typed loosely, with no body to read", "typed loosely, with no body to read"),
    "unread": Category("whose body was not read", "whose body was not read"),
    "library": Category("of an installed library", "of installed libraries"),
    "any": Category("typed Any", "typed Any"),
    "subgraph": Category("compiled subgraph", "compiled subgraphs"),
    "prebuilt": Category("prebuilt node", "prebuilt nodes"),
    "runnable": Category("Runnable", "Runnables"),
    "no signature": Category("with no call signature", "with no call signature"),
    # Not nodes: an agent whose middleware list is not resolved, whose hooks are not known.
    "unresolved agent": Category(
        "agent whose middleware is not known", "agents whose middleware is not known"
    ),
}
UNTYPED: Final = "mypy does not check an unannotated function: annotate it or set check_untyped_defs"


DECLARE: Final = "declare its update type (a TypedDict)"


def declared_return(return_type: Type | None, api: TypeChecker) -> str:
    proper = get_proper_type(return_type) if return_type is not None else None
    if proper is None or isinstance(proper, AnyType) and proper.type_of_any == TypeOfAny.unannotated:
        return "has no return type"
    return f'returns "{format_type_bare(proper, api.options)}"'


def through(node: sites.Node) -> str:
    """``add_node("n", traced(fn))``: the node is ``fn`` (``builders.registered_node``)."""
    if node.through is None:
        return ""
    return f" ({node.through})"


def node_status(
    node: sites.Node,
    return_type: Type | None,
    api: TypeChecker,
    read: bool,
) -> tuple[NodeStatus, str | None, str | None]:
    """``read``: its body is read, here or from summaries (``coverage_records.NodeRecord`` says how far)."""
    if return_type is None:
        return ("opaque", *_opaque_reason(node, api))
    if not sites.update_shape(return_type, node.name).untyped:
        return "checked", None, None
    if read:
        return "body", None, None  # unchecked until read (NodeRecord)
    declared = declared_return(return_type, api)
    defn = bodies.definition(node)
    module = bodies.module_of(defn) if defn is not None else None
    if module is not None and module != api.tree.fullname:
        file = api.modules.get(module)
        if file is None or is_library(file.path):
            return "unchecked", f"{declared}, and its body is in an installed library", "library"
    if defn is None and _defined_elsewhere(node, api):
        reason = (
            f"{declared}, and it is defined in another module, whose body is not read here:"
            f" {DECLARE}, or define it in the module that adds it"
        )
        return "unchecked", reason, "other module"
    if defn is not None and defn.is_dynamic() and not api.options.check_untyped_defs:
        return "unchecked", f"{declared}: {UNTYPED}", "unannotated"
    reason = f"{declared}, and no body of it can be read: {DECLARE}"
    return "unchecked", reason, "loose"


def _defined_elsewhere(node: sites.Node, api: TypeChecker) -> bool:
    """Whether the node is defined in another module than the one that adds it, by the name it is
    added under (``Nodes.static``, ``nodes.cached`` wrapped by ``functools.lru_cache``), which may
    name no function definition."""
    expr = node.expr
    if isinstance(expr, RefExpr) and expr.fullname:
        return not expr.fullname.startswith(api.tree.fullname + ".")
    if isinstance(expr, MemberExpr) and isinstance(expr.expr, RefExpr):
        owner = expr.expr.node  # a class's method: Nodes.static
        return isinstance(owner, TypeInfo) and owner.module_name != api.tree.fullname
    return False


def _opaque_reason(node: sites.Node, api: TypeChecker) -> tuple[str, str]:
    """Why a node's return type cannot be read, and its category."""
    proper = get_proper_type(node.type)
    if isinstance(proper, Instance) and proper.type.has_base(discovery.RUNNABLE):
        name = proper.type.fullname
        if name.startswith("langgraph.prebuilt."):
            return f"a prebuilt node ({proper.type.name})", "prebuilt"
        if name.startswith(("langgraph.graph.state.Compiled", "langgraph.pregel.")):
            return "a compiled subgraph: its own nodes are listed under its graph", "subgraph"
        return f'a Runnable ("{format_type_bare(node.type, api.options)}")', "runnable"
    if isinstance(proper, AnyType):
        wrapper = _wrapper_name(node.expr)
        if wrapper is not None:
            return (
                f"{wrapper}, whose result is typed Any, so what the node writes is not known: type"
                f" {wrapper.split()[-1]} to return what it wraps (Callable[P, R] of its argument),"
                " or add the function itself",
                "wrapper",
            )
        return "typed Any, so what the node writes is not known: give it a type", "any"
    shown = format_type_bare(node.type, api.options)
    return f'its type "{shown}" is not a callable with a signature', "no signature"


def _wrapper_name(expr: Expression | None) -> str | None:
    """How a node typed Any came from a function: ``registered through traced_node()`` for
    ``traced_node(fn)``, ``decorated with @traced`` for a function so decorated."""
    if isinstance(expr, CallExpr) and isinstance(expr.callee, (NameExpr, MemberExpr)):
        return f"registered through {expr.callee.name}()"
    target = expr.node if isinstance(expr, RefExpr) else None
    if isinstance(target, Decorator) and target.original_decorators:
        decorator = target.original_decorators[0]
        if isinstance(decorator, CallExpr):
            decorator = decorator.callee
        if isinstance(decorator, (NameExpr, MemberExpr)):
            return f"decorated with @{decorator.name}"
    return None
