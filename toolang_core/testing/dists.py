"""Build real, importable distributions for entry-point tests.

``make_distribution`` writes modules and a ``<name>-<version>.dist-info`` directory
(``METADATA``, ``entry_points.txt``, ``RECORD``) into a directory. Put that directory
on ``sys.path`` (or ``PYTHONPATH`` for a subprocess) and ``importlib.metadata`` finds
the distribution exactly as it finds an installed one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path


def make_distribution(
    root: Path,
    name: str,
    version: str = "1.0",
    *,
    entry_points: Mapping[str, Mapping[str, str]] | None = None,
    modules: Mapping[str, str] | None = None,
) -> Path:
    """Write distribution ``name`` into ``root`` and return its ``.dist-info`` path.

    ``entry_points`` maps group → {entry-point name: "module:attr"}; ``modules`` maps a
    dotted module name to its source (``"pkg.mod"`` creates ``pkg/__init__.py`` too).
    """
    root.mkdir(parents=True, exist_ok=True)
    written = []
    for dotted, source in (modules or {}).items():
        parts = dotted.split(".")
        for depth in range(1, len(parts)):
            init = root.joinpath(*parts[:depth], "__init__.py")
            if not init.exists():
                init.parent.mkdir(parents=True, exist_ok=True)
                init.write_text("", encoding="utf-8")
                written.append(init)
        target = root.joinpath(*parts[:-1], parts[-1] + ".py")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(source, encoding="utf-8")
        written.append(target)
    stem = re.sub(r"[-_.]+", "_", name)
    info = root / f"{stem}-{version}.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8"
    )
    lines = []
    for group, eps in (entry_points or {}).items():
        lines.append(f"[{group}]")
        lines.extend(f"{ep_name} = {value}" for ep_name, value in eps.items())
        lines.append("")
    (info / "entry_points.txt").write_text("\n".join(lines), encoding="utf-8")
    records = [
        *(p.relative_to(root) for p in written),
        (info / "METADATA").relative_to(root),
        (info / "entry_points.txt").relative_to(root),
    ]
    (info / "RECORD").write_text("".join(f"{r},,\n" for r in records), encoding="utf-8")
    return info
