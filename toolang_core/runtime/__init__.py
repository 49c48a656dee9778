"""The runtime: one run, one inbox, one scheduler, one execution store, its turn sources."""

from toolang_core.runtime.runtime import Runtime

__all__ = ["Runtime"]
