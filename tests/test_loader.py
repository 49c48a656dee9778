"""The entry-point loader, with real distributions found by importlib.metadata."""

from __future__ import annotations

from pathlib import Path

import pytest
from plugin_dists import install_test_plugins

from toolang_core.errors import PluginError
from toolang_core.plugins import LoadPolicy, PluginHost, PluginStatus, scan_entry_points
from toolang_core.plugins.loader import EntryPointInfo


@pytest.fixture
def marker(tmp_path: Path) -> Path:
    return tmp_path / "spy-was-imported"


@pytest.fixture
def test_eps(toolang_distribution, marker) -> list[EntryPointInfo]:
    dists = set(install_test_plugins(toolang_distribution, marker))
    return [info for info in scan_entry_points() if info.distribution in dists]


def load(test_eps, **policy) -> PluginHost:
    return PluginHost.from_entry_points(LoadPolicy(**policy), entry_points=test_eps)


def test_scan_reads_metadata_in_a_deterministic_order(test_eps):
    names = [(i.name, i.distribution) for i in test_eps]
    assert names == sorted(names)
    assert {i.version for i in test_eps} == {"1.2.3"}


def test_good_plugin_loads_with_its_distribution_details(test_eps):
    host = load(test_eps, deny=frozenset({"spy"}))
    record = host.record("good")
    assert record.status is PluginStatus.LOADED
    assert (record.distribution, record.version, record.entry_point) == (
        "toolang-test-good",
        "1.2.3",
        "tl_good",
    )
    assert record.hooks == ("toolang_register_tools",)
    assert "good_echo" in host.components.tools


def test_import_failure_is_recorded_and_the_host_keeps_working(test_eps):
    host = load(test_eps)
    record = host.record("broken")
    assert record.status is PluginStatus.FAILED
    assert record.error is not None
    assert record.error.stage == "import"
    assert "No module named 'tl_does_not_exist'" in record.error.message
    assert host.record("good").status is PluginStatus.LOADED


def test_misspelled_hook_is_rejected_with_a_suggestion(test_eps):
    host = load(test_eps)
    record = host.record("typo")
    assert record.status is PluginStatus.FAILED
    assert record.error.stage == "validate"
    assert record.error.hook == "toolang_regster_memory"
    assert "did you mean 'toolang_register_memory'" in record.error.message
    assert not host.pm.has_plugin("typo")


def test_hookimpl_with_an_argument_the_spec_lacks_is_refused(test_eps):
    host = load(test_eps)
    record = host.record("badargs")
    assert record.status is PluginStatus.FAILED
    assert record.error.stage == "register"
    assert record.error.hook == "toolang_register_tools"
    assert "colour" in record.error.message


def test_plugin_raising_while_registering_is_unregistered_with_the_hook_named(test_eps):
    host = load(test_eps)
    assert host.record("raiser").status is PluginStatus.LOADED  # import and validation pass
    host.components  # collecting calls the registration hooks
    record = host.record("raiser")
    assert record.status is PluginStatus.FAILED
    assert record.error.stage == "collect"
    assert record.error.hook == "toolang_register_tools"
    assert "RuntimeError: boom while registering tools" in record.error.message
    assert not host.pm.has_plugin("raiser")
    assert "good_echo" in host.components.tools


def test_duplicate_entry_point_names_are_reported_and_only_one_is_loaded(test_eps):
    host = load(test_eps)
    dups = [r for r in host.records if r.name == "dup"]
    assert [(r.distribution, r.status) for r in dups] == [
        ("toolang-test-dup-a", PluginStatus.LOADED),
        ("toolang-test-dup-b", PluginStatus.DUPLICATE),
    ]
    shadowed = dups[1]
    assert "toolang-test-dup-a" in shadowed.reason
    assert list(host.components.of_kind("memory")) == ["dup-a"]


def test_denied_plugin_is_never_imported(test_eps, marker):
    host = load(test_eps, deny=frozenset({"spy"}))
    assert host.record("spy").status is PluginStatus.DISABLED
    assert not marker.exists()


def test_deny_list_matches_distribution_names_too(test_eps, marker):
    policy = LoadPolicy.resolve({"TOOLANG_DISABLE_PLUGINS": "Toolang_Test_Spy"})
    host = PluginHost.from_entry_points(policy, entry_points=test_eps)
    assert host.record("spy").status is PluginStatus.DISABLED
    assert host.record("spy").reason == "disabled by TOOLANG_DISABLE_PLUGINS"
    assert not marker.exists()


