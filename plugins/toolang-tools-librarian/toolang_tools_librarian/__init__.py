"""toolang-tools-librarian: the librarian role's tools.

``search_knowledge`` / ``save_knowledge`` over what the KnowledgeSaver kept and what
agents saved explicitly, ``save_learning`` / ``learning_stats`` / ``learning_failures``
over what the LearningObserver recorded, and ``rag_index`` / ``rag_query`` over local
text files indexed in SQLite FTS5. This module stays import-light (every ``toolang``
command imports it): the tools load on first registration.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolang_core import hookimpl
from toolang_tools_librarian.settings import NAME, LibrarianSettings

if TYPE_CHECKING:
    from toolang_core import RegisterSettings, RegisterTool

__all__ = ["NAME", "LibrarianSettings"]


@hookimpl
def toolang_register_settings(register: RegisterSettings) -> None:
    register(LibrarianSettings)


@hookimpl
def toolang_register_tools(register: RegisterTool) -> None:
    from toolang_tools_librarian.tools import TOOLS

    for tool in TOOLS:
        register(tool)
