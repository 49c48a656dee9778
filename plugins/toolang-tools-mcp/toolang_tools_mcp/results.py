"""What an MCP tool result becomes for the model and the store.

Text and ``structuredContent`` go to the model; images, audio and embedded binary
resources are given back as files (:class:`~toolang_core.ToolOutput`): the core keeps
them once by hash in the runtime's attachment store (under the home directory),
references them in the step, and sends them to a model that takes their type (a text
reference to one that does not). A result larger than the cap is refused, never
truncated silently.
"""

from __future__ import annotations

import base64
import json
import mimetypes
from typing import Any
from urllib.parse import unquote, urlsplit

from toolang_core import ToolFile, ToolOutput

MAX_RESULT_BYTES = 10 * 1024 * 1024


class McpToolError(RuntimeError):
    """The server answered the call with an error, or its answer cannot be used."""


def convert_result(server: str, tool: str, result: Any, cap: int) -> Any:
    """The model-facing value of ``result`` (an SDK ``CallToolResult``): its text, or
    ``{"text", "structured"}``; a :class:`ToolOutput` with that value and the files when
    it carries binary content.

    :raises McpToolError: naming the server and tool, when the server reported an error
        or the result is over ``cap`` bytes.
    """
    texts: list[str] = []
    files: list[ToolFile] = []
    size = 0
    for block in result.content:
        kind = getattr(block, "type", "")
        if kind == "text":
            texts.append(block.text)
            size += len(block.text.encode("utf-8", "replace"))
        elif kind in ("image", "audio"):
            _check_size(server, tool, size + _decoded_size(block.data), cap)
            data = base64.b64decode(block.data)
            size += len(data)
            _check_size(server, tool, size, cap)
            files.append(ToolFile(data, _name(tool, kind, block.mime_type)))
        elif kind == "resource":
            inner = block.resource
            if getattr(inner, "text", None) is not None:
                texts.append(inner.text)
                size += len(inner.text.encode("utf-8", "replace"))
            else:
                _check_size(server, tool, size + _decoded_size(inner.blob), cap)
                data = base64.b64decode(inner.blob)
                size += len(data)
                _check_size(server, tool, size, cap)
                mime = getattr(inner, "mime_type", None)
                files.append(ToolFile(data, _name(tool, "resource", mime, str(inner.uri))))
        elif kind == "resource_link":
            texts.append(f"[resource {block.uri}]")
        _check_size(server, tool, size, cap)
    structured = result.structured_content
    if structured is not None:
        size += len(json.dumps(structured, default=str))
        _check_size(server, tool, size, cap)
    text = "\n".join(texts)
    if result.is_error:
        raise McpToolError(f"MCP server {server!r}, tool {tool!r} reported an error: {text}")
    value: Any = text if structured is None else {"text": text, "structured": structured}
    return ToolOutput(value, tuple(files)) if files else value


def _name(tool: str, kind: str, mime: str | None, uri: str = "") -> str:
    """A file's name for people: the last part of its resource URI, else the tool's
    name and the extension of its declared type (the store sniffs the real type)."""
    last = unquote(urlsplit(uri).path.rstrip("/").rpartition("/")[2]) if uri else ""
    if last:
        return last
    extension = mimetypes.guess_extension(mime or "") or ""
    return f"{tool}-{kind}{extension}"


def _decoded_size(encoded: str) -> int:
    """How many bytes base64 ``encoded`` holds, told before decoding it."""
    return len(encoded) * 3 // 4 - encoded.count("=", len(encoded) - 2)


def _check_size(server: str, tool: str, size: int, cap: int) -> None:
    if size > cap:
        raise McpToolError(
            f"MCP server {server!r}, tool {tool!r}: the result is over {cap} bytes "
            f"([plugins.tools-mcp] max_result_bytes); it was refused, not truncated"
        )
