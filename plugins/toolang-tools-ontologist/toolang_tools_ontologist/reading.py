"""Rows to ingest, each with the line it starts on: CSV (a header line, then one record
per row; quoted fields may span lines), a JSON array of objects, or JSON Lines.

A row that cannot be read as one (a CSV record with another number of fields than the
header, a JSON element that is not an object) is kept with its problem, so the ingest
reports it with its line instead of stopping.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import attrs

from toolang_tools_ontologist.common import OntologyError

Format = Literal["csv", "json", "jsonl"]


@attrs.frozen
class Row:
    line: int
    values: Mapping[str, Any]
    problem: str | None = None


@attrs.frozen
class Table:
    columns: tuple[str, ...]
    """The CSV header, or every key some JSON row has (in first-seen order)."""
    rows: list[Row]
    typed: bool
    """Whether values are JSON values (JSON) or text to convert (CSV)."""


def format_of(name: str, given: Format | None) -> Format:
    if given is not None:
        return given
    suffix = Path(name).suffix.lower()
    if suffix in (".csv", ".json", ".jsonl"):
        return suffix[1:]  # type: ignore[return-value]
    if suffix == ".ndjson":
        return "jsonl"
    raise OntologyError(
        f"format: cannot tell the format of {name!r} from its name; expected format "
        "csv, json or jsonl"
    )


def read_table(text: str, fmt: Format) -> Table:
    """The rows of ``text``.

    :raises OntologyError: when the whole text cannot be read (no CSV header, a JSON
        document that is not an array of rows).
    """
    if fmt == "csv":
        return _csv(text)
    if fmt == "jsonl":
        rows = []
        for number, line in enumerate(text.splitlines(), 1):
            if line.strip():
                rows.append(_json_row(number, line, 0))
        return _json_table(rows)
    return _json_table(_json_array(text))


def _csv(text: str) -> Table:
    reader = csv.reader(io.StringIO(text, newline=""))
    header: list[str] | None = None
    rows: list[Row] = []
    last = 0
    try:
        for record in reader:
            line, last = last + 1, reader.line_num
            if not record or (len(record) == 1 and not record[0].strip()):
                continue  # a blank line
            if header is None:
                header = [name.strip() for name in record]
                continue
            if len(record) != len(header):
                rows.append(
                    Row(line, {}, f"expected {len(header)} fields (the header's), found "
                        f"{len(record)}")
                )  # fmt: skip
                continue
            rows.append(Row(line, dict(zip(header, record, strict=True))))
    except csv.Error as exc:
        raise OntologyError(f"the CSV cannot be read past line {reader.line_num}: {exc}") from None
    if header is None:
        raise OntologyError("the CSV is empty: expected a header line naming the columns")
    return Table(tuple(header), rows, typed=False)


def _json_row(line: int, text: str, at: int) -> Row:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return Row(line, {}, f"not JSON: {exc.msg} (column {exc.colno + at})")
    if not isinstance(value, dict):
        return Row(line, {}, f"expected a JSON object, found {type(value).__name__}")
    return Row(line, value)


def _json_array(text: str) -> list[Row]:
    """Each element of a JSON array with the line it starts on (the array is read
    element by element, so the lines are exact)."""
    decoder = json.JSONDecoder()
    at = _skip(text, 0)
    if not text.startswith("[", at):
        raise OntologyError("the JSON is not an array: expected [ {row}, {row}, ... ]")
    at = _skip(text, at + 1)
    rows: list[Row] = []
    while at < len(text) and text[at] != "]":
        line = text.count("\n", 0, at) + 1
        try:
            value, at = decoder.raw_decode(text, at)
        except json.JSONDecodeError as exc:
            raise OntologyError(
                f"the JSON cannot be read past line {exc.lineno}, column {exc.colno}: {exc.msg}"
            ) from None
        rows.append(
            Row(line, value)
            if isinstance(value, dict)
            else Row(line, {}, f"expected a JSON object, found {type(value).__name__}")
        )
        at = _skip(text, at)
        if text.startswith(",", at):
            at = _skip(text, at + 1)
        elif not text.startswith("]", at):
            line = text.count("\n", 0, at) + 1
            raise OntologyError(f"the JSON cannot be read at line {line}: expected , or ]")
    if at >= len(text):
        line = text.count("\n") + 1
        raise OntologyError(f"the JSON cannot be read past line {line}: expected ] to close it")
    return rows


def _skip(text: str, at: int) -> int:
    while at < len(text) and text[at] in " \t\r\n":
        at += 1
    return at


def _json_table(rows: list[Row]) -> Table:
    columns: dict[str, None] = {}
    for row in rows:
        columns.update(dict.fromkeys(row.values))
    return Table(tuple(columns), rows, typed=True)
