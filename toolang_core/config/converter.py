"""Structure raw TOML data into attrs classes, strictly, with errors people can act on.

cattrs is lenient by default (``int("4")`` passes, a string is a fine ``list[str]``);
configuration must not be. This converter accepts exactly the TOML types a field
declares, expands ``~`` and ``${ENV}`` in paths, and turns every failure into one
line that names the file, the key path, what was expected and what was found.
"""

from __future__ import annotations

import difflib
import enum
import math
import typing
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar, get_args, get_origin

import attrs
import cattrs
from cattrs.errors import (
    ClassValidationError,
    ForbiddenExtraKeysError,
    IterableValidationError,
    IterableValidationNote,
)

from toolang_core.config.expand import expand_env, expand_path
from toolang_core.config.types import EnvStr, Secret
from toolang_core.config.validators import AtLeast, AtMost
from toolang_core.errors import ConfigError
from toolang_core.limits import INT64_MAX, INT64_MIN

T = TypeVar("T")
KeyPath = tuple[str | int, ...]


class ConfigTypeError(TypeError):
    """A value has the wrong TOML type (or is not one of the allowed choices)."""

    def __init__(self, expected: str, found: object) -> None:
        self.expected = expected
        self.found = found
        super().__init__(f"expected {expected}, found {describe_value(found)}")


class KeyProblems(ValueError):
    """Several problems found by one structure hook, each at a key path relative to it."""

    def __init__(self, items: list[tuple[KeyPath, str]]) -> None:
        self.items = items
        super().__init__("; ".join(message for _, message in items))


def describe_value(value: object) -> str:
    """Say what a TOML value is, for a person: ``a string ("four")``."""
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, int):
        return f"an integer ({value})"
    if isinstance(value, float):
        return f"a number ({value})"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f'a string ("{shown}")'
    if isinstance(value, list):
        return "an array"
    if isinstance(value, Mapping):
        return "a table"
    if value is None:
        return "nothing"
    return type(value).__name__


def format_key_path(path: KeyPath) -> str:
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            text = part if part.replace("_", "").replace("-", "").isalnum() else f'"{part}"'
            out += ("." if out else "") + text
    return out


def _strict(kind: type, expected: str) -> Callable[[Any, Any], Any]:
    def structure(value: Any, _: Any) -> Any:
        if isinstance(value, bool) and kind is not bool:
            raise ConfigTypeError(expected, value)
        if kind is float and isinstance(value, int):
            value = float(value)
        if not isinstance(value, kind):
            raise ConfigTypeError(expected, value)
        # TOML allows nan, inf and integers of any size; a store or a timer does not.
        if isinstance(value, float) and not math.isfinite(value):
            raise ConfigTypeError("a finite number", value)
        if type(value) is int and not INT64_MIN <= value <= INT64_MAX:
            raise ConfigTypeError("an integer that fits in 64 bits", value)
        return value

    return structure


def _is_sequence(tp: Any) -> bool:
    origin = get_origin(tp)
    return origin in (list, tuple, frozenset, set) and not (
        origin is tuple and len(get_args(tp)) != 2 and get_args(tp)[-1:] != (Ellipsis,)
    )


def _is_mapping(tp: Any) -> bool:
    return get_origin(tp) in (dict, Mapping, typing.Mapping)


def _is_literal(tp: Any) -> bool:
    return get_origin(tp) is Literal


def _is_bounded(tp: Any) -> bool:
    return get_origin(tp) is Annotated and any(
        isinstance(m, AtLeast | AtMost) for m in tp.__metadata__
    )


def _is_enum(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, enum.Enum)


