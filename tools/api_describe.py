"""Python objects as one-line texts, stable across runs and Python versions: the
describing half of tools/api_snapshot.py.

Annotations are written as the source spells them (short names, unions with ``|``),
defaults and constants as plain data where they are plain data (sets sorted, no memory
addresses), classes as their attrs fields (in constructor order), enum members and the
sorted methods, properties and attributes their toolang classes define.
"""

from __future__ import annotations

import ast
import enum
import functools
import inspect
import re
import types
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import PurePath
from typing import Any

import attrs

# Dunder methods that are part of a class's contract when toolang defines them.
_DUNDERS = frozenset(
    {
        "__init__", "__call__", "__enter__", "__exit__", "__aenter__", "__aexit__",
        "__iter__", "__aiter__", "__next__", "__anext__", "__len__", "__getitem__",
        "__contains__", "__bool__",
    }
)  # fmt: skip
# A dotted name outside quotes (a Literal's strings are kept as written).
_DOTTED = re.compile(r"""('[^']*'|"[^"]*")|\b(?:[A-Za-z_]\w*\.)+([A-Za-z_]\w*)""")
_FORWARD = re.compile(r"ForwardRef\('([^']*)'\)")
_PLAIN = (type(None), bool, int, float, str, bytes)
_LONGEST_VALUE = 400  # a longer constant (a whole starter config) is listed by its type


# -- formatting values and annotations ------------------------------------------------


def annotation(value: Any) -> str:
    """An annotation as the source spells it: a string as written; an object by short
    names, unions with ``|`` (``Optional``/``Union`` reprs differ between Pythons)."""
    if isinstance(value, str):
        return _short(" ".join(value.split()))
    if isinstance(value, typing.ForwardRef):
        return annotation(value.__forward_arg__)
    if value is None or value is type(None):
        return "None"
    if value is Ellipsis:
        return "..."
    if isinstance(value, typing.TypeVar):
        return value.__name__
    if isinstance(value, list):  # Callable's parameter list
        return "[" + ", ".join(annotation(item) for item in value) + "]"
    origin, args = typing.get_origin(value), typing.get_args(value)
    if origin is typing.Union or isinstance(value, types.UnionType):
        return " | ".join(annotation(arg) for arg in args)
    if origin is typing.Literal:
        return f"Literal[{', '.join(repr(arg) for arg in args)}]"
    if origin is not None:
        name = str(getattr(value, "_name", None) or getattr(origin, "__qualname__", origin))
        return f"{name}[{', '.join(annotation(arg) for arg in args)}]" if args else name
    if isinstance(value, type):
        return value.__qualname__
    return _short(_FORWARD.sub(r"\1", " ".join(repr(value).split())))


def _short(text: str) -> str:
    """``text`` with module paths dropped from dotted names (``typing.Any`` → ``Any``)."""
    return _DOTTED.sub(lambda found: found.group(1) or found.group(2), text)


def plain_value(value: Any) -> str | None:
    """``value`` written out when it is plain data (scalars, enum members and containers
    of them, sets sorted) and fits on a line, else ``None``."""
    text = _plain(value)
    return text if text is not None and len(text) <= _LONGEST_VALUE else None


def _plain(value: Any) -> str | None:
    if isinstance(value, enum.Enum):
        return f"{type(value).__qualname__}.{value.name}"
    if isinstance(value, _PLAIN):
        return repr(value)
    if isinstance(value, tuple | list):
        parts = [_plain(item) for item in value]
        if None in parts:
            return None
        inner = ", ".join(typing.cast(list[str], parts))
        if isinstance(value, list):
            return f"[{inner}]"
        return f"({inner},)" if len(parts) == 1 else f"({inner})"
    if isinstance(value, frozenset | set):
        items = [_plain(item) for item in value]
        if None in items:
            return None
        inner = ", ".join(sorted(typing.cast(list[str], items)))
        return f"{type(value).__name__}({{{inner}}})" if items else f"{type(value).__name__}()"
    if isinstance(value, dict | types.MappingProxyType):
        pairs = [(_plain(k), _plain(v)) for k, v in value.items()]
        if any(k is None or v is None for k, v in pairs):
            return None
        return "{" + ", ".join(f"{k}: {v}" for k, v in pairs) + "}"
    return None


