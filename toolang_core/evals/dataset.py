"""Reading an eval dataset (YAML or JSONL) into cases, every mistake named by file and
line.

YAML: a list of cases, or a mapping with ``cases`` and ``evaluators`` (used by every
case). JSONL: one case per line; a line holding only ``evaluators`` gives those for
every case. A case: ``input`` (required), ``id``, ``expected`` (text), ``schema`` (a JSON
Schema), ``tags``, ``agent``, ``evaluators`` (a list: ``- contains: "Paris"``, or a bare
name). A case naming no evaluator, where the dataset names none either, is judged by
``exact`` when it has ``expected`` and by ``json_schema`` when it has ``schema``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import attrs

from toolang_core.errors import UsageError
from toolang_core.evals.types import EvalCase, EvaluatorUse

if TYPE_CHECKING:
    from toolang_core.evals.registry import Evaluators

CASE_KEYS: Final = frozenset({"id", "input", "expected", "schema", "tags", "agent", "evaluators"})


class DatasetError(UsageError):
    """A dataset that cannot be used: the message starts with ``FILE:LINE:``."""


@attrs.frozen
class Dataset:
    """The cases of a dataset file, and the evaluators it names for every case."""

    path: Path
    cases: tuple[EvalCase, ...]
    evaluators: tuple[EvaluatorUse, ...] = ()


@attrs.frozen
class _Item:
    """A value of the file and the line it starts on."""

    value: Any
    line: int
    children: tuple[_Item, ...] = ()  # a list's items, a mapping's values (in key order)

    def child(self, index: int) -> _Item:
        return self.children[index] if index < len(self.children) else self


def load_dataset(path: Path, evaluators: Evaluators) -> Dataset:
    """Read ``path`` (``.jsonl``/``.ndjson``: JSON lines, else YAML).

    :raises DatasetError: naming ``path`` and the line: a line that is not JSON, a case
        without ``input``, an unknown key or evaluator, parameters an evaluator refuses
        (a regex or JSON Schema that does not compile)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"{path}: cannot read the dataset: {exc}") from None
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        items = list(_json_lines(path, text))
    else:
        items = _yaml_items(path, text)
    return _build(path, items, evaluators)


def _json_lines(path: Path, text: str) -> Iterator[_Item]:
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError as exc:
            raise DatasetError(f"{path}:{number}: not a JSON object: {exc}") from None
        yield _flat(value, number)


def _flat(value: Any, line: int) -> _Item:
    """``value`` and its children, all on ``line`` (a JSON line)."""
    if isinstance(value, list):
        return _Item(value, line, tuple(_flat(v, line) for v in value))
    if isinstance(value, Mapping):
        return _Item(value, line, tuple(_flat(v, line) for v in value.values()))
    return _Item(value, line)


def _yaml_items(path: Path, text: str) -> list[_Item]:
    """The top-level items of a YAML dataset: the defaults mapping (if any) first."""
    try:
        import yaml
    except ImportError:  # pragma: no cover - PyYAML comes with the agent plugins
        raise DatasetError(
            f"{path}: reading YAML needs PyYAML (pip install 'toolang-core[agentmd]'), "
            "or write the dataset as JSON lines (.jsonl)"
        ) from None
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        value = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f"{mark.line + 1}" if mark is not None else "1"
        raise DatasetError(f"{path}:{line}: not valid YAML: {exc}") from None
    finally:
        loader.dispose()
    if node is None:
        raise DatasetError(f"{path}:1: the dataset is empty; expected a list of cases")
    item = _item(node, value)
    if isinstance(value, list):
        return list(item.children)
    if isinstance(value, Mapping) and "cases" in value:
        unknown = set(value) - {"cases", "evaluators"}
        if unknown:
            raise DatasetError(
                f"{path}:{item.line}: unknown key(s) {sorted(unknown)}; expected cases, evaluators"
            )
        keys = list(value)
        cases = item.children[keys.index("cases")]
        if not isinstance(cases.value, list):
            raise DatasetError(f"{path}:{cases.line}: cases: expected a list of cases")
        defaults = []
        if "evaluators" in value:
            evaluators = item.children[keys.index("evaluators")]
            defaults = [_Item({"evaluators": evaluators.value}, evaluators.line, (evaluators,))]
        return [*defaults, *cases.children]
    raise DatasetError(
        f"{path}:{item.line}: expected a list of cases, or a mapping with cases and evaluators"
    )


def _item(node: Any, value: Any) -> _Item:
    """``value`` with the line of ``node`` and of its children (YAML nodes)."""
    line = node.start_mark.line + 1
    if isinstance(value, list) and isinstance(node.value, list):
        return _Item(
            value, line, tuple(_item(n, v) for n, v in zip(node.value, value, strict=False))
        )
    if isinstance(value, Mapping) and isinstance(node.value, list):
        values = [_item(v, value.get(getattr(k, "value", None))) for k, v in node.value]
        return _Item(value, line, tuple(values))
    return _Item(value, line)


