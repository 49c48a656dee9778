"""The redaction policy's walk of nested values gives what its rule says, value by value.

``spec`` below is the rule written out plainly (one recursive function, no fast path);
the policy's walk takes shortcuts for the containers steps are made of and must give
the same result for every value."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from enum import IntEnum
from typing import Any

from hypothesis import given, settings, strategies as st

from toolang_core.redaction import (
    MASK,
    Masked,
    current,
    is_secret_key,
    redact,
    redact_text,
    use_detectors,
)

PLAIN = frozenset(
    {
        *("id", "call_id", "turn_id", "thread_id", "run_id", "tool_call_id", "parent"),
        *("idempotency_key", "kind", "status", "role", "stage", "decision", "error_type"),
        *("agent", "model", "provider", "source", "channel", "started_at", "finished_at"),
    }
)
SECRET = "EMP-123456"
CARD = 4111111111111111


class Level(IntEnum):
    LOW = 1


def filled(value: Any) -> bool:
    if value is None or isinstance(value, bool) or value == MASK:
        return False
    if isinstance(value, str | Mapping | list | tuple):
        return len(value) > 0
    return True


def number(value: int) -> Any:
    if 10**12 <= value < 10**19 and current().detector_names:
        text = str(value)
        masked = redact_text(text)
        return value if masked == text else masked
    return value


def spec(value: Any, key: str | None = None, depth: int = 0) -> Any:
    """The rule: under a secret-naming key (not one of the runtime's own names) a
    filled value is masked whole; text is masked unless under a name of the runtime's;
    a masked list is kept; flags, floats and nothing are kept; long numbers are shown to
    the detectors; past 32 levels a container is masked whole; mappings, lists and
    tuples are walked."""
    if key is not None and key not in PLAIN and is_secret_key(key) and filled(value):
        return MASK
    if isinstance(value, str):
        return value if key in PLAIN else redact_text(value)
    if type(value) is Masked:
        return value
    if value is None or isinstance(value, bool | float):
        return value
    if isinstance(value, int):
        return number(value)
    if depth > 32:
        return MASK
    if isinstance(value, Mapping):
        return {k: spec(v, str(k), depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(spec(v, None, depth + 1) for v in value)
    return value


keys = st.sampled_from(
    [
        *("id", "role", "agent", "model", "name", "text", "params", "output", "a", "note"),
        *("password", "api_key", "token", "Authorization", "session_key", "x_secret"),
    ]
) | st.integers(0, 3)
scalars = (
    st.none()
    | st.booleans()
    | st.floats(allow_nan=False)
    | st.integers(-(10**20), 10**20)
    | st.sampled_from([CARD, 10**12, 10**19, -CARD, Level.LOW])
    | st.sampled_from(["", "abc", "hello world", f"I am {SECRET}", MASK, "sk-" + "a" * 20])
    | st.sampled_from(["https://u:pw12345@host/x", "Bearer abcdefghijk", str(CARD)])
    | st.text(max_size=12)
)


def containers(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return (
        st.lists(children, max_size=4)
        | st.lists(children, max_size=3).map(tuple)
        | st.dictionaries(keys, children, max_size=4)
        | st.dictionaries(keys, children, max_size=3).map(OrderedDict)
        | st.lists(st.sampled_from(["x", 1, {"a": 2}]), max_size=2).map(Masked)
    )


values = st.recursive(scalars, containers, max_leaves=25)


def employee_ids(text: str) -> str:
    return text.replace(SECRET, "[employee]").replace(str(CARD), "[card]")


@settings(max_examples=400, deadline=None)
@given(values, st.booleans())
def test_the_walk_of_any_value_is_the_rule_applied_to_it(value, with_detector):
    undo = use_detectors({"acme": employee_ids} if with_detector else {})
    try:
        assert redact(value) == spec(value)
        assert redact({"data": value}) == spec({"data": value})
    finally:
        undo()


def test_the_walk_of_values_nested_past_its_depth_is_the_rule_applied_to_them():
    for depth in (30, 31, 32, 33, 34, 40):
        nested: Any = {"text": f"I am {SECRET}", "n": CARD}
        listed: Any = [f"I am {SECRET}", CARD]
        for level in range(depth):
            nested = {"level": level, "inner": nested} if level % 3 else [level, nested]
            listed = [listed] if level % 2 else {"k": listed}
        undo = use_detectors({"acme": employee_ids})
        try:
            assert redact(nested) == spec(nested)
            assert redact(listed) == spec(listed)
        finally:
            undo()