def default(value: Any) -> str:
    """A default value, stable across runs: plain data written out, a class or function
    by name, an attrs instance by its repr, anything else by its type."""
    plain = plain_value(value)
    if plain is not None:
        return plain
    if isinstance(value, attrs.Factory):  # type: ignore[arg-type]
        return f"Factory({default(value.factory)})"
    if isinstance(value, type | types.FunctionType | types.BuiltinFunctionType):
        # C modules' callables change names between Python versions (threading.Lock).
        private = getattr(value, "__module__", "_").startswith("_")
        return "<built-in>" if private else value.__qualname__
    if isinstance(value, PurePath):
        return f"Path({str(value)!r})"
    if attrs.has(type(value)) and " at 0x" not in repr(value):
        return repr(value)
    if isinstance(value, re.Pattern):
        return f"re.compile({value.pattern!r})"
    return f"<{type(value).__qualname__}>"


def signature(function: Callable[..., Any], *, bound: bool = False) -> str:
    """``(params) -> return`` of ``function``; ``bound`` drops the first parameter
    (``self``, ``cls``)."""
    try:
        sig = inspect.signature(function)
    except (TypeError, ValueError):
        return "(...)"
    params = list(sig.parameters.values())
    if bound and params and params[0].kind <= inspect.Parameter.POSITIONAL_OR_KEYWORD:
        params = params[1:]
    parts: list[str] = []
    star_written = False
    for index, param in enumerate(params):
        kind = param.kind
        if kind is inspect.Parameter.KEYWORD_ONLY and not star_written:
            parts.append("*")
        star_written = star_written or kind >= inspect.Parameter.VAR_POSITIONAL
        text = {"VAR_POSITIONAL": "*", "VAR_KEYWORD": "**"}.get(kind.name, "") + param.name
        if param.annotation is not inspect.Parameter.empty:
            text += f": {annotation(param.annotation)}"
        if param.default is not inspect.Parameter.empty:
            text += f" = {default(param.default)}"
        parts.append(text)
        last_positional = kind is inspect.Parameter.POSITIONAL_ONLY and (
            index + 1 == len(params) or params[index + 1].kind is not kind
        )
        if last_positional:
            parts.append("/")
    result = f"({', '.join(parts)})"
    if sig.return_annotation is not inspect.Signature.empty:
        result += f" -> {annotation(sig.return_annotation)}"
    return result


# -- describing objects ---------------------------------------------------------------


def annotations_of(owner: Any) -> dict[str, Any]:
    """The annotations a module or class declares itself (as written: strings under
    ``from __future__ import annotations``)."""
    try:
        return dict(inspect.get_annotations(owner))
    except TypeError:
        return {}


def declared_type(annotations: Mapping[str, Any], name: str, value: Any) -> str:
    """The type a constant is declared with: its annotation without ``Final[…]`` or
    ``ClassVar[…]``, or its value's type when it has none (or a bare ``Final``)."""
    written = annotation(annotations[name]) if name in annotations else ""
    for wrapper in ("Final[", "ClassVar["):
        if written.startswith(wrapper) and written.endswith("]"):
            written = written[len(wrapper) : -1]
    return type(value).__qualname__ if written in {"", "Final", "ClassVar"} else written


def _fixture(value: Any) -> tuple[Callable[..., Any], Any] | None:
    """A pytest fixture's function and marker (pytest 8.4+ wraps it; older marks it)."""
    marker = getattr(value, "_fixture_function_marker", None)
    if marker is not None:
        return value._get_wrapped_function(), marker
    marker = getattr(value, "_pytestfixturefunction", None)
    return (value, marker) if marker is not None else None


