"""The shell examples of the pages on attachments, questions, spend limits, long
conversations and evals stay true: each page's walkthrough (the ```sh block after
``<!-- NAME:walkthrough -->``) runs as written in a fresh directory — real `toolang`
processes, the offline demo model — every command succeeding (a command expected to
fail says so with ``|| echo "exit $?"``), and prints the lines of the page's
``<!-- NAME:output -->`` block, in that order (other lines may come between). In an
expected line ``…`` stands for what differs from run to run (ids, times, token counts)
and a run of spaces for any run of spaces (table columns widen with the ids).

A shell block that cannot run offline (it needs a server or an API key) is marked
``<!-- illustrative: why -->`` instead; every other shell block of these pages must be
a walkthrough. docs/typed-answers.md's walkthrough has its own, stricter test
(test_docs_typed_answers.py)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
WALKTHROUGHS = (
    "attachments.md",
    "questions.md",
    "spend-limits.md",
    "long-conversations.md",
    "evals.md",
)
SHELL_BLOCK = re.compile(r"(<!--[^\n]*-->\s*)?```(?:sh|bash|shell|console)\n")
MARK = re.compile(r"<!-- (?:[\w-]+:walkthrough|illustrative: [^\n]+) -->")


def marked_block(page: str, kind: str) -> str:
    text = (DOCS / page).read_text()
    found = re.search(rf"<!-- [\w-]+:{kind} -->\s*```\w+\n(.*?)```", text, re.S)
    assert found, f"docs/{page} has no <!-- NAME:{kind} --> block"
    return found.group(1)


def line_pattern(expected: str) -> re.Pattern[str]:
    """``expected`` as a pattern: ``…`` is anything, a run of spaces any run of them."""
    pieces = (
        "\\s+".join(re.escape(word) for word in re.split(r"\s+", piece))
        for piece in expected.split("…")
    )
    return re.compile(".*?".join(pieces))


def missing_lines(output: str, expected: list[str]) -> list[str]:
    """The expected lines not found in ``output`` in order (each after the previous)."""
    lines = [line.rstrip() for line in output.splitlines()]
    at, missing = 0, []
    for want in expected:
        pattern = line_pattern(want.rstrip())
        found = next((i for i in range(at, len(lines)) if pattern.fullmatch(lines[i])), None)
        if found is None:
            missing.append(want)
        else:
            at = found + 1
    return missing


@pytest.mark.parametrize("page", [*WALKTHROUGHS, "typed-answers.md"])
def test_every_shell_block_is_a_walkthrough_or_marked_illustrative(page):
    text = (DOCS / page).read_text()
    unmarked = [
        text.count("\n", 0, found.start()) + 1
        for found in SHELL_BLOCK.finditer(text)
        if not (found.group(1) and MARK.fullmatch(found.group(1).strip()))
    ]
    assert not unmarked, (
        f"docs/{page}: the shell block(s) at line(s) {unmarked} are neither a "
        "<!-- NAME:walkthrough --> nor marked <!-- illustrative: why -->"
    )


def test_an_expected_line_matches_ids_and_column_widths_and_keeps_its_order():
    output = "ID      STATUS\nq06h2hq  open    06h2 (awaiting)\nexit 2\n"
    assert missing_lines(output, ["ID STATUS", "q…  open  … (awaiting)", "exit 2"]) == []
    assert missing_lines(output, ["exit 2", "ID STATUS"]) == ["ID STATUS"]
    assert missing_lines(output, ["exit 1"]) == ["exit 1"]


@pytest.mark.slow  # real toolang processes, several per page
@pytest.mark.parametrize("page", WALKTHROUGHS)
def test_the_walkthrough_runs_as_written_and_prints_what_the_page_shows(page, tmp_path):
    bin_dir = Path(sys.executable).parent
    result = subprocess.run(
        ["bash", "--noprofile", "--norc", "-e", "-c", marked_block(page, "walkthrough")],
        cwd=tmp_path,
        env={
            "PATH": f"{bin_dir}:/usr/local/bin:/usr/bin:/bin",
            "HOME": str(tmp_path),
            "LANG": "C.UTF-8",
        },
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,  # the page shows what a terminal shows: both
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, f"docs/{page}'s walkthrough failed:\n{result.stdout}"
    missing = missing_lines(result.stdout, marked_block(page, "output").splitlines())
    assert not missing, (
        f"docs/{page}: these lines (in this order) were not printed: {missing}\n"
        f"--- printed:\n{result.stdout}"
    )
