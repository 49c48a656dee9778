"""The plugin-author kit: fixtures (``pytest_plugin``) and helpers for testing plugins.

The pytest plugin is registered through the ``pytest11`` entry point, so installing
``toolang-core[testing]`` makes its ``toolang_*`` fixtures available in any suite.
"""

from toolang_core.testing.dists import make_distribution

__all__ = ["make_distribution"]