class ConfigConverter:
    """A strict cattrs converter bound to one file, its directory and an environment."""

    def __init__(self, *, file: str, base_dir: Path, env: Mapping[str, str]) -> None:
        self.file = file
        self.base_dir = base_dir
        self.env = env
        c = cattrs.Converter(forbid_extra_keys=True, detailed_validation=True)
        c.register_structure_hook(int, _strict(int, "an integer"))
        c.register_structure_hook(float, _strict(float, "a number"))
        c.register_structure_hook(str, _strict(str, "a string"))
        c.register_structure_hook(bool, _strict(bool, "a boolean (true or false)"))
        c.register_structure_hook(Path, self._path)
        c.register_structure_hook(EnvStr, self._env_str)
        c.register_structure_hook(Secret, self._secret)
        c.register_structure_hook_factory(_is_bounded, self._bounded_hook)
        c.register_structure_hook_factory(_is_literal, self._literal_hook)
        c.register_structure_hook_factory(_is_enum, self._enum_hook)
        c.register_structure_hook_factory(_is_sequence, self._sequence_hook)
        c.register_structure_hook_factory(_is_mapping, self._mapping_hook)
        self.cattrs = c

    # -- hooks -----------------------------------------------------------------------

    def _path(self, value: Any, _: Any) -> Path:
        if not isinstance(value, str):
            raise ConfigTypeError("a path (a string)", value)
        return expand_path(value, self.env, self.base_dir)

    def _env_str(self, value: Any, _: Any) -> str:
        if not isinstance(value, str):
            raise ConfigTypeError("a string", value)
        return expand_env(value, self.env)

    def _secret(self, value: Any, _: Any) -> Secret:
        if not isinstance(value, str):
            raise ConfigTypeError("a string", value)
        return Secret(expand_env(value, self.env))

    def _bounded_hook(self, tp: Any) -> Callable[[Any, Any], Any]:
        base = get_args(tp)[0]
        base_hook = self.cattrs.get_structure_hook(base)
        bounds = [m for m in tp.__metadata__ if isinstance(m, AtLeast | AtMost)]

        def structure(value: Any, _: Any) -> Any:
            result = base_hook(value, base)
            for bound in bounds:
                problem = bound.check(result)
                if problem:
                    raise ValueError(problem)
            return result

        return structure

    def _literal_hook(self, tp: Any) -> Callable[[Any, Any], Any]:
        choices = get_args(tp)
        expected = "one of " + ", ".join(repr(c) for c in choices)

        def structure(value: Any, _: Any) -> Any:
            if isinstance(value, bool) or value not in choices:
                raise ConfigTypeError(expected, value)
            return value

        return structure

    def _enum_hook(self, tp: Any) -> Callable[[Any, Any], Any]:
        choices = [m.value for m in tp]
        expected = "one of " + ", ".join(repr(c) for c in choices)

        def structure(value: Any, _: Any) -> Any:
            if isinstance(value, bool) or value not in choices:
                raise ConfigTypeError(expected, value)
            return tp(value)

        return structure

    def _sequence_hook(self, tp: Any) -> Callable[[Any, Any], Any]:
        origin = get_origin(tp)
        (item_type, *_rest) = get_args(tp) or (Any,)
        item_hook = self.cattrs.get_structure_hook(item_type)

        def structure(value: Any, _: Any) -> Any:
            if not isinstance(value, list | tuple):
                raise ConfigTypeError("an array", value)
            items, errors = [], []
            for index, item in enumerate(value):
                try:
                    items.append(item_hook(item, item_type))
                except Exception as exc:
                    exc.__notes__ = [IterableValidationNote(f"@ index {index}", index, item_type)]
                    errors.append(exc)
            if errors:
                raise IterableValidationError(f"While structuring {tp!r}", errors, tp)
            return items if origin is list else origin(items)

        return structure

    def _mapping_hook(self, tp: Any) -> Callable[[Any, Any], Any]:
        _, value_type = get_args(tp) or (str, Any)
        value_hook = self.cattrs.get_structure_hook(value_type)

        def structure(value: Any, _: Any) -> Any:
            if not isinstance(value, Mapping):
                raise ConfigTypeError("a table", value)
            out, errors = {}, []
            for key, item in value.items():
                try:
                    out[key] = value_hook(item, value_type)
                except Exception as exc:
                    exc.__notes__ = [IterableValidationNote(f"@ key {key!r}", key, value_type)]
                    errors.append(exc)
            if errors:
                raise IterableValidationError(f"While structuring {tp!r}", errors, tp)
            return out

        return structure

    # -- structuring -------------------------------------------------------------------

    def structure(self, data: Any, cls: type[T], *, prefix: KeyPath = ()) -> T:
        """Structure ``data`` into ``cls``.

        :raises ConfigError: with one line per problem, each naming the file and the
            full key path (``prefix`` is prepended, e.g. ``("plugins", "chat")``).
        """
        if attrs.has(cls) and not isinstance(data, Mapping):
            where = format_key_path(prefix)
            raise ConfigError(
                [
                    f"{self.file}: {where + ': ' if where else ''}"
                    f"expected a table, found {describe_value(data)}"
                ]
            )
        try:
            return self.cattrs.structure(data, cls)
        except Exception as exc:
            raise ConfigError(self.problems(exc, prefix)) from None

    def problems(self, exc: BaseException, prefix: KeyPath = ()) -> list[str]:
        lines = []
        for path, message in _walk(exc, prefix):
            where = format_key_path(path)
            lines.append(f"{self.file}: {where}: {message}" if where else f"{self.file}: {message}")
        return lines


def walk_problems(exc: BaseException, path: KeyPath = ()) -> Iterator[tuple[KeyPath, str]]:
    """Flatten a structuring failure into ``(key path, message)`` pairs."""
    return _walk(exc, path)


def _walk(exc: BaseException, path: KeyPath) -> Iterator[tuple[KeyPath, str]]:
    if isinstance(exc, ClassValidationError):
        with_notes, without = exc.group_exceptions()
        for sub, note in with_notes:
            yield from _walk(sub, (*path, note.name))
        for sub in without:
            yield from _walk(sub, path)
    elif isinstance(exc, IterableValidationError):
        with_notes_i, without_i = exc.group_exceptions()
        for sub, inote in with_notes_i:
            yield from _walk(sub, (*path, inote.index))
        for sub in without_i:
            yield from _walk(sub, path)
    elif isinstance(exc, ForbiddenExtraKeysError):
        known = [a.name for a in attrs.fields(exc.cl)] if attrs.has(exc.cl) else []
        for key in sorted(exc.extra_fields):
            hint = difflib.get_close_matches(key, known, n=1)
            did_you_mean = f" (did you mean {hint[0]!r}?)" if hint else ""
            allowed = f"; allowed keys: {', '.join(known)}" if known and not hint else ""
            yield (*path, key), f"unknown key{did_you_mean}{allowed}"
    elif isinstance(exc, KeyError):
        yield path, "missing required key"
    elif isinstance(exc, KeyProblems):
        for sub_path, message in exc.items:
            yield (*path, *sub_path), message
    else:
        text = str(exc).strip() or type(exc).__name__
        yield path, text
