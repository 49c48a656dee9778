"""Real test distributions for entry-point tests (each a dist-info on a sys.path entry)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

GOOD = """
from toolang_core import Tool, hookimpl

@hookimpl
def toolang_register_tools(register):
    register(Tool(name="good_echo", description="Echo.", parameters={"type": "object"},
                  function=lambda **kw: kw))
"""

TYPO = """
from toolang_core import hookimpl

@hookimpl
def toolang_regster_memory(register):
    pass
"""

RAISER = """
from toolang_core import hookimpl

@hookimpl
def toolang_register_tools(register):
    raise RuntimeError("boom while registering tools")
"""

BAD_ARGS = """
from toolang_core import hookimpl

@hookimpl
def toolang_register_tools(register, colour):
    pass
"""

DUP = """
from toolang_core import hookimpl

@hookimpl
def toolang_register_memory(register):
    register("{which}", lambda context: None)
"""


def spy_module(marker: Path) -> str:
    return (
        "from pathlib import Path\n"
        f"Path({str(marker)!r}).write_text('imported')\n"
        "from toolang_core import hookimpl\n"
    )


def install_test_plugins(make: Callable[..., Path], marker: Path) -> list[str]:
    """Create the standard set of test plugins; return their distribution names."""
    specs = {
        "toolang-test-good": ("good", "tl_good", GOOD),
        "toolang-test-broken": ("broken", "tl_broken", "import tl_does_not_exist\n"),
        "toolang-test-typo": ("typo", "tl_typo", TYPO),
        "toolang-test-raiser": ("raiser", "tl_raiser", RAISER),
        "toolang-test-badargs": ("badargs", "tl_badargs", BAD_ARGS),
        "toolang-test-dup-a": ("dup", "tl_dup_a", DUP.format(which="dup-a")),
        "toolang-test-dup-b": ("dup", "tl_dup_b", DUP.format(which="dup-b")),
        "toolang-test-spy": ("spy", "tl_spy", spy_module(marker)),
    }
    for dist, (ep, module, source) in specs.items():
        make(dist, "1.2.3", entry_points={"toolang": {ep: module}}, modules={module: source})
    return list(specs)
