"""Third-party modules that load on first use instead of at import.

sqlite-utils imports ``dateutil.parser`` at import time (for its ``parsedate`` recipes,
which toolang never calls), and with it ``dateutil.tz``: the largest single import of
a one-shot ``toolang chat``. Deferred here, ``dateutil.parser`` is a module whose code
runs the first time one of its names is read — so whoever does use it gets the real
module, only later.
"""

from __future__ import annotations

import importlib.util
import sys

DEFERRED = ("dateutil.parser",)
"""The modules deferred when ``toolang_core`` is imported."""


def defer(name: str) -> None:
    """Let ``import name`` (and ``from package import name``) return a module that
    loads on first attribute access (:class:`importlib.util.LazyLoader`). Nothing is
    done for a module already imported, or one that is not installed."""
    if name in sys.modules:
        return
    try:
        spec = importlib.util.find_spec(name)  # imports its package: dateutil's is tiny
    except ImportError:  # its package is not installed
        return
    if spec is None or spec.loader is None:
        return
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    # ``from package import name`` reads the attribute: set, it is this module (the
    # import machinery, looking it up by name, would load it at once).
    parent, _, child = name.rpartition(".")
    if parent:
        setattr(sys.modules[parent], child, module)


def defer_all() -> None:
    for name in DEFERRED:
        defer(name)
