"""File writes judged by their path: account, sudo, boot and SSH access files."""

from __future__ import annotations

import pytest

from toolang_core import Block


@pytest.mark.parametrize(
    "params",
    [
        {"path": "/etc/passwd", "content": "root:x:0:0:root:/root:/bin/bash\n"},
        {"file": "/etc/shadow", "text": ""},
        {"target": "/etc/sudoers.d/90-agent", "data": "agent ALL=(ALL) ALL\n"},
        {"file_path": "/boot/grub/grub.cfg", "new_str": "menuentry {}"},
        {"path": "/root/.ssh/authorized_keys", "content": "ssh-ed25519 AAAA attacker"},
    ],
)
def test_a_file_write_to_an_account_boot_or_ssh_access_file_is_blocked(default_filter, params):
    verdict = default_filter.call(params, tool="fs_write")
    assert isinstance(verdict, Block)
    assert "rule write-tool-on-system-file," in verdict.reason


def test_a_file_write_nested_in_a_batch_is_judged_by_its_path(default_filter):
    params = {
        "files": [{"path": "README.md", "content": "hi"}, {"path": "/etc/group", "content": ""}]
    }
    verdict = default_filter.call(params, tool="fs_write_many")
    assert isinstance(verdict, Block)
    assert "parameter 'files[1].path'" in verdict.reason


@pytest.mark.parametrize(
    "params",
    [
        {"path": "/etc/hosts.bak", "content": "127.0.0.1 localhost\n"},
        {"path": "notes/passwd.md", "content": "how /etc/passwd is laid out"},
        {"path": "docs/boot.md", "content": "kernels live in /boot"},
    ],
)
def test_a_file_write_elsewhere_passes(default_filter, params):
    assert not isinstance(default_filter.call(params, tool="fs_write"), Block)


def test_a_path_without_content_is_not_a_file_write(default_filter):
    # fs_read(path="/etc/passwd") reads the account list: no content, no write.
    assert default_filter.call({"path": "/etc/passwd"}, tool="fs_read") is None
