"""docs/api.md's route table is the one the plugin generates from its routes."""

from __future__ import annotations

from pathlib import Path

from toolang_server.reference import BEGIN, END, table

PAGE = Path(__file__).resolve().parents[3] / "docs" / "api.md"


def test_the_api_page_lists_exactly_the_registered_routes():
    text = PAGE.read_text(encoding="utf-8")
    start, end = text.index(BEGIN), text.index(END) + len(END)
    assert text[start:end] == table(), (
        "docs/api.md's route table is out of date: regenerate it with "
        "`python -m toolang_server.reference` and paste it between the markers"
    )


def test_every_api_route_is_documented_with_a_one_line_summary():
    for line in table().splitlines():
        if line.startswith("| GET") or line.startswith("| POST"):
            summary = line.split("|")[3].strip()
            assert summary.endswith("."), line
