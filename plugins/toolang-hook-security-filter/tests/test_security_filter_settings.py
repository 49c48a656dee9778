"""``[plugins.hook-security-filter]``: clear errors, and each setting doing what it says."""

from __future__ import annotations

import subprocess
import sys

import pytest

import toolang_hook_security_filter as plugin
from toolang_core import AskApproval, Block, ConfigError, Modify, Observe, ToolCall

SECTION = "plugins.hook-security-filter"


def config_error(toolang_runtime, settings: str) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        toolang_runtime(f"[{SECTION}]\n{settings}", plugins={plugin.NAME: plugin})
    return caught.value.problems


def test_invalid_regexes_are_each_reported_at_their_key(toolang_runtime):
    problems = config_error(
        toolang_runtime, 'block_patterns = ["ok", "x("]\nobserve_patterns = ["*x"]\n'
    )
    assert len(problems) == 2
    assert problems[0].endswith(
        f"{SECTION}.block_patterns[1]: 'x(' is not a valid regular expression "
        "(missing ), unterminated subpattern at position 1)"
    )
    assert f"{SECTION}.observe_patterns[0]: '*x' is not a valid regular expression" in problems[1]


def test_an_unknown_rule_name_is_reported_with_the_names_there_are(toolang_runtime):
    (problem,) = config_error(toolang_runtime, 'disable_rules = ["sudo", "rm-rf"]\n')
    assert f"{SECTION}.disable_rules[1]: expected one of 'recursive-delete-of-root-or-home'" in (
        problem
    )
    assert problem.endswith('found a string ("rm-rf")')


def test_an_unknown_pii_kind_is_reported(toolang_runtime):
    (problem,) = config_error(toolang_runtime, 'pii_kinds = ["email", "mail"]\n')
    assert problem.endswith(
        f"{SECTION}.pii_kinds[1]: expected one of 'email', 'phone', 'card', 'iban', "
        "'secret', 'national_id', found a string (\"mail\")"
    )


def test_a_misspelled_key_gets_a_suggestion(toolang_runtime):
    (problem,) = config_error(toolang_runtime, "redact_param = false\n")
    assert problem.endswith(f"{SECTION}.redact_param: unknown key (did you mean 'redact_params'?)")


def test_block_patterns_add_rules_matched_as_written(security_filter):
    checker = security_filter('block_patterns = ["\\\\bterraform apply\\\\b"]\n')
    verdict = checker.call({"command": "terraform apply -auto-approve"})
    assert isinstance(verdict, Block)
    assert "rule block_patterns[0]," in verdict.reason
    assert checker.call({"command": "Terraform Apply"}) is None  # no (?i): case counts


def test_observe_patterns_add_warnings(security_filter):
    checker = security_filter('observe_patterns = ["(?i)prod(uction)?-db"]\n')
    verdict = checker.call({"command": "psql -h PROD-DB -c 'select 1'"})
    assert isinstance(verdict, Observe)
    assert "rule observe_patterns[0]," in verdict.message


def test_disable_rules_switches_off_only_the_named_rules(security_filter):
    # crontab -r is seen by a pattern rule and by the parsing rule "persistence".
    checker = security_filter('disable_rules = ["crontab-wipe", "persistence", "sudo"]\n')
    assert checker.call({"command": "crontab -r"}) is None
    assert checker.call({"command": "sudo ls"}) is None
    assert isinstance(checker.call({"command": "kill -9 -1"}), Block | AskApproval)


def test_redact_params_off_leaves_parameters_but_still_masks_results(security_filter):
    checker = security_filter("redact_params = false\n")
    assert checker.call({"to": "ann@example.com"}) is None
    assert checker.result("from ann@example.com").output == "from [email redacted]"


def test_redact_results_off_leaves_results_but_still_masks_parameters(security_filter):
    checker = security_filter("redact_results = false\n")
    assert checker.result("from ann@example.com") is None
    assert isinstance(checker.call({"to": "ann@example.com"}), Modify)


def test_pii_kinds_limits_what_is_masked(security_filter):
    checker = security_filter('pii_kinds = ["email"]\n')
    verdict = checker.call({"body": "ann@example.com, +44 20 7946 0958"})
    assert isinstance(verdict, Modify)
    assert verdict.params == {"body": "[email redacted], +44 20 7946 0958"}


def test_exempt_tools_are_left_alone_by_name_or_glob(security_filter):
    checker = security_filter('exempt_tools = ["mail_*", "docs_write"]\n')
    assert checker.call({"to": "ann@example.com"}, tool="mail_send") is None
    assert checker.call({"text": "never run rm -rf /"}, tool="docs_write") is None
    assert checker.result("ann@example.com", tool="mail_read") is None
    assert isinstance(checker.call({"command": "rm -rf /"}, tool="exec_run"), Block)


def test_the_policy_is_compiled_once_per_runtime(security_filter):
    first, second = security_filter(), security_filter()
    call = ToolCall("c1", "exec_run", {"command": "ls"})
    assert plugin.policy_of(first.context(call)) is plugin.policy_of(first.context(call))
    assert plugin.policy_of(first.context(call)) is not plugin.policy_of(second.context(call))


def test_the_settings_load_without_the_rules():
    """Every command registers the settings (and every one-shot chat checks them): the
    rule names they are checked against come without the rules' tables."""
    probe = (
        "import sys\n"
        "from toolang_hook_security_filter.settings import FilterSettings\n"
        "FilterSettings(disable_rules=('sudo',))\n"
        "print('toolang_hook_security_filter.rules' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
