"""Bad input is refused at the door: one line naming the field and what was expected,
exit 2, and the store unchanged. And `toolang doctor` fails on set-ups that would
break every turn, each with its own problem line.

Runs the real CLI in subprocesses with the repository's plugins installed (the
integration env): chat, the chore source, the embedded agents, the demo and llm models.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from toolang_core import NewTurnRequest, Runtime, UsageError
from toolang_core.config import load_config
from toolang_core.testing.cli import assert_no_traceback, run_toolang

RUNTIME = """
[runtime]
poll_seconds = 0.05
"""
BASE = (
    RUNTIME
    + """
[models]
default = "demo"
"""
)


def store_digest(home: Path) -> str:
    """Every row of every table of the execution store, hashed."""
    conn = sqlite3.connect(f"file:{home / '.toolang' / 'toolang.db'}?mode=ro", uri=True)
    try:
        digest = hashlib.sha256()
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for table in sorted(tables):
            rows = conn.execute(f'SELECT * FROM "{table}"').fetchall()
            digest.update(repr(sorted(map(repr, rows))).encode())
        return digest.hexdigest()
    finally:
        conn.close()


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A home with one answered chat (so the store exists and has rows)."""
    path = tmp_path_factory.mktemp("door")
    (path / "toolang.toml").write_text(BASE)
    first = run_toolang("chat", "hello", cwd=path)
    assert first.returncode == 0, first.stderr
    return path


