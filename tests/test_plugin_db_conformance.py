"""Plugins' databases as SQLite files pass the plugin-database conformance suite."""

from __future__ import annotations

import pytest

from toolang_core.store.sqlite.plugin_tables import SqlitePluginDatabases
from toolang_core.testing.plugin_db_conformance import PluginDatabaseConformance


class TestSqlitePluginDatabases(PluginDatabaseConformance):
    @pytest.fixture
    def toolang_plugin_databases_factory(self, tmp_path):
        return lambda: SqlitePluginDatabases(tmp_path / "plugins")
