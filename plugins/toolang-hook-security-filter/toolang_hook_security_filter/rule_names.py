"""The default rules' names, apart from the rules themselves: the settings check
``disable_rules`` against them without importing (and building) every rule."""

from __future__ import annotations

from typing import Literal

RuleName = Literal[
    "recursive-delete-of-root-or-home",
    "no-preserve-root",
    "find-delete-from-root-or-home",
    "windows-recursive-delete",
    "delete-tool-on-root-or-home",
    "write-tool-on-system-file",
    "disk-format",
    "raw-device-write",
    "fork-bomb",
    "boot-tampering",
    "kill-everything",
    "crontab-wipe",
    "backup-deletion",
    "drop-database",
    "download-piped-to-interpreter",
    "download-then-execute",
    "decoded-payload-executed",
    "reverse-shell",
    "credential-exfiltration",
    "cloud-metadata-credentials",
    "read-secret-file",
    "secret-file-path",
    "system-permissions",
    "system-account-tampering",
    "ssh-authorized-keys-write",
    "defences-off",
    "self-approval",
    "recursive-delete-of-working-directory",
    "inline-interpreter",
    "sudo",
    "chmod-world-writable",
    "destructive-sql",
    "cloud-mass-delete",
    "force-push",
]
"""Every default rule's name (a test keeps this list and the tables below in step)."""
