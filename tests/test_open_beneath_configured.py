"""``open_beneath(configured=…)``: a root an operator configured as a symbolic link (or
through one). An absolute path written through that link is the same path under the
real root; its words only are compared, so nothing written through it leads out —
what follows them is walked from the root's descriptor as any relative path is."""

from __future__ import annotations

import os

import pytest

from toolang_core import OutsideRoot, open_beneath


@pytest.fixture
def roots(tmp_path):
    real = tmp_path / "data" / "docs"
    (real / "guide").mkdir(parents=True)
    (real / "guide" / "a.md").write_text("inside")
    (tmp_path / "secret.txt").write_text("SECRET")
    alias = tmp_path / "docs"
    alias.symlink_to(real)
    return real.resolve(), alias


def read(root, path, configured=None) -> str:
    fd = open_beneath(root, path, os.O_RDONLY, configured=configured)
    with os.fdopen(fd) as handle:
        return handle.read()


def test_an_absolute_path_through_the_configured_link_is_read_beneath_the_root(roots):
    real, alias = roots
    assert read(real, f"{alias}/guide/a.md", configured=alias) == "inside"
    assert read(real, f"{real}/guide/a.md", configured=alias) == "inside"  # the real path
    assert read(real, "guide/a.md", configured=alias) == "inside"
    with pytest.raises(OutsideRoot):  # without it, as before: outside the resolved root
        read(real, f"{alias}/guide/a.md")


@pytest.mark.parametrize(
    "path",
    [
        "{alias}/../secret.txt",  # its words lead out of the link
        "{alias}/guide/../../secret.txt",
        "{alias}x/guide/a.md",  # shares the link's letters, not its words
        "{tmp}/secret.txt",
    ],
)
def test_nothing_written_through_the_configured_link_leads_out(roots, tmp_path, path):
    real, alias = roots
    with pytest.raises(OutsideRoot):
        read(real, path.format(alias=alias, tmp=tmp_path), configured=alias)


def test_a_links_absolute_target_through_the_configured_link_is_followed_beneath(roots, tmp_path):
    real, alias = roots
    (real / "near.md").symlink_to(alias / "guide" / "a.md")
    (real / "away.md").symlink_to(f"{alias}/../../secret.txt")
    assert read(real, "near.md", configured=alias) == "inside"
    with pytest.raises(OutsideRoot):
        read(real, "near.md")  # as before: the target is outside the resolved root
    with pytest.raises(OutsideRoot):
        read(real, "away.md", configured=alias)
