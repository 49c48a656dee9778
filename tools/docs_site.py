"""MkDocs hooks of the docs site (``mkdocs.yml``: ``hooks: [tools/docs_site.py]``).

At build time they add the pages written from the code, so the site cannot drift from it:

- ``reference/api.md``: the HTTP API, rendered by essentials-openapi (the renderer of
  neoteroi-mkdocs) from the OpenAPI document toolang-server serves
  (:func:`toolang_server.openapi.api_document`), plus the streamed events it lists;
- ``reference/hooks.md``: every hook spec of :mod:`toolang_core.hookspecs` with its
  signature, calling rule, pluggy options and docstring.

And they keep the pages' links to files outside ``docs/`` (a plugin's README, the
changelog, a source file) working on the site: each such file is copied in under
``repository/<its path>`` (a Markdown file as a page, another file as a page showing
it), and the link is rewritten to the copy. The copies' own links are followed the same
way, so strict mode checks every link and anchor of every copied page too.
"""

from __future__ import annotations

import inspect
import posixpath
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files, InclusionLevel
from mkdocs.structure.pages import Page

ROOT: Final = Path(__file__).resolve().parent.parent
DOCS: Final = ROOT / "docs"
COPIES: Final = "repository"  # where files from outside docs/ land on the site
# A Markdown link or image target: ](target) or ](target "title").
_LINK: Final = re.compile(r"(\]\()([^)\s]+)((?:\s+\"[^\"]*\")?\))")
_FENCE: Final = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
# Sphinx roles in docstrings (:class:`~a.B`) read as code on the site.
_ROLE: Final = re.compile(r":\w+:`~?([^`]+)`")


# -- the files copied from outside docs/ ----------------------------------------------


def _outside_target(source: Path, target: str) -> Path | None:
    """The repository file a link of ``source`` names, when it lies outside docs/."""
    if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith(("#", "/")):
        return None  # a URL, an anchor on this page, a site-absolute path
    path = target.split("#", 1)[0]
    if not path:
        return None
    resolved = (source.parent / path).resolve()
    if resolved.is_dir() and (resolved / "README.md").is_file():
        resolved = resolved / "README.md"
    if not resolved.is_file() or not resolved.is_relative_to(ROOT):
        return None  # missing: left as it is, so strict mode reports it
    return None if resolved.is_relative_to(DOCS) else resolved


def _links(markdown: str) -> list[str]:
    return [found.group(2) for found in _LINK.finditer(_FENCE.sub("", markdown))]


def _copy_uri(path: Path) -> str:
    """The site source path of a copied repository file."""
    relative = path.relative_to(ROOT).as_posix()
    return f"{COPIES}/{relative}" if path.suffix == ".md" else f"{COPIES}/{relative}.md"


def _source_of(page_uri: str) -> Path:
    """The repository path a page's links are relative to."""
    if page_uri.startswith(f"{COPIES}/"):
        copied = page_uri.removeprefix(f"{COPIES}/")
        return ROOT / (copied if (ROOT / copied).is_file() else copied.removesuffix(".md"))
    return DOCS / page_uri


def copied_files() -> dict[Path, str]:
    """Every repository file outside docs/ that a page links to, directly or through
    another copied file, with its site source path."""
    found: dict[Path, str] = {}
    pending = sorted(DOCS.rglob("*.md"))
    while pending:
        source = pending.pop()
        if source.suffix != ".md":
            continue
        for target in _links(source.read_text(encoding="utf-8")):
            path = _outside_target(source, target)
            if path is not None and path not in found:
                found[path] = _copy_uri(path)
                pending.append(path)
    return found


