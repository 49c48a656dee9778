"""toolang-tools-ontologist: the ontologist role's tools.

A typed knowledge ontology in SQLite, per owner: ``ontology_define_type`` (attributes
as a JSON Schema, relations), ``ontology_add_entity``, ``ontology_assert_fact``,
``ontology_query`` (with depth-limited traversal), ``ontology_conflicts`` /
``ontology_resolve``, and ``ontology_ingest`` (CSV/JSON rows by a mapping spec). This
module stays import-light (every ``toolang`` command imports it): the tools load on
first registration.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolang_core import hookimpl
from toolang_tools_ontologist.settings import NAME, OntologistSettings

if TYPE_CHECKING:
    from toolang_core import RegisterSettings, RegisterTool

__all__ = ["NAME", "OntologistSettings"]


@hookimpl
def toolang_register_settings(register: RegisterSettings) -> None:
    register(OntologistSettings)


@hookimpl
def toolang_register_tools(register: RegisterTool) -> None:
    from toolang_tools_ontologist.tools import TOOLS

    for tool in TOOLS:
        register(tool)
