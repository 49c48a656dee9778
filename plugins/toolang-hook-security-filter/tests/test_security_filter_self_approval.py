"""The `self-approval` rule: a tool call that would decide a toolang approval is blocked."""

from __future__ import annotations

import pytest

from toolang_core import Block


@pytest.mark.parametrize(
    "command",
    [
        "toolang approvals approve ap-1",
        "toolang approvals deny ap-1 --reason x",
        "cd .. && python3 -m toolang_core --config t.toml approvals approve $(cat id) --always",
        "env -u TOOLANG_TOOL_CALL toolang   approvals\tapprove ap-1",
        "python -c 'from toolang_core import ApprovalBook; "
        'ApprovalBook(s).decide("ap", approved=True, by="me")\'',
    ],
)
def test_deciding_an_approval_from_a_tool_is_blocked(default_filter, command):
    verdict = default_filter.call({"command": command})
    assert isinstance(verdict, Block), verdict
    assert "self-approval" in verdict.reason
    assert "only a person may approve or deny" in verdict.reason


@pytest.mark.parametrize(
    "command",
    ["toolang approvals list", "toolang approvals show ap-1", "echo 'approve the approvals doc'"],
)
def test_reading_approvals_passes(default_filter, command):
    assert not isinstance(default_filter.call({"command": command}), Block)
