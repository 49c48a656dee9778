"""A real MCP server (the SDK's MCPServer, formerly FastMCP) whose tools answer with
more than text: an image, an embedded binary resource, a result far over the cap, and
a text holding a secret-shaped string."""

from __future__ import annotations

import base64

from mcp.server.mcpserver import MCPServer
from mcp_types import (
    BlobResourceContents,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    TextContent,
    ToolAnnotations,
)

server = MCPServer("media")
READ_ONLY = ToolAnnotations(readOnlyHint=True)

# A 1x1 red PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
PDF = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"
SECRET = "ghp_R8mT2vX9qL4wZ7nB3kD6fH1jP5sC0yA2eG4u"  # shaped as GitHub issues them


@server.tool(annotations=READ_ONLY)
def snapshot() -> list[ContentBlock]:
    """A picture of the screen, with a caption."""
    return [
        TextContent(type="text", text="one red dot"),
        ImageContent(type="image", data=base64.b64encode(PNG).decode(), mime_type="image/png"),
    ]


@server.tool(annotations=READ_ONLY)
def report() -> EmbeddedResource:
    """The quarterly report, embedded as a PDF resource."""
    blob = BlobResourceContents(
        uri="file:///reports/q3-report.pdf",
        mime_type="application/pdf",
        blob=base64.b64encode(PDF).decode(),
    )
    return EmbeddedResource(type="resource", resource=blob)


@server.tool(annotations=READ_ONLY)
def dump(megabytes: int = 50) -> ImageContent:
    """An "image" of ``megabytes`` MiB: far over any sane cap."""
    data = PNG + bytes(megabytes * 1024 * 1024)
    return ImageContent(type="image", data=base64.b64encode(data).decode(), mime_type="image/png")


@server.tool(annotations=READ_ONLY)
def credentials() -> str:
    """A text that carries a token."""
    return f"the deploy token is {SECRET}"


if __name__ == "__main__":
    server.run()
