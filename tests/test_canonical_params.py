"""canonical_params: one encoder built once, the same text json.dumps gave."""

from __future__ import annotations

import json
from datetime import date

import pytest

from toolang_core.tools.approvals import canonical_params, params_hash


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"b": 2, "a": 1},
        {"text": "ünïcode ✓", "nested": {"z": [1, 2.5, None, True], "a": "x"}},
        {"when": date(2026, 1, 2)},  # not JSON: its str()
    ],
)
def test_canonical_params_is_the_sorted_compact_json(params):
    expected = json.dumps(
        params, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
    )
    assert canonical_params(params) == expected


def test_params_hash_ignores_key_order_only():
    assert params_hash("add", {"a": 1, "b": 2}) == params_hash("add", {"b": 2, "a": 1})
    assert params_hash("add", {"a": 1, "b": 2}) != params_hash("add", {"a": 2, "b": 1})