def _is_alias(value: Any) -> bool:
    return isinstance(value, types.UnionType | types.GenericAlias) or (
        type(value).__module__ == "typing" and not isinstance(value, type)
    )


def declared_final(annotations: Mapping[str, Any], name: str) -> bool:
    """Whether ``name`` is declared ``Final`` (its value, not only its type, is fixed)."""
    return name in annotations and annotation(annotations[name]).startswith("Final")


def describe(value: Any, declared: str | None = None, *, final: bool = False) -> str:
    """One line's text (after ``name: ``) for a namespace-level object."""
    if isinstance(value, type):
        return class_header(value)
    fixture = _fixture(value)
    if fixture is not None:
        return fixture_text(*fixture)
    if inspect.isfunction(value) or inspect.isbuiltin(value):
        prefix = "async function" if inspect.iscoroutinefunction(value) else "function"
        return prefix + signature(value)
    if isinstance(value, typing.TypeVar):
        bound = f" bound={annotation(value.__bound__)}" if value.__bound__ else ""
        return f"type variable{bound}"
    if isinstance(value, typing.NewType):
        return f"new type of {annotation(value.__supertype__)}"
    if _is_alias(value):
        return f"type alias = {annotation(value)}"
    kind = declared or type(value).__qualname__
    # A mutable container not declared Final is state (a registry filled as the
    # process runs), not a contract: only its type is listed.
    mutable = isinstance(value, list | dict | set) and not final
    plain = None if mutable else plain_value(value)
    return f"constant: {kind}" + (f" = {plain}" if plain is not None else "")


def fixture_text(function: Callable[..., Any], marker: Any, *, bound: bool = False) -> str:
    extra = " autouse" if getattr(marker, "autouse", False) else ""
    scope = getattr(marker, "scope", "function")
    return f"fixture{signature(function, bound=bound)} scope={scope}{extra}"


def class_header(cls: type) -> str:
    bases = [
        annotation(base)
        for base in cls.__dict__.get("__orig_bases__", cls.__bases__)
        if base not in (object, typing.Generic, typing.Protocol)
        and typing.get_origin(base) not in (typing.Generic, typing.Protocol)
    ]
    traits = []
    if attrs.has(cls):
        traits.append("attrs frozen" if _frozen(cls) else "attrs")
    if getattr(cls, "_is_protocol", False):
        runtime = getattr(cls, "_is_runtime_protocol", False)
        traits.append("runtime-checkable Protocol" if runtime else "Protocol")
    text = "class" + (f"({', '.join(bases)})" if bases else "")
    return text + (f" [{', '.join(traits)}]" if traits else "")


def _frozen(cls: type) -> bool:
    return getattr(cls.__setattr__, "__name__", "") == "_frozen_setattrs"


def members(cls: type) -> list[tuple[str, str]]:
    """``(name, text)`` for each public member of ``cls``: attrs fields and enum members
    in their order (a constructor's order), then, sorted, the methods, properties and
    attributes the toolang classes of its MRO define."""
    ordered = _fields(cls)
    if isinstance(cls, enum.EnumMeta):
        enum_members: Mapping[str, enum.Enum] = cls.__members__
        ordered += [
            (name, f"member = {default(item.value)}") for name, item in enum_members.items()
        ]
    seen = {name for name, _ in ordered}
    if attrs.has(cls):
        seen.update(field.name for field in attrs.fields(cls))
    rest: list[tuple[str, str]] = []
    for owner in cls.__mro__:
        if owner.__module__.split(".")[0] != "toolang_core":
            continue
        hints = annotations_of(owner)
        for name, raw in owner.__dict__.items():
            if name not in seen and (not name.startswith("_") or name in _DUNDERS):
                seen.add(name)
                text = member_text(cls, name, raw, hints)
                rest.extend([(name, text)] if text is not None else [])
        for name in hints.keys() - seen:
            if not name.startswith("_"):
                seen.add(name)
                rest.append((name, f"attribute: {declared_type(hints, name, None)}"))
    return ordered + sorted(rest)


