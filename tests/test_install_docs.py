"""Install lines in the docs name what exists (issue #31, item 16): toolang's
distributions are on no package index, so ``pip install toolang-otel`` fails for a
reader. Every ``pip install`` of a toolang distribution installs from a checkout
(``./plugins/<dist>``, ``-e``, a path) or a wheelhouse (``--find-links``)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
PAGES += sorted((ROOT / "plugins").glob("*/README.md"))
BARE = re.compile(r"pip install\s+(?:-q\s+|--quiet\s+|-U\s+)*['\"]?toolang-[a-z]")


def test_no_page_installs_a_toolang_distribution_from_an_index():
    found = [
        f"{page.relative_to(ROOT)}:{number}: {line.strip()}"
        for page in PAGES
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
        if BARE.search(line) and "--find-links" not in line and " @ " not in line
    ]
    assert found == [], "install from ./plugins/<dist> or --find-links WHEELHOUSE:\n" + "\n".join(
        found
    )
