"""What a question may ask for, and whether an answer fits it.

A question is free text, a pick among ``choices``, or a value matching a JSON
``schema`` (checked with the project's JSON Schema validator, fastjsonschema). The
checks run twice: on the question when the model asks it (a bad question fails the tool
call, so the model can fix it; no person is bothered), and on each answer (a bad answer
is refused with what was expected, and the question stays open).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from toolang_core.errors import ToolangError
from toolang_core.store.json_text import check, dumps, nul_written_out

MAX_QUESTION: Final = 4000
MAX_CHOICES: Final = 50
MAX_ANSWER: Final = 20_000


class BadQuestion(ValueError):
    """The model's question cannot be asked (its message goes back to the model)."""


class AnswerRefused(ToolangError):
    """An answer does not fit its question: nothing was recorded, the question is still
    open. The message says what was expected."""

    exit_code = 2


def check_question(
    question: str, choices: Sequence[str] | None, schema: Mapping[str, Any] | None
) -> tuple[str, tuple[str, ...] | None, dict[str, Any] | None]:
    """The question as it will be stored: text stripped, choices as a tuple, schema
    compiled once to prove it is a JSON Schema.

    :raises BadQuestion: empty or too long text, empty or repeated choices, choices and
        a schema both, or a schema that is not a valid JSON Schema.
    """
    text = question.strip()
    if not text or len(text) > MAX_QUESTION:
        raise BadQuestion(f"question must be 1 to {MAX_QUESTION} characters, got {len(text)}")
    if choices is not None and schema is not None:
        raise BadQuestion("give choices or a schema for the answer, not both")
    picked: tuple[str, ...] | None = None
    if choices is not None:
        picked = tuple(str(c).strip() for c in choices)
        if not picked or len(picked) > MAX_CHOICES or not all(picked):
            raise BadQuestion(f"choices must be 1 to {MAX_CHOICES} non-empty strings")
        folded = [c.casefold() for c in picked]
        if len(set(folded)) != len(folded):
            raise BadQuestion(f"choices must differ (ignoring case), got {list(picked)}")
    shape: dict[str, Any] | None = None
    if schema is not None:
        if not isinstance(schema, Mapping):
            raise BadQuestion(f"schema must be a JSON Schema object, got {type(schema).__name__}")
        shape = dict(schema)
        _compiled(json.dumps(shape, sort_keys=True))
    return text, picked, shape


def check_answer(text: str, choices: Sequence[str] | None, schema: Mapping[str, Any] | None) -> Any:
    """The value ``text`` answers with: the matching choice (case is forgiven), the
    JSON value the schema accepts, or the text itself.

    For a schema, ``text`` is read as JSON; text that is not JSON is taken as a string
    (so ``{"type": "string", ...}`` needs no quotes).

    The answer is checked as it is stored: a NUL in it is written out as ``\\x00``
    first, so a length or pattern it passed holds for what the turn reads.

    :raises AnswerRefused: empty or too long, not one of the choices, or not valid for
        the schema — naming what was expected.
    """
    # Checked as every store keeps it (a NUL written out): what is stored is what passed.
    answer = nul_written_out(text.strip())
    if not answer or len(answer) > MAX_ANSWER:
        raise AnswerRefused(f"an answer must be 1 to {MAX_ANSWER} characters, got {len(answer)}")
    if choices:
        for choice in choices:
            if choice.casefold() == answer.casefold():
                return choice
        raise AnswerRefused(
            f"{answer!r} is not one of the choices: expected one of "
            + ", ".join(repr(c) for c in choices)
        )
    if schema is None:
        return answer
    try:  # NaN, Infinity, 1e400 are not JSON (no store takes them): text, as any non-JSON
        value: Any = json.loads(answer)
        check(value)
        value = json.loads(dumps(value))  # (a NUL escaped in the JSON, written out)
    except ValueError:
        value = answer
    problem = _problem(schema, value)
    if problem is not None and not isinstance(value, str) and _problem(schema, answer) is None:
        return answer  # e.g. "42" for a string schema: the text is what was meant
    if problem is not None:
        raise AnswerRefused(
            f"the answer does not match the question's schema: {problem} "
            f"(expected JSON matching {json.dumps(dict(schema), ensure_ascii=False)})"
        )
    return value


def _problem(schema: Mapping[str, Any], value: Any) -> str | None:
    import fastjsonschema

    validate = _compiled(json.dumps(dict(schema), sort_keys=True))
    try:
        validate(value)
    except fastjsonschema.JsonSchemaValueException as exc:
        message: str = exc.message
        return message.replace("data", "the answer", 1)
    return None


@functools.lru_cache(maxsize=64)
def _compiled(schema_json: str) -> Callable[[Any], Any]:
    """The validator of a schema (by its canonical JSON).

    :raises BadQuestion: when it is not a valid JSON Schema."""
    import fastjsonschema

    try:
        return fastjsonschema.compile(json.loads(schema_json), use_default=False)
    except fastjsonschema.JsonSchemaDefinitionException as exc:
        raise BadQuestion(f"schema is not a valid JSON Schema: {exc}") from None
