"""A function's own copy of its code, for a hot call site that sees one class only.

Why: CPython (3.11) keeps its attribute caches in the code object, one class per
instruction. A function shared by several classes — one ``__init__`` for the deciding
combiners, one runner loop for every calling rule — misses them on each call and takes
the generic attribute path; the tool-call chain does that ~60 times per tool call
(``bench/tool_chain_instructions.py``: about 7k instructions of its ~270k). A copy per
class (or per bound hook) keeps each site to one class. Behaviour is the function's own.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


def own_copy(function: F) -> F:
    """``function`` with a copy of its code (same globals, defaults, closure, name,
    docstring and annotations): equal in behaviour, apart in CPython's caches."""
    original: Any = function
    copy = types.FunctionType(
        original.__code__.replace(),
        original.__globals__,
        original.__name__,
        original.__defaults__,
        original.__closure__,
    )
    copy.__kwdefaults__ = original.__kwdefaults__
    copy.__qualname__, copy.__doc__ = original.__qualname__, original.__doc__
    copy.__annotations__ = original.__annotations__
    copy.__dict__.update(original.__dict__)
    result: F = copy  # type: ignore[assignment]
    return result