def test_allowed_plugin_with_import_side_effect_is_imported(test_eps, marker):
    load(test_eps)
    assert marker.read_text() == "imported"


def test_allow_list_loads_only_the_named_plugins(test_eps, marker):
    policy = LoadPolicy.resolve({"TOOLANG_LOAD_PLUGINS": "good"})
    host = PluginHost.from_entry_points(policy, entry_points=test_eps)
    assert host.active_names == ["good"]
    assert host.record("broken").reason == "not listed in TOOLANG_LOAD_PLUGINS"
    assert not marker.exists()


def test_empty_allow_list_loads_nothing(test_eps, marker):
    policy = LoadPolicy.resolve({"TOOLANG_LOAD_PLUGINS": ""})
    host = PluginHost.from_entry_points(policy, entry_points=test_eps)
    assert host.active_names == []
    assert {r.status for r in host.records} == {PluginStatus.DISABLED}
    assert len(host.records) == 8  # both distributions named "dup" are listed
    assert not marker.exists()


def test_environment_allow_list_replaces_the_config_one():
    policy = LoadPolicy.resolve({"TOOLANG_LOAD_PLUGINS": "a"}, config_load=["b"])
    assert policy.allow == frozenset({"a"})
    policy = LoadPolicy.resolve({}, config_load=["b"], config_disable=["c"])
    assert (policy.allow, policy.deny) == (frozenset({"b"}), frozenset({"c"}))


@pytest.mark.parametrize("value", ["1", "true", "YES", "on"])
def test_strict_mode_from_the_environment(value):
    assert LoadPolicy.resolve({"TOOLANG_STRICT_PLUGINS": value}).strict


def test_strict_mode_lists_every_failure_naming_distribution_and_entry_point(test_eps):
    with pytest.raises(PluginError) as info:
        load(test_eps, strict=True, deny=frozenset({"dup"}))
    message = str(info.value)
    # Registration hooks are called within the load in strict mode: the raiser's failure
    # is listed with the others (it used to be raised alone, later).
    assert message.startswith("4 plugin problems:")
    assert "toolang-test-broken 1.2.3" in message
    assert "entry point broken = tl_broken" in message
    assert "failed to import" in message
    for name in ("badargs", "typo", "raiser"):  # every other failure of the load too
        assert f"entry point {name} = tl_{name}" in message


def test_a_deny_list_name_that_matches_nothing_is_a_warning_with_a_suggestion(test_eps):
    host = load(test_eps, deny=frozenset({"goood"}), deny_origin={"goood": "[plugins] disable"})
    (warning,) = host.warnings
    assert warning == (
        "[plugins] disable names 'goood', but no installed plugin has that entry-point or "
        "distribution name (did you mean 'good'?)"
    )
    assert host.record("good").status is PluginStatus.LOADED


def test_an_allow_list_name_that_matches_nothing_fails_in_strict_mode(test_eps):
    with pytest.raises(PluginError, match="TOOLANG_LOAD_PLUGINS names 'nothing-like-it'"):
        load(test_eps, allow=frozenset({"good", "nothing-like-it"}), strict=True,
             allow_origin="TOOLANG_LOAD_PLUGINS")  # fmt: skip


def test_list_names_match_through_either_name_and_spaces_are_ignored(test_eps, marker):
    policy = LoadPolicy.resolve(
        {"TOOLANG_DISABLE_PLUGINS": " spy , toolang-test-typo ,"}, config_disable=[" raiser "]
    )
    assert policy.deny == {"spy", "toolang-test-typo", "raiser"}
    host = PluginHost.from_entry_points(policy, entry_points=test_eps)
    assert not marker.exists()
    assert host.record("typo").status is PluginStatus.DISABLED
    assert host.record("raiser").status is PluginStatus.DISABLED
    assert host.warnings == []
    allow = LoadPolicy.resolve({"TOOLANG_LOAD_PLUGINS": " good,  spy "})
    assert allow.allow == {"good", "spy"}


def test_an_import_failure_logs_its_traceback_at_debug_level(test_eps):
    import io

    import structlog

    from toolang_core.logs import configure_logging

    stream = io.StringIO()
    configure_logging(level="debug", fmt="json", stream=stream)
    try:
        load(test_eps, deny=frozenset({"dup"}))
    finally:
        structlog.reset_defaults()
    logged = stream.getvalue()
    assert '"event": "plugin.traceback"' in logged
    assert "import tl_does_not_exist" in logged  # the line of the plugin that failed
