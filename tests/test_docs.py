"""The documentation stays true: every hook and argument documented, examples compile."""

from __future__ import annotations

import inspect
import os
import re
import subprocess
from pathlib import Path

import pytest

from toolang_core.hookspecs import FAMILIES, Family
from toolang_core.hookspecs.rules import HOOK_RULES

DOCS = Path(__file__).resolve().parent.parent / "docs"


def signature_heading(family: Family, hook: str) -> str:
    sig = inspect.signature(getattr(family.module, hook))
    parts = [
        name if param.default is inspect.Parameter.empty else f"{name}={param.default!r}"
        for name, param in sig.parameters.items()
    ]
    return f"## {hook}({', '.join(parts)})"


def section(text: str, heading: str) -> str:
    start = text.index(heading)
    following = text.find("\n## ", start + len(heading))
    return text[start : following if following != -1 else None]


HOOKS = [(family, hook) for family in FAMILIES for hook in family.hook_names]


def test_every_family_has_a_page_listed_in_the_index():
    index = (DOCS / "index.md").read_text()
    for family in FAMILIES:
        assert (DOCS / "hooks" / f"{family.key}.md").is_file(), family.key
        assert f"(hooks/{family.key}.md)" in index, family.key


def test_every_family_has_hooks():
    assert all(family.hook_names for family in FAMILIES)


@pytest.mark.parametrize(("family", "hook"), HOOKS, ids=[h for _, h in HOOKS])
def test_hook_is_documented_with_its_signature_and_arguments(family, hook):
    text = (DOCS / "hooks" / f"{family.key}.md").read_text()
    heading = signature_heading(family, hook)
    assert heading in text, f"docs/hooks/{family.key}.md lacks the heading {heading!r}"
    body = section(text, heading)
    for argument in inspect.signature(getattr(family.module, hook)).parameters:
        assert re.search(rf"^- `{argument}` \(", body, re.MULTILINE), (
            f"{hook}: argument {argument!r} is not documented"
        )
    for part in ("**When it is called**", "**Return**", "**`None` means**", "**Example**"):
        assert part in body, f"{hook}: missing {part}"


def test_every_hook_declares_exactly_one_calling_rule():
    assert sorted(HOOK_RULES) == sorted(hook for _, hook in HOOKS)


@pytest.mark.parametrize(("family", "hook"), HOOKS, ids=[h for _, h in HOOKS])
def test_hook_page_states_the_declared_calling_rule(family, hook):
    rule = HOOK_RULES.get(hook)
    assert rule is not None, f"{hook}: no calling rule in toolang_core.hookspecs.rules.HOOK_RULES"
    body = section(
        (DOCS / "hooks" / f"{family.key}.md").read_text(), signature_heading(family, hook)
    )
    stated = f"**Calling rule**: {rule.name} — "
    assert stated in body, f"docs/hooks/{family.key}.md, {hook}: missing {stated!r}"


def test_no_page_documents_a_hook_that_does_not_exist():
    known = {hook for _, hook in HOOKS}
    for page in (DOCS / "hooks").glob("*.md"):
        for name in re.findall(r"^## (toolang_\w+)\(", page.read_text(), re.MULTILINE):
            assert name in known, f"{page.name} documents unknown hook {name}"


def python_blocks():
    """```python blocks are run (they only import and define); ```py blocks only compile."""
    blocks = []
    for page in sorted(DOCS.rglob("*.md")):
        found = re.findall(r"```(python|py)\n(.*?)```", page.read_text(), re.S)
        for number, (kind, block) in enumerate(found):
            blocks.append(pytest.param(kind, block, id=f"{page.relative_to(DOCS)}#{number}"))
    return blocks


@pytest.mark.parametrize(("kind", "source"), python_blocks())
def test_python_examples_compile_and_run(kind, source):
    code = compile(source, "<docs example>", "exec")
    if kind == "python":
        exec(code, {"__name__": "docs_example"})


@pytest.mark.slow
def test_plugins_md_walks_from_an_empty_directory_to_a_tested_wheel(tmp_path, wheelhouse):
    """The ```sh walk block of docs/plugins.md, run as written in an empty directory."""
    (walk,) = re.findall(r"```sh walk\n(.*?)```", (DOCS / "plugins.md").read_text(), re.S)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("TOOLANG_", "VIRTUAL_ENV", "PYTHONPATH", "PIP_", "UV_", "TOX_"))
    }
    ran = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", walk],
        cwd=tmp_path,
        env={**env, "TOOLANG_FIND_LINKS": str(wheelhouse)},
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert ran.returncode == 0, ran.stdout[-4000:] + ran.stderr[-4000:]
    dist = tmp_path / "toolang-tools-weather" / "dist"
    assert (dist / "toolang_tools_weather-0.1.0-py3-none-any.whl").is_file()
    assert " passed" in ran.stdout  # pytest's and tox's runs printed their counts
