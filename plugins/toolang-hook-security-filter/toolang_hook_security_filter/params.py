"""The strings of a call's parameters, with where each sits: what the policy judges.

Every string counts, whatever its key and however deep it sits; mapping keys too; an
argument list joined back into one command; and the path of each file write, judged on
its own (:data:`PATH_KEYS`, :data:`CONTENT_KEYS`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any, Final

from toolang_hook_security_filter.pii import is_plain_name

_NAMEABLE: Final = re.compile(r"[A-Za-z_][\w-]{0,31}")
"""Keys shown in a reason; others (an address used as a key …) are shown as "…"."""

MAX_DEPTH: Final = 32
"""Parameters nested deeper than this are refused: they cannot be checked cheaply."""

PATH_KEYS: Final = frozenset(
    {"path", "file", "filepath", "file_path", "filename", "file_name", "target"}
    | {"target_file", "target_path", "dest", "destination", "dst", "output", "output_path"}
    | {"output_file", "outfile"}
)
CONTENT_KEYS: Final = frozenset(
    {"content", "contents", "text", "data", "body", "lines", "source", "code", "value"}
    | {"new_content", "new_str", "new_string", "new_text", "file_text", "insert_text"}
    | {"replacement", "patch", "diff", "append"}
)
"""A mapping with one key of each is a file write: its path is judged on its own too."""


class ParamsTooDeep(ValueError):
    """The parameters nest deeper than :data:`MAX_DEPTH`."""


def strings_of(
    params: Mapping[str, Any], written: list[tuple[str, str]] | None = None
) -> list[tuple[str, str]]:
    """Every string in ``params`` with where it sits (``args[2]``, ``options.script``).

    Mapping keys count as strings, except short identifiers (parameter names). A list
    of strings is also checked joined with spaces (``["rm", "-rf", "/"]`` is one
    command), and so is each bare word next to such a list in the same mapping
    (``{"program": "rm", "args": ["-rf", "/"]}``). The path of each file write (a
    mapping with a :data:`PATH_KEYS` and a :data:`CONTENT_KEYS` key) is also added to
    ``written``.

    :raises ParamsTooDeep: past :data:`MAX_DEPTH` levels.
    """
    found: list[tuple[str, str]] = []
    _collect(params, "", 0, found, [] if written is None else written)
    return found


_NO_TEXT: Final = frozenset({int, float, bool, type(None)})
"""JSON values that hold no string (told by their exact type, before the slower ABC
checks): numbers are most tools' parameters."""


def _collect(
    value: Any,
    where: str,
    depth: int,
    found: list[tuple[str, str]],
    written: list[tuple[str, str]],
) -> None:
    if isinstance(value, str):
        found.append((where or "(value)", value))
    elif depth > MAX_DEPTH:
        raise ParamsTooDeep(where)
    elif type(value) in _NO_TEXT:
        return
    elif isinstance(value, dict | Mapping):
        _collect_mapping(value, where, depth, found, written)
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            _collect(item, f"{where}[{index}]", depth + 1, found, written)
        if _is_argv(value):
            found.append((f"{where or '(value)'} (joined)", " ".join(value)))


def _collect_mapping(
    value: Mapping[Any, Any],
    where: str,
    depth: int,
    found: list[tuple[str, str]],
    written: list[tuple[str, str]],
) -> None:
    argvs: list[tuple[str, list[str]]] = []
    paths: list[tuple[str, str]] = []
    content = False
    for key, item in value.items():
        if isinstance(key, str):
            name, plain, path_key, content_key = _key_facts(key)
            place = f"{where}.{name}" if where else name
            if not plain:
                found.append((f"{place} (key)", key))
            if path_key and isinstance(item, str):
                paths.append((place, item))
            content = content or content_key
        else:
            place = f"{where}.…" if where else "…"
        if isinstance(item, str):  # the usual case, without the recursion
            found.append((place, item))
            continue
        if type(item) in _NO_TEXT and depth < MAX_DEPTH:  # deeper: too deep, as any value
            continue
        _collect(item, place, depth + 1, found, written)
        if _is_argv(item):
            argvs.append((place, item))
    if content:
        written.extend(paths)
    if argvs:
        words = [v for v in value.values() if isinstance(v, str) and len(v.split()) == 1]
        found.extend(
            (f"{place} (after {word!r})", " ".join([word, *argv]))
            for place, argv in argvs
            for word in words
        )


@functools.lru_cache(maxsize=4096)
def _key_facts(key: str) -> tuple[str, bool, bool, bool]:
    """How a mapping key is shown in a reason, whether it is a plain name (not checked
    itself), and whether it names a written path or written content. Keys repeat from
    call to call (parameter names), so the answers are kept."""
    lowered = key.lower()
    return (
        key if _NAMEABLE.fullmatch(key) else "…",
        is_plain_name(key),
        lowered in PATH_KEYS,
        lowered in CONTENT_KEYS,
    )


def _is_argv(value: Any) -> bool:
    return (
        isinstance(value, list | tuple)
        and len(value) > 1
        and all(isinstance(item, str) for item in value)
    )
