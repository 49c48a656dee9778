"""The plugin-author kit: fixtures (``pytest_plugin``) and helpers for testing plugins.

The pytest plugin is registered through the ``pytest11`` entry point, so installing
``toolang-core[testing]`` makes its ``toolang_*`` fixtures available in any suite.
"""

from toolang_core.testing.dists import make_distribution
from toolang_core.tools.stages import approve_tool_call, filter_tool_call, filter_tool_result

__all__ = ["approve_tool_call", "filter_tool_call", "filter_tool_result", "make_distribution"]