def _copy_content(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".md":
        return text
    relative = path.relative_to(ROOT).as_posix()
    language = {".py": "python", ".toml": "toml", ".json": "json"}.get(path.suffix, "text")
    return f"# {relative}\n\nThe file as the repository holds it.\n\n```{language}\n{text}```\n"


def rewrite_links(markdown: str, page_uri: str, copies: dict[Path, str]) -> str:
    """``markdown`` of the page at ``page_uri`` with each link to a copied file, or from
    a copied file into docs/, pointed at the page on the site."""
    source = _source_of(page_uri)
    here = posixpath.dirname(page_uri)

    def site_uri(target: str) -> str | None:
        path_part, _, anchor = target.partition("#")
        if not path_part or re.match(r"^[a-z][a-z0-9+.-]*:", target):
            return None
        resolved = (source.parent / path_part).resolve()
        if resolved.is_dir() and (resolved / "README.md").is_file():
            resolved = resolved / "README.md"
        if resolved in copies:
            uri = copies[resolved]
        elif page_uri.startswith(f"{COPIES}/") and resolved.is_relative_to(DOCS):
            uri = resolved.relative_to(DOCS).as_posix()
        else:
            return None
        return posixpath.relpath(uri, here or ".") + (f"#{anchor}" if anchor else "")

    def replace(found: re.Match[str]) -> str:
        new = site_uri(found.group(2))
        return found.group(0) if new is None else found.group(1) + new + found.group(3)

    # Links inside fenced code are text, not links: leave those blocks alone.
    parts, last = [], 0
    for fence in _FENCE.finditer(markdown):
        parts += [_LINK.sub(replace, markdown[last : fence.start()]), fence.group(0)]
        last = fence.end()
    parts.append(_LINK.sub(replace, markdown[last:]))
    return "".join(parts)


# -- the generated reference pages ------------------------------------------------------


def _prose(text: str) -> str:
    return _ROLE.sub(lambda found: f"`{found.group(1)}`", text)


def hook_reference(slugify: Callable[[str, str], str]) -> str:
    """The hook reference: every hook spec, family by family, from the spec modules
    (``slugify``: the site's, to link each hook's section on its family's page)."""
    from toolang_core.hookspecs import FAMILIES
    from toolang_core.hookspecs.rules import DECLARED

    lines = [
        "# Hook reference",
        "",
        "Generated from the hook specifications (`toolang_core.hookspecs`) when the site "
        "is built. Each hook's page under *Hooks* has its arguments, return value and an "
        "example.",
        "",
    ]
    for family in FAMILIES:
        lines += [f"## {family.title}", "", f"Module: `{family.module.__name__}`.", ""]
        for hook in family.hook_names:
            spec = getattr(family.module, hook)
            declared = DECLARED[hook]
            options = getattr(spec, "toolang_spec", {}) or {}
            pluggy = [key for key in ("firstresult", "historic") if options.get(key)]
            heading = _doc_heading(spec, hook)
            anchor = slugify(heading.removeprefix("## "), "-")
            lines += [
                f"### {hook}",
                "",
                "```py",
                _signature(hook, spec),
                "```",
                "",
                f"- **Calling rule**: {declared.rule.name} — {declared.rule.statement}",
                f"- **Awaited**: {'yes' if declared.awaited else 'no (called synchronously)'}",
                f"- **pluggy options**: {', '.join(pluggy) if pluggy else 'none'}",
                f"- **Documented in**: [{family.title}](../hooks/{family.key}.md#{anchor})",
                "",
                _prose(inspect.getdoc(spec) or "(no docstring)"),
                "",
            ]
    return "\n".join(lines)


def _signature(hook: str, spec: Any) -> str:
    """``def hook(arg: Type, ...) -> Return: ...`` with the annotations as the source
    spells them (the spec modules' annotations are strings), one argument a line when
    long."""

    def spelled(annotation: Any) -> str:
        return annotation if isinstance(annotation, str) else inspect.formatannotation(annotation)

    signature = inspect.signature(spec)
    params = []
    for name, param in signature.parameters.items():
        text = name
        if param.annotation is not inspect.Parameter.empty:
            text += f": {spelled(param.annotation)}"
        if param.default is not inspect.Parameter.empty:
            text += f" = {param.default!r}"
        params.append(text)
    returns = signature.return_annotation
    tail = "" if returns is inspect.Signature.empty else f" -> {spelled(returns)}"
    line = f"def {hook}({', '.join(params)}){tail}: ..."
    if len(line) <= 88:
        return line
    return f"def {hook}(\n" + "".join(f"    {p},\n" for p in params) + f"){tail}: ..."


def _doc_heading(spec: Any, hook: str) -> str:
    """The family page's heading of ``hook`` (as tests/test_docs.py requires it)."""
    parts = [
        name if param.default is inspect.Parameter.empty else f"{name}={param.default!r}"
        for name, param in inspect.signature(spec).parameters.items()
    ]
    return f"## {hook}({', '.join(parts)})"


def api_reference() -> str:
    """The HTTP API reference: every route of the OpenAPI document toolang-server serves
    (parameters, request bodies, responses, schemas), and the streamed events."""
    from openapidocs.mk.v3 import OpenAPIV3DocumentationHandler

    from toolang_server.openapi import api_document

    document = api_document()
    rendered = OpenAPIV3DocumentationHandler(document, style="MKDOCS").write()
    # The renderer's own title stands in for ours: drop its comment and first heading.
    body = rendered.split("\n# ", 1)[1].split("\n", 1)[1]
    events: dict[str, Any] = {}
    for item in document["paths"].values():
        for op in item.values():
            for response in op.get("responses", {}).values():
                stream = response.get("content", {}).get("text/event-stream")
                if stream:
                    events.update(stream.get("x-events", {}))
    lines = [
        "# HTTP API reference",
        "",
        f"Version {document['info']['version']}. Generated when the site is built from the "
        "OpenAPI 3.1 document toolang-server serves at `/api/openapi.json`: these are its "
        "own routes; a running server's document also lists the routes other installed "
        "plugins add (such as [A2A](../a2a.md) and [MCP](../mcp.md)). The guide is "
        "[The HTTP API](../api.md).",
        "",
        body,
        "",
        "## Streamed events",
        "",
        "A streamed answer (`text/event-stream`) sends `event: <name>` and "
        "`data: <JSON>` lines; `finished` is the last event.",
        "",
        "| event | data |",
        "|---|---|",
    ]
    for name, schema in events.items():
        ref = schema.get("$ref", "")
        model = ref.rsplit("/", 1)[-1]
        lines.append(f"| `{name}` | [{model}](#{model.lower()}) |" if model else f"| `{name}` | |")
    return "\n".join(lines) + "\n"


# -- the MkDocs hooks --------------------------------------------------------------------

_copies: dict[Path, str] = {}


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Add the generated reference pages and the copies of files outside docs/."""
    _copies.clear()
    _copies.update(copied_files())
    for uri, content in (
        ("reference/api.md", api_reference()),
        ("reference/hooks.md", hook_reference(config.mdx_configs["toc"]["slugify"])),
    ):
        files.append(File.generated(config, uri, content=content))
    for path, uri in sorted(_copies.items()):
        files.append(
            File.generated(
                config, uri, content=_copy_content(path), inclusion=InclusionLevel.NOT_IN_NAV
            )
        )
    return files


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    """Point links to files outside docs/ (and the copies' links back) at the site."""
    return rewrite_links(markdown, page.file.src_uri, _copies)
