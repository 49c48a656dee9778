"""The OS sandbox of every program a tool starts (Linux, bubblewrap).

:func:`~toolang_core.run_tool_process` is the one place programs are started; it asks
:func:`policy_for` what the program may see and reach, and :func:`.launch.prepare`
builds the sandbox around it. See docs/security.md for what each part stops and what
it does not.
"""

from toolang_core.sandbox.policy import (
    OPERATOR_SENDERS,
    OWNERS_DIR,
    ProcessLimits,
    SandboxError,
    SandboxPolicy,
    owner_dir_name,
    owner_key,
    policy_for,
    tool_workdir,
    workdir_root,
)
from toolang_core.sandbox.support import OFF_WARNING, SandboxSupport, sandbox_support

__all__ = [
    "OFF_WARNING",
    "OPERATOR_SENDERS",
    "OWNERS_DIR",
    "ProcessLimits",
    "SandboxError",
    "SandboxPolicy",
    "SandboxSupport",
    "owner_dir_name",
    "owner_key",
    "policy_for",
    "sandbox_support",
    "tool_workdir",
    "workdir_root",
]
