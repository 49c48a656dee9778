"""``toolang doctor`` checks ``[attachments]``: what the config's shape tells is refused
at load naming the key; the directory, a type no file can be, and a size held in
memory are named by the doctor (docs/attachments.md)."""

from __future__ import annotations

import pytest

DEMO = {"TOOLANG_LOAD_PLUGINS": "model-demo"}


def doctor(cli_run, tmp_path, section: str):
    (tmp_path / "toolang.toml").write_text("[attachments]\n" + section + "\n")
    result = cli_run("doctor", env=DEMO)
    out = result.stdout + result.stderr
    assert "Traceback" not in out
    return result.returncode, out


def test_a_dir_that_is_a_file_fails_naming_the_key(cli_run, tmp_path):
    (tmp_path / "afile").write_text("in the way")
    code, out = doctor(cli_run, tmp_path, 'dir = "afile"')
    assert code != 0
    assert "[attachments] dir = " in out and "afile" in out and "not a directory" in out


def test_a_dir_that_cannot_be_created_fails_naming_the_key(cli_run, tmp_path):
    (tmp_path / "afile").write_text("in the way")
    code, out = doctor(cli_run, tmp_path, 'dir = "afile/below"')
    assert code != 0
    assert "[attachments] dir = " in out and "cannot be created" in out


def test_a_type_no_file_can_be_fails_naming_the_key(cli_run, tmp_path):
    code, out = doctor(cli_run, tmp_path, 'types = ["image/png", "imgae/*"]')
    assert code != 0
    assert "[attachments] types[1] = 'imgae/*'" in out and "no file is ever" in out


def test_a_size_over_a_gibibyte_is_warned_of(cli_run, tmp_path):
    _, out = doctor(cli_run, tmp_path, "max_bytes = 4294967296")
    assert "[attachments] max_bytes = 4294967296: over 1 GiB" in out


def test_a_good_section_is_ok(cli_run, tmp_path):
    _, out = doctor(cli_run, tmp_path, 'max_bytes = 1000\ntypes = ["image/*"]\ndir = "files"')
    assert "attachments: up to 1000 bytes, 1 type(s)" in out
    assert not (tmp_path / "files").exists()  # the check leaves nothing behind


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ("max_bytes = 0", "attachments.max_bytes: expected a number >= 1, found 0"),
        ('max_bytes = "big"', "attachments.max_bytes: expected an integer"),
        ('types = ["png"]', "attachments.types[0]: expected a media type like 'image/png'"),
        ("colour = 1", "attachments.colour: unknown key"),
    ],
)
def test_what_the_shape_tells_is_refused_at_load_naming_the_key(
    cli_run, tmp_path, section, message
):
    code, out = doctor(cli_run, tmp_path, section)
    assert code != 0
    assert message in out
