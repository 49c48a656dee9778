"""A thread group's admission defaults come from the turn source that owns it."""

from __future__ import annotations

from toolang_core import GroupPolicy, NewTurnRequest, hookimpl
from toolang_core.inbox.policy import OTHER_GROUP
from toolang_core.plugins import PluginStatus


def source_plugin(name, **register_kwargs):
    def toolang_register_turn_sources(register):
        register(name, lambda context: None, **register_kwargs)

    namespace = {
        "toolang_register_turn_sources": staticmethod(hookimpl(toolang_register_turn_sources))
    }
    return type("SourcePlugin", (), namespace)()


def test_a_source_s_declared_defaults_rule_its_group(toolang_runtime):
    declared = GroupPolicy(priority=5, strategy="coalesce", max_running=2, max_queued=3)
    runtime = toolang_runtime(plugins={"beat": source_plugin("beat", admission=declared)})
    assert runtime.policy.group("beat") == declared
    assert runtime.policy.caps["beat"] == 2
    rules = runtime.policy.rules_for(NewTurnRequest(source="beat", thread_id="b:1", input="x"))
    assert (rules.priority, rules.strategy, rules.max_queued) == (5, "coalesce", 3)


def test_the_configuration_overrides_what_the_source_declared(toolang_runtime):
    declared = GroupPolicy(priority=5, strategy="coalesce", max_running=2)
    runtime = toolang_runtime(
        "[scheduler.groups.beat]\npriority = 50\n",
        plugins={"beat": source_plugin("beat", admission=declared)},
    )
    assert runtime.policy.group("beat") == GroupPolicy(
        priority=50, strategy="coalesce", max_running=2
    )


def test_a_source_without_defaults_gets_the_generic_fallback(toolang_runtime):
    runtime = toolang_runtime(plugins={"beat": source_plugin("beat")})
    assert runtime.policy.group("beat") == OTHER_GROUP
    assert "beat" not in runtime.policy.caps


def test_the_core_keeps_the_task_run_group_s_defaults_without_any_source(toolang_runtime):
    runtime = toolang_runtime()
    assert runtime.policy.group("task") == GroupPolicy(
        priority=20, strategy="coalesce", max_running=4
    )
    assert runtime.policy.group("chat") == OTHER_GROUP  # no core default for plugin sources


def test_admission_that_is_no_group_policy_fails_the_plugin_naming_the_source(
    toolang_host, toolang_register
):
    toolang_register(source_plugin("beat", admission={"priority": 5}), "bad")
    toolang_host.components
    record = toolang_host.record("bad")
    assert record.status is PluginStatus.FAILED
    assert record.error.hook == "toolang_register_turn_sources"
    assert "turn source 'beat': admission must be a toolang_core.GroupPolicy" in (
        record.error.message
    )