def _declared(cls: type, name: str) -> Any:
    """The annotation of attribute ``name`` as the class (or a base) wrote it — not
    ``attrs.fields(cls)[...].type``, which ``attrs.resolve_types`` (cattrs does it)
    replaces with the resolved object for the rest of the process."""
    for klass in cls.__mro__:
        found = annotations_of(klass).get(name)
        if found is not None:
            return found
    return None


def _fields(cls: type) -> list[tuple[str, str]]:
    """An attrs class's fields as its ``__init__`` takes them (a private field by its
    alias), with their types, defaults and flags."""
    if not attrs.has(cls):
        return []
    found = []
    for field in attrs.fields(cls):
        name = field.alias if field.init and field.alias else field.name
        if name.startswith("_"):
            continue
        declared = _declared(cls, field.name)
        kind = field.type if declared is None else declared
        text = "field" + (f": {annotation(kind)}" if kind is not None else "")
        if field.default is not attrs.NOTHING:
            text += f" = {default(field.default)}"
        flags = [
            flag for flag, on in (("kw_only", field.kw_only), ("no init", not field.init)) if on
        ]
        found.append((name, text + (f" [{', '.join(flags)}]" if flags else "")))
    return found


def member_text(cls: type, name: str, raw: Any, hints: Mapping[str, Any]) -> str | None:
    """The text of one class member, or ``None`` for one generated by attrs or Protocol."""
    if isinstance(raw, staticmethod):
        return "staticmethod" + signature(raw.__func__)
    if isinstance(raw, classmethod):
        return "classmethod" + signature(raw.__func__, bound=True)
    if isinstance(raw, property):
        returns = inspect.signature(raw.fget).return_annotation if raw.fget else None
        text = "property" + (
            f": {annotation(returns)}" if returns not in (None, inspect.Signature.empty) else ""
        )
        return text + (" [settable]" if raw.fset else "")
    if isinstance(raw, functools.cached_property):
        returns = inspect.signature(raw.func).return_annotation
        return "cached property" + (
            f": {annotation(returns)}" if returns is not inspect.Signature.empty else ""
        )
    if isinstance(raw, types.MemberDescriptorType):  # a __slots__ attribute
        return f"attribute: {annotation(hints[name]) if name in hints else 'slot'}"
    if isinstance(raw, type):
        return class_header(raw)
    if inspect.isfunction(raw):
        generated = raw.__code__.co_filename.startswith("<") or raw.__qualname__.startswith("_")
        if name == "__init__" and (generated or getattr(cls, "_is_protocol", False)):
            return None
        prefix = "async method" if inspect.iscoroutinefunction(raw) else "method"
        return prefix + signature(raw, bound=True)
    fixture = _fixture(raw)
    if fixture is not None:
        return fixture_text(*fixture, bound=True)
    if name in _DUNDERS:
        return None
    plain = plain_value(raw)
    return f"attribute: {declared_type(hints, name, raw)}" + (
        f" = {plain}" if plain is not None else ""
    )


def public_names(module: types.ModuleType) -> list[str]:
    """``__all__``, or the public names the module's source binds at its top level
    (definitions, assignments and ``import x as x`` re-exports; not imported modules)."""
    if hasattr(module, "__all__"):
        return sorted(set(module.__all__))
    source = inspect.getsource(module)
    names: set[str] = set()
    for node in _top_level(ast.parse(source).body):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.ImportFrom | ast.Import):
            names.update(a.asname for a in node.names if a.asname and a.asname == a.name)
    # Modules and type variables are how a module is written, not what it offers.
    unlisted = (types.ModuleType, typing.TypeVar)
    return sorted(
        name
        for name in names
        if not name.startswith("_") and not isinstance(getattr(module, name, None), unlisted)
    )


def _top_level(body: Iterable[ast.stmt]) -> Iterator[ast.stmt]:
    for node in body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue
        if isinstance(node, ast.If | ast.Try):
            yield from _top_level([*node.body, *node.orelse])
        else:
            yield node
