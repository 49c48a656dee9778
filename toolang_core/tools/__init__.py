"""Tools and the tool-call hook chain."""

from toolang_core.tools.types import (
    ApprovalDecision,
    Block,
    Denied,
    FilterVerdict,
    Granted,
    Modify,
    Observe,
    Pending,
    Tool,
    ToolCall,
    ToolCallContext,
    ToolFile,
    ToolOutput,
    ToolResult,
)

__all__ = [
    "ApprovalDecision",
    "Block",
    "Denied",
    "FilterVerdict",
    "Granted",
    "Modify",
    "Observe",
    "Pending",
    "Tool",
    "ToolCall",
    "ToolCallContext",
    "ToolFile",
    "ToolOutput",
    "ToolResult",
]