def run_raw(args: list[str | bytes], cwd: Path) -> subprocess.CompletedProcess[bytes]:
    """The CLI with raw (possibly undecodable) arguments."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLANG_")}
    return subprocess.run(
        [sys.executable, "-m", "toolang_core", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        timeout=60,
        check=False,
    )


LONG_THREAD = "t" * 10_000
CLI_CASES = [
    (
        ["submit", "x", "--thread", "a", "--not-before", "+inf"],
        "not-before inf: expected a finite time",
    ),
    (
        ["submit", "x", "--thread", "a", "--not-before", "nan"],
        "not-before nan: expected a finite time",
    ),
    (
        ["submit", "x", "--thread", "a", "--timeout", "-1"],
        "timeout -1.0: expected a finite number of seconds > 0",
    ),
    (
        ["submit", "x", "--thread", "a", "--timeout", "nan"],
        "timeout nan: expected a finite number of seconds > 0",
    ),
    (["submit", "x", "--thread", ""], "thread id: expected a non-empty string"),
    (["submit", "x", "--thread", "a\nb"], "thread id 'a\\nb': expected no control characters"),
    (["submit", "x", "--thread", LONG_THREAD], "expected at most 256 characters, found 10000"),
    (
        ["submit", "x", "--thread", "a", "--source", "nosuch"],
        "--source 'nosuch': expected one of chat",
    ),
    (
        ["submit", "x", "--thread", "a", "--parent", "0123nosuch"],
        "parent '0123nosuch': no turn request has this id",
    ),
    (
        ["submit", "x", "--thread", "a", "--parent", "../x"],
        "parent '../x': expected lowercase letters",
    ),
    (["submit", "x", "--thread", "a", "--id", "Bad Id"], "id 'Bad Id': expected lowercase letters"),
    (
        ["submit", "x", "--thread", "a", "--priority", str(2**70)],
        "priority 1180591620717411303424: expected an integer from -1000000 to 1000000",
    ),
    ([b"submit", b"bad \xff input", b"--thread", b"a"], "input: expected valid UTF-8 text"),
    ([b"chat", b"bad \xff input"], "input: expected valid UTF-8 text"),
    (["chat", "x", "--thread", "a\tb"], "thread id 'cli:a\\tb': expected no control characters"),
    (["invoke", "x", "--timeout", "-5"], "timeout -5.0: expected a finite number of seconds > 0"),
    (["invoke", "x", "--timeout", "nan"], "timeout nan: expected a finite number of seconds > 0"),
]


@pytest.mark.parametrize(
    ("args", "expected"), CLI_CASES, ids=[str(i) for i in range(len(CLI_CASES))]
)
def test_bad_command_line_input_is_refused_and_nothing_is_stored(home, args, expected):
    before = store_digest(home)
    result = run_raw(args, home)
    stderr = result.stderr.decode(errors="replace")
    assert "Traceback" not in stderr and "internal error" not in stderr, stderr
    assert result.returncode == 2, stderr
    (line,) = stderr.strip().splitlines()
    assert line.startswith("error: ") and expected in line, line
    assert store_digest(home) == before


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"input": "a\x00b"}, "input: expected text without NUL bytes"),
        ({"thread_id": "a\x00b"}, "thread id 'a\\x00b': expected no control characters"),
        ({"not_before": float("inf")}, "not-before inf"),
        ({"timeout_seconds": 0.0}, "timeout 0.0"),
        ({"priority": 2**63}, "priority 9223372036854775808"),
        ({"id": "x" * 200}, "expected lowercase letters"),
        # a program submitting directly: before, NaN failed in the store, unnamed
        ({"meta": {"rate": float("nan")}}, "meta: expected JSON values a store can keep"),
        ({"meta": {"tags": {"a"}}}, "meta: expected JSON values a store can keep"),
    ],
)
def test_the_inbox_refuses_what_the_store_cannot_honour(home, fields, expected):
    before = store_digest(home)
    runtime = Runtime.from_config(load_config(home / "toolang.toml"))
    inbox = runtime.open_inbox()
    try:
        request = NewTurnRequest(**{"source": "chat", "thread_id": "cli:x", **fields})
        with pytest.raises(UsageError) as caught:
            inbox.submit(request)
        assert expected in str(caught.value)
        assert caught.value.exit_code == 2
    finally:
        inbox.store.close()
    assert store_digest(home) == before


CONFIG_CASES = [
    (
        "[scheduler]\naging_seconds = nan\n",
        "scheduler.aging_seconds: expected a finite number, found a number (nan)",
    ),
    (
        "[scheduler]\naging_seconds = inf\n",
        "scheduler.aging_seconds: expected a finite number, found a number (inf)",
    ),
    (
        "[scheduler]\nmax_running = 1e23\n",
        "scheduler.max_running: expected an integer, found a number (1e+23)",
    ),
    (
        "[scheduler]\nmax_running = 100000000000000000000000\n",
        "scheduler.max_running: expected an integer that fits in 64 bits",
    ),
    (
        "[scheduler.groups.chat]\npriority = 9223372036854775808\n",
        "scheduler.groups.chat.priority: expected an integer that fits in 64 bits",
    ),
    (
        "[scheduler.groups.chat]\npriority = 9223372036854775807\n",
        "scheduler.groups.chat.priority: expected a number <= 1e+06",
    ),
    ('[models]\ndefault = "llm/../../etc/passwd"\n', "models.default: expected a model name"),
    (
        '[plugins.source-chore]\nchores = [{ key = "c", schedule = "every 0" }]\n',
        "chores[0] ('c'): schedule: cannot read interval 'every 0'",
    ),
    ('home = "/proc/no/such/home"\n', "cannot create the directory /proc/no/such/home"),
]


@pytest.mark.parametrize(
    ("config", "expected"), CONFIG_CASES, ids=[str(i) for i in range(len(CONFIG_CASES))]
)
def test_bad_configuration_is_refused_before_anything_is_stored(home, tmp_path, config, expected):
    (tmp_path / "toolang.toml").write_text(config + RUNTIME)
    before = store_digest(home)
    result = run_toolang("--config", str(tmp_path / "toolang.toml"), "chat", "hi", cwd=home)
    assert_no_traceback(result)
    assert result.returncode == 2, result.stderr
    assert expected in result.stderr
    assert not (tmp_path / ".toolang").exists()
    assert store_digest(home) == before


AGENT_MD = "---\nname: {name}\ndescription: d\n---\n{body}\n"
DOCTOR_CASES = {
    "unknown model provider": (
        '[models]\ndefault = "nosuch"\n',
        None,
        "no model provider 'nosuch'",
    ),
    "unknown llm model": (
        '[models]\ndefault = "llm/no-such-model"\n',
        None,
        "llm has no model 'no-such-model'",
    ),
    "cron": (
        '[plugins.source-chore]\nchores = [{ key = "c", schedule = "61 * * * *" }]\n',
        None,
        "cannot read schedule '61 * * * *'",
    ),
    "rrule": (
        '[plugins.source-chore]\nchores = [{ key = "c", schedule = "FREQ=SOMETIMES" }]\n',
        None,
        "cannot read RRULE 'FREQ=SOMETIMES'",
    ),
    "every 0": (
        '[plugins.source-chore]\nchores = [{ key = "c", schedule = "every 0 seconds" }]\n',
        None,
        "interval 'every 0 seconds' must be positive",
    ),
    "duplicate chore": (
        "[plugins.source-chore]\nchores = ["
        '{ key = "c", schedule = "every 5 seconds" }, '
        '{ key = "c", schedule = "every 9 seconds" }]\n',
        None,
        "key 'c' is declared twice",
    ),
    "default agent typo": (
        '[agents]\ndefault = "asistant"\n',
        None,
        "'asistant' is defined by no agent source (did you mean 'assistant'?",
    ),
    "home cannot be created": (
        'home = "/proc/no/such/home"\n',
        None,
        "home: /proc/no/such/home cannot be created",
    ),
    "huge AGENT.md": ("", ("big", "x" * (20 * 1024 * 1024)), "AGENT.md is 20,971,"),
    "bad agent model": ("", ("odd", None), "model: expected a model name"),
}


@pytest.mark.parametrize("case", list(DOCTOR_CASES))
def test_doctor_fails_on_a_set_up_that_breaks_every_turn(tmp_path, case):
    config, agent, expected = DOCTOR_CASES[case]
    (tmp_path / "toolang.toml").write_text(config + RUNTIME)
    if agent is not None:
        name, body = agent
        folder = tmp_path / "agents" / name
        folder.mkdir(parents=True)
        text = AGENT_MD.format(name=name, body=body or "Hi.")
        if body is None:
            text = text.replace("description: d", "description: d\nmodel: llm/../../etc/passwd")
        (folder / "AGENT.md").write_text(text)
    result = run_toolang("doctor", cwd=tmp_path, timeout=120)
    assert_no_traceback(result)
    assert result.returncode == 1, result.stdout + result.stderr
    failing = [line for line in result.stdout.splitlines() if line.startswith("FAIL")]
    assert failing, result.stdout
    assert expected in result.stdout, result.stdout


def test_doctor_passes_the_starter_configuration(tmp_path):
    assert run_toolang("init", cwd=tmp_path).returncode == 0
    result = run_toolang("doctor", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
