"""The OS sandbox of every program a tool starts (Linux, bubblewrap).

:func:`~toolang_core.run_tool_process` is the one place programs are started; it asks
:func:`.policy.policy_for` what the program may see and reach, and
:func:`.launch.prepare` builds the sandbox around it: :mod:`.bwrap` (the command line),
:mod:`.proxy` and :mod:`.bridge` (the network, when allowed), :mod:`.cgroup` (the
process count of a runtime running as root), :mod:`.pool` (bubblewraps started ahead,
waiting for programs), :mod:`.members` (stopping it all),
:mod:`.support` (whether this machine can). :mod:`.rules` holds the values
``[tools]`` is made of. See docs/security.md for what each part stops and what it does
not.

Nothing is imported here: the configuration imports :mod:`.rules` on every start.
"""