def _build(path: Path, items: Sequence[_Item], evaluators: Evaluators) -> Dataset:
    defaults: tuple[EvaluatorUse, ...] = ()
    cases: list[EvalCase] = []
    seen: dict[str, int] = {}
    for index, item in enumerate(items):
        where = f"{path}:{item.line}"
        value = item.value
        if not isinstance(value, Mapping):
            raise DatasetError(f"{where}: expected a case (a mapping with input), found {value!r}")
        if set(value) == {"evaluators"} and index == 0:
            defaults = build_uses(path, item.child(0), evaluators)
            continue
        case = _case(path, item, len(cases) + 1, evaluators)
        if case.id in seen:
            raise DatasetError(f"{where}: case id {case.id!r} is used twice (line {seen[case.id]})")
        seen[case.id] = item.line
        cases.append(case)
    if not cases:
        raise DatasetError(f"{path}:1: the dataset has no cases")
    if not defaults:
        cases = [_implied(c, evaluators) for c in cases]
    return Dataset(path, tuple(cases), defaults)


def _case(path: Path, item: _Item, number: int, evaluators: Evaluators) -> EvalCase:
    where = f"{path}:{item.line}"
    value = item.value
    unknown = set(value) - CASE_KEYS
    if unknown:
        raise DatasetError(
            f"{where}: unknown key(s) {sorted(unknown)}; a case has {', '.join(sorted(CASE_KEYS))}"
        )
    if not isinstance(value.get("input"), str):
        raise DatasetError(
            f"{where}: input: expected the text to send, found {value.get('input')!r}"
        )
    for key in ("expected", "agent"):
        if value.get(key) is not None and not isinstance(value[key], str):
            raise DatasetError(f"{where}: {key}: expected a text, found {value[key]!r}")
    tags = value.get("tags") or []
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise DatasetError(f"{where}: tags: expected a list of texts, found {tags!r}")
    schema = value.get("schema")
    if schema is not None:
        from toolang_core.evals.builtin import compile_schema

        try:
            compile_schema(schema)
        except ValueError as exc:
            raise DatasetError(f"{where}: schema: {exc}") from None
    uses: tuple[EvaluatorUse, ...] = ()
    if "evaluators" in value:
        keys = list(value)
        uses = build_uses(path, item.child(keys.index("evaluators")), evaluators)
    return EvalCase(
        id=str(value.get("id", number)),
        input=value["input"],
        origin=where,
        evaluators=uses,
        expected=value.get("expected"),
        schema=schema,
        tags=tuple(tags),
        agent=value.get("agent"),
    )


def _implied(case: EvalCase, registry: Evaluators) -> EvalCase:
    """A case without evaluators is judged by what it gives: ``expected`` (exact) and
    ``schema`` (json_schema)."""
    if case.evaluators:
        return case
    wanted = [("exact", None)] if case.expected is not None else []
    wanted += [("json_schema", None)] if case.schema is not None else []
    uses = tuple(build_use(registry, name, params, case.origin) for name, params in wanted)
    return attrs.evolve(case, evaluators=uses)


def build_uses(path: Path, item: _Item, registry: Evaluators) -> tuple[EvaluatorUse, ...]:
    """The evaluators a list item names (``- contains: X`` or ``- exact``)."""
    if not isinstance(item.value, list):
        raise DatasetError(
            f"{path}:{item.line}: evaluators: expected a list (- contains: TEXT), "
            f"found {item.value!r}"
        )
    uses = []
    for index, raw in enumerate(item.value):
        where = f"{path}:{item.child(index).line}"
        if isinstance(raw, str):
            name, params = raw, None
        elif isinstance(raw, Mapping) and len(raw) == 1:
            ((name, params),) = raw.items()
        else:
            raise DatasetError(
                f"{where}: expected an evaluator (`- NAME: PARAMETERS` or `- NAME`), found {raw!r}"
            )
        uses.append(build_use(registry, str(name), params, where))
    return tuple(uses)


def build_use(registry: Evaluators, name: str, params: Any, where: str) -> EvaluatorUse:
    """Evaluator ``name`` built with ``params``. :raises DatasetError: naming ``where``."""
    registration = registry.by_name.get(name)
    if registration is None:
        raise DatasetError(
            f"{where}: unknown evaluator {name!r}; known evaluators: {registry.known()}"
        )
    try:
        evaluator = registration.factory(params)
    except (ValueError, TypeError) as exc:
        raise DatasetError(f"{where}: evaluator {name!r}: {exc}") from None
    if not callable(getattr(evaluator, "evaluate", None)):
        raise DatasetError(
            f"{where}: evaluator {name!r} (plugin {registration.plugin!r}) built {evaluator!r}, "
            "which has no evaluate method"
        )
    return EvaluatorUse(name, params, evaluator)
