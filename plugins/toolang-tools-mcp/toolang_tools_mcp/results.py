"""What an MCP tool result becomes for the model and the store.

Text and ``structuredContent`` go to the model; images, audio and embedded binary
resources are kept once by hash in the runtime's attachment store (under the home
directory) and referenced. A result larger than the cap is refused, never truncated
silently.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from toolang_core import ToolCallContext

MAX_RESULT_BYTES = 10 * 1024 * 1024


class McpToolError(RuntimeError):
    """The server answered the call with an error, or its answer cannot be used."""


def convert_result(
    server: str, tool: str, result: Any, context: ToolCallContext | None, cap: int
) -> Any:
    """The model-facing value of ``result`` (an SDK ``CallToolResult``).

    :raises McpToolError: naming the server and tool, when the server reported an error
        or the result is over ``cap`` bytes.
    """
    texts: list[str] = []
    files: list[dict[str, Any]] = []
    size = 0
    for block in result.content:
        kind = getattr(block, "type", "")
        if kind == "text":
            texts.append(block.text)
            size += len(block.text.encode("utf-8", "replace"))
        elif kind in ("image", "audio"):
            data = base64.b64decode(block.data)
            size += len(data)
            _check_size(server, tool, size, cap)
            files.append(_keep(data, f"{tool}.{kind}", block.mime_type, context))
        elif kind == "resource":
            inner = block.resource
            if getattr(inner, "text", None) is not None:
                texts.append(inner.text)
                size += len(inner.text.encode("utf-8", "replace"))
            else:
                data = base64.b64decode(inner.blob)
                size += len(data)
                _check_size(server, tool, size, cap)
                files.append(_keep(data, tool, getattr(inner, "mime_type", None), context))
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
    if structured is None and not files:
        return text
    out: dict[str, Any] = {"text": text}
    if structured is not None:
        out["structured"] = structured
    if files:
        out["files"] = files
    return out


def _check_size(server: str, tool: str, size: int, cap: int) -> None:
    if size > cap:
        raise McpToolError(
            f"MCP server {server!r}, tool {tool!r}: the result is over {cap} bytes "
            f"([plugins.tools-mcp] max_result_bytes); it was refused, not truncated"
        )


def _keep(data: bytes, name: str, mime: str | None, context: ToolCallContext | None) -> Any:
    """Keep ``data`` in the attachment store; its reference for the model."""
    from toolang_core import AttachmentStore

    runtime = context.runtime if context is not None else None
    store = runtime.store if runtime is not None else None
    if runtime is None or store is None:
        raise McpToolError(f"binary content ({mime or 'unknown type'}) but no store to keep it")
    owner = context.turn.owner if context is not None and context.turn is not None else None
    ref = AttachmentStore.of(runtime.config, store).put(data, name=name, owner=owner)
    return ref.to_json()
