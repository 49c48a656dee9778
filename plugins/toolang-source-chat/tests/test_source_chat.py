"""toolang-source-chat, alone: the source, its settings and `toolang chat`."""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time

import pytest
from chat_helpers import AGENT, listed, scripted_chat

import toolang_source_chat as plugin
from toolang_core import NewTurnRequest

ECHO = '[runtime]\nexecutor = "echo"\n'
ENV = {"TOOLANG_LOAD_PLUGINS": "source-chat"}


def test_registers_the_chat_source_and_its_command(toolang_host, toolang_register):
    record = toolang_register(plugin, "source-chat")
    assert set(record.hooks) == {
        "toolang_register_commands",
        "toolang_register_settings",
        "toolang_register_turn_sources",
    }
    assert "chat" in toolang_host.components.of_kind("turn source")


def test_chat_source_has_no_background_work(toolang_runtime):
    runtime = toolang_runtime(ECHO, plugins={"source-chat": plugin})
    source = runtime.turn_sources(["chat"])["chat"]
    assert asyncio.run(source.run(runtime.open_inbox(), asyncio.Event())) is None


def test_chat_answers_without_a_running_runtime(toolang_cli, toolang_home):
    toolang_home.write_config(ECHO)
    result = toolang_cli("chat", "hello there", env=ENV)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "hello there\n"  # the echo executor answers with the input
    turns = json.loads(toolang_cli("turns", "list", "--json", env=ENV).stdout)
    (turn,) = turns
    assert (turn["thread_id"], turn["channel"], turn["source"]) == ("cli:default", "cli", "chat")


def test_threads_keep_the_conversation(toolang_cli, toolang_home):
    toolang_home.write_config(ECHO)
    for text in ("one", "two"):
        assert toolang_cli("chat", "--thread", "work", text, env=ENV).returncode == 0
    shown = toolang_cli("threads", "show", "cli:work", env=ENV)
    assert shown.stdout.count("[completed]") == 2


def test_a_thread_is_its_first_owners_and_another_owner_is_refused(toolang_cli, toolang_home):
    toolang_home.write_config(ECHO)
    mine = toolang_cli("chat", "--owner", "ada", "--thread", "work", "one", env=ENV)
    assert mine.returncode == 0, mine.stderr
    for env in (ENV, {**ENV, "TOOLANG_OWNER": "bob"}):
        refused = toolang_cli("chat", "--thread", "work", "two", env=env)
        assert refused.returncode == 5
        assert "thread 'cli:work' belongs to another owner" in refused.stderr
        assert "Traceback" not in refused.stderr
    again = toolang_cli("chat", "--thread", "work", "three", env={**ENV, "TOOLANG_OWNER": "ada"})
    assert (again.returncode, again.stdout) == (0, "three\n")


def test_no_wait_prints_the_request_id(toolang_cli, toolang_home):
    toolang_home.write_config(ECHO)
    result = toolang_cli("chat", "--no-wait", "later", env=ENV)
    assert result.returncode == 0
    turn_id = result.stdout.strip()
    shown = json.loads(toolang_cli("turns", "show", turn_id, "--json", env=ENV).stdout)
    assert shown["turn"]["status"] == "queued"


def test_interactive_session_on_one_thread(toolang_cli, toolang_home):
    toolang_home.write_config(ECHO)
    result = toolang_cli("chat", "-i", "--thread", "talk", env=ENV, input="first\nsecond\n")
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("first") == 1
    assert "second" in result.stdout
    assert "chatting on cli:talk" in result.stderr


def test_a_missing_message_is_a_usage_error(toolang_cli, toolang_home):
    toolang_home.write_config(ECHO)
    toolang_home.write_config("[plugins.source-chat]\nwait_seconds = 0.5\n")
    missing = toolang_cli("chat", env=ENV)
    assert missing.returncode == 2
    assert "give a MESSAGE" in missing.stderr


def test_settings_are_validated(toolang_cli, toolang_home):
    toolang_home.write_config(ECHO + '[plugins.source-chat]\nwait_seconds = "soon"\n')
    result = toolang_cli("chat", "x", env=ENV)
    assert result.returncode == 2
    assert "plugins.source-chat.wait_seconds: expected a number" in result.stderr


# -- approvals while the chat waits ------------------------------------------------------

GATE = """
from pathlib import Path

from toolang_core import Tool, hookimpl
from toolang_core.testing.approvals import ask_a_person


def write(path, text, **_):
    Path(path).write_text(text)
    return "written"


@hookimpl
def toolang_register_tools(register):
    register(Tool(name="fs_write", description="Write a file.", parameters={"type": "object"},
                  function=write, blocking=False))


@hookimpl
def toolang_approve_tool_call(call, ctx):
    return ask_a_person(call, ctx)
"""
SECRET_WRITE = {"path": "out.txt", "text": "hello", "api_key": "k-123"}


@pytest.fixture
def gated(toolang_distribution, toolang_home, tmp_path):
    """A gate that asks about every call, an fs_write tool and the script-file model;
    returns the environment for `toolang chat` in a subprocess."""
    return scripted_chat(
        toolang_distribution,
        toolang_home,
        tmp_path,
        name="toolang-test-chat-gate",
        first_call={"id": "c1", "name": "fs_write", "params": SECRET_WRITE},
        plugins=["test-gate"],
        entry_points={"test-gate": "tl_chat_gate"},
        modules={"tl_chat_gate": GATE},
    )


def approvals(toolang_home):
    from toolang_core import ApprovalBook

    return listed(toolang_home, ApprovalBook)


def test_interactive_chat_asks_and_yes_runs_the_tool(toolang_cli, toolang_home, gated):
    result = toolang_cli("chat", "-i", env=gated, input="write it\ny\n")
    assert result.returncode == 0, result.stderr
    assert "all done" in result.stdout
    assert "approve? [y]es / [n]o / [a]lways" in result.stdout
    assert "wants to run fs_write" in result.stderr
    assert '"api_key":"********"' in result.stderr
    assert "k-123" not in result.stderr + result.stdout
    assert (toolang_home.path / "out.txt").read_text() == "hello"
    (approval,) = approvals(toolang_home)
    assert (approval.status, approval.decided_by) == ("approved", f"cli:{getpass.getuser()}")


def test_interactive_chat_no_denies_the_tool(toolang_cli, toolang_home, gated):
    result = toolang_cli("chat", "-i", env=gated, input="write it\nn\n")
    assert result.returncode == 0, result.stderr
    assert "denied" in result.stderr
    assert not (toolang_home.path / "out.txt").exists()
    assert [a.status for a in approvals(toolang_home)] == ["denied"]


def test_interactive_chat_always_grants_the_tool_on_the_thread(toolang_cli, toolang_home, gated):
    from toolang_core import ApprovalBook, Runtime, load_config

    result = toolang_cli("chat", "-i", "--thread", "work", env=gated, input="write it\na\n")
    assert result.returncode == 0, result.stderr
    assert "fs_write is granted on cli:work" in result.stderr
    store = Runtime.with_plugins(load_config(toolang_home.config_path, env={})).open_store()
    try:
        assert ApprovalBook(store).granted("cli:work", "fs_write")
    finally:
        store.close()


def test_interactive_chat_asks_again_until_the_answer_is_understood(
    toolang_cli, toolang_home, gated
):
    result = toolang_cli("chat", "-i", env=gated, input="write it\nperhaps\ny\n")
    assert result.returncode == 0, result.stderr
    assert "answer y (run it), n (refuse it) or a" in result.stderr
    assert result.stdout.count("approve? [y]es / [n]o / [a]lways") == 2
    assert (toolang_home.path / "out.txt").exists()


def test_chat_says_the_turn_awaits_approval_and_how_to_decide(toolang_home, gated):
    from toolang_core import ApprovalBook, Runtime, load_config

    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLANG_")}
    env.update(gated)
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolang_core", "chat", "write it"],
        cwd=toolang_home.path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    said: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [said.put(line) for line in proc.stderr], daemon=True).start()
    store = Runtime.with_plugins(load_config(toolang_home.config_path, env={})).open_store()
    try:
        deadline = time.monotonic() + 60
        line = ""
        while "toolang approvals approve" not in line:
            line = said.get(timeout=max(0.1, deadline - time.monotonic()))
        (approval,) = ApprovalBook(store).list("pending")
        assert line.split()[-1].rstrip(")") == approval.id  # "(or: toolang approvals deny ID)"
        ApprovalBook(store).decide(approval.id, approved=True, by="someone else")
        out = proc.stdout.read()
        assert proc.wait(timeout=60) == 0
    finally:
        store.close()
        if proc.poll() is None:
            proc.kill()
    assert out == "all done\n"
    assert f"toolang approvals approve {approval.id}" in line


# -- `chat -i` on a real terminal (a pseudo-terminal: Ctrl-C is the tty's SIGINT) ------


class Terminal:
    """`toolang chat -i` on a pseudo-terminal it has as its controlling terminal."""

    def __init__(self, args, *, cwd, env):
        full = {k: v for k, v in os.environ.items() if not k.startswith("TOOLANG_")}
        full.update(env)
        self.pid, self.fd = os.forkpty()
        if self.pid == 0:  # the child: become toolang at once
            try:
                os.chdir(cwd)
                os.execve(sys.executable, [sys.executable, "-m", "toolang_core", *args], full)
            finally:
                os._exit(127)
        self.seen = b""

    def expect(self, text, timeout=60):
        """Read until ``text`` appears after what earlier expects consumed."""
        import select

        deadline = time.monotonic() + timeout
        while text.encode() not in self.seen:
            left = deadline - time.monotonic()
            assert left > 0, f"no {text!r} on the terminal; it shows: {self.seen[-800:]!r}"
            ready, _, _ = select.select([self.fd], [], [], left)
            if ready:
                try:
                    chunk = os.read(self.fd, 4096)
                except OSError:  # the child closed the terminal
                    chunk = b""
                assert chunk, f"terminal closed before {text!r}: {self.seen[-800:]!r}"
                self.seen += chunk
        self.seen = self.seen[self.seen.index(text.encode()) + len(text) :]

    def type(self, keys):
        os.write(self.fd, keys.encode())

    def exit_code(self, timeout=30):
        import select

        deadline = time.monotonic() + timeout
        while True:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                return os.waitstatus_to_exitcode(status)
            assert time.monotonic() < deadline, f"still running: {self.seen[-800:]!r}"
            ready, _, _ = select.select([self.fd], [], [], 0.1)
            if ready:  # keep draining, so the child never blocks writing
                with contextlib.suppress(OSError):
                    self.seen += os.read(self.fd, 4096)

    def close(self):
        with contextlib.suppress(ChildProcessError, ProcessLookupError):
            if os.waitpid(self.pid, os.WNOHANG) == (0, 0):
                os.kill(self.pid, 9)
                os.waitpid(self.pid, 0)
        os.close(self.fd)


def test_one_ctrl_c_at_the_prompt_leaves_with_exit_130(toolang_home):
    toolang_home.write_config(ECHO)
    terminal = Terminal(["chat", "-i"], cwd=toolang_home.path, env=ENV)
    try:
        terminal.expect("you> ")
        terminal.type("hello\n")
        terminal.expect("hello")  # the echo executor's answer
        terminal.expect("you> ")
        terminal.type("\x03")
        assert terminal.exit_code() == 130
    finally:
        terminal.close()


def test_ctrl_c_at_the_approval_question_returns_to_the_prompt(toolang_home, gated):
    """With no runtime serving the store, nothing else would ever finish the turn: Ctrl-C
    cancels it (and its approval request expires), so the session's next message on
    the thread is not held behind it."""
    terminal = Terminal(["chat", "-i"], cwd=toolang_home.path, env=gated)
    try:
        terminal.expect("you> ")
        terminal.type("write it\n")
        terminal.expect("approve? [y]es / [n]o / [a]lways: ")
        terminal.type("\x03")
        terminal.expect("interrupted; request ")
        terminal.expect("canceled (no runtime serves the store")
        terminal.expect("you> ")
        terminal.type("\x04")  # Ctrl-D once: the session ends
        assert terminal.exit_code() == 0
    finally:
        terminal.close()
    (approval,) = approvals(toolang_home)
    assert approval.status == "expired"  # its turn was canceled: nothing left to decide
    (turn,) = thread_turns(toolang_home, "cli:default")
    assert turn.status.value == "canceled"
    assert not (toolang_home.path / "out.txt").exists()


# -- double-texting: a second message on a busy thread ---------------------------------


def _as_a_foreground_job() -> None:
    # Ctrl-C reaches a terminal's foreground job: SIGINT at its default, whatever this
    # test run inherited — started in the background (`.ci/run &`), a shell ignores
    # SIGINT for it, an ignored SIGINT stays ignored across exec and Python then installs
    # no handler: the chat would never see the test's Ctrl-C.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start_chat(home, env, *args):
    full = {k: v for k, v in os.environ.items() if not k.startswith("TOOLANG_")}
    full.update(env)
    return subprocess.Popen(
        [sys.executable, "-m", "toolang_core", "chat", *args],
        cwd=home.path,
        env=full,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_as_a_foreground_job,  # noqa: PLW1509 (signal.signal only)
    )


def poll(condition, timeout=60):
    deadline = time.monotonic() + timeout
    while not (found := condition()):
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)
    return found


def open_store(home):
    from toolang_core import Runtime, load_config

    return Runtime.with_plugins(load_config(home.config_path, env={})).open_store()


def thread_turns(home, thread):
    from toolang_core import TurnFilter

    store = open_store(home)
    try:
        return store.list_turns(TurnFilter(thread_id=thread))
    finally:
        store.close()


def test_under_steer_the_second_chat_shows_the_answer_of_the_turn_it_was_steered_into(
    toolang_home, gated
):
    toolang_home.write_config(AGENT + '[scheduler.groups.chat]\nstrategy = "steer"\n')
    first = start_chat(toolang_home, gated, "write it", "--thread", "s")
    second = None
    try:
        # The first turn parks awaiting approval: the thread is busy.
        poll(
            lambda: any(
                t.status.value == "awaiting_approval" for t in thread_turns(toolang_home, "cli:s")
            )
        )
        second = start_chat(toolang_home, gated, "also this", "--thread", "s")
        poll(lambda: len(thread_turns(toolang_home, "cli:s")) == 2)
        # The steered message reaches the model at its next call; this script's model
        # then asks for its first call again — a new call (the id it reuses is
        # renamed), approved on its own.
        approve_pending(toolang_home)
        poll(lambda: pending_approvals(toolang_home))
        approve_pending(toolang_home)
        out1, err1 = first.communicate(timeout=60)
        out2, err2 = second.communicate(timeout=60)
    finally:
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                proc.kill()
    older, newer = sorted(thread_turns(toolang_home, "cli:s"), key=lambda t: t.seq)
    assert newer.status.value == "steered"
    assert (first.returncode, out1) == (0, "all done\n"), err1
    assert (second.returncode, out2) == (0, "all done\n"), err2
    assert f"delivered into the running turn {older.id}" in err2


def pending_approvals(toolang_home):
    from toolang_core import ApprovalBook

    store = open_store(toolang_home)
    try:
        return ApprovalBook(store).list("pending")
    finally:
        store.close()


def approve_pending(toolang_home):
    from toolang_core import ApprovalBook

    store = open_store(toolang_home)
    try:
        (approval,) = ApprovalBook(store).list("pending")
        ApprovalBook(store).decide(approval.id, approved=True, by="tester")
    finally:
        store.close()


def test_under_coalesce_a_sender_whose_message_was_replaced_is_told_so(toolang_home):
    toolang_home.write_config(ECHO + '[scheduler.groups.chat]\nstrategy = "coalesce"\n')
    holder = open_store(toolang_home)
    holder.acquire("someone-else")  # "a runtime" holds the store: the chats only watch
    first = second = None
    try:
        first = start_chat(toolang_home, ENV, "first", "--thread", "c")
        poll(lambda: thread_turns(toolang_home, "cli:c"))
        second = start_chat(toolang_home, ENV, "second", "--thread", "c")
        poll(lambda: thread_turns(toolang_home, "cli:c")[0].input == "second")
        holder.close()  # let go: the waiting chats serve the one request themselves
        out1, err1 = first.communicate(timeout=60)
        out2, err2 = second.communicate(timeout=60)
    finally:
        holder.close()
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                proc.kill()
    (turn,) = thread_turns(toolang_home, "cli:c")
    assert (turn.status.value, turn.output) == ("completed", "second")
    assert (second.returncode, out2) == (0, "second\n"), err2
    assert first.returncode == 5, err1
    assert out1 == ""  # never someone else's answer
    assert "your message was replaced by a newer one on cli:c" in err1


def test_chat_prints_the_answer_as_it_streams(toolang_distribution, toolang_home, tmp_path):
    """Run here (no runtime serves the store), the turn streams to the terminal: the
    first words are out while the model is still producing the rest."""
    toolang_distribution(
        "toolang-test-chat-stream",
        entry_points={"toolang": {"scripted": "toolang_core.testing.script_file_plugin"}},
    )
    script = tmp_path / "stream.json"
    # Longer than the redaction's hold (64 characters): masked text comes a few words
    # behind the model, so a shorter answer would arrive whole at the end.
    answer = " ".join(f"word{i}" for i in range(24))
    script.write_text(json.dumps([{"text": answer, "word_delay": 0.15}]))
    toolang_home.write_config(AGENT)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLANG_")}
    env.update(
        TOOLANG_LOAD_PLUGINS="source-chat,scripted",
        TOOLANG_SCRIPT=str(script),
        PYTHONPATH=str(toolang_distribution.root),
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolang_core", "chat", "go"],
        cwd=toolang_home.path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None
    first = os.read(proc.stdout.fileno(), 1024).decode()  # blocks until the first words
    still_running = proc.poll() is None
    rest, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, stderr
    assert first and answer.startswith(first) and first != answer
    assert still_running  # the rest of the answer was still being produced
    assert first + rest.decode() == answer + "\n"


def test_chat_turns_are_admitted_first_by_default(toolang_runtime):
    # A person waits on a chat turn: its group's defaults, declared at registration, put
    # it before invoke (30), tasks (20) and every group without defaults of its own.
    runtime = toolang_runtime(ECHO, plugins={"source-chat": plugin})
    result = runtime.open_inbox().submit(
        NewTurnRequest(source="chat", thread_id="chat:1", input="hi")
    )
    assert runtime.open_store().get(result.id).priority == 40
    assert runtime.policy.group("chat").strategy == "enqueue"


def test_a_chats_own_spend_limits_go_with_its_request(toolang_cli, toolang_home):
    toolang_home.write_config(ECHO)
    sent = toolang_cli(
        "chat", "--no-wait", "--max-tokens", "500", "--max-model-calls", "3", "hi", env=ENV
    )
    assert sent.returncode == 0, sent.stderr
    (turn,) = json.loads(toolang_cli("turns", "list", "--json", env=ENV).stdout)
    assert turn["meta"]["limits"] == {"max_tokens_per_turn": 500, "max_model_calls": 3}
    refused = toolang_cli("chat", "--max-tokens", "0", "hi", env=ENV)
    assert refused.returncode == 2
    assert "'--max-tokens': 0 is not in the range x>=1" in refused.stderr


# Runs `toolang chat` in this interpreter, then writes which modules it imported.
ONE_SHOT_PROBE = """
import sys
from toolang_core.cli.main import main
sys.argv = ["toolang", "chat", "hello there"]
try:
    main()
except SystemExit as stop:
    assert not stop.code, stop.code
with open({out!r}, "w") as out:
    out.write("\\n".join(sorted(sys.modules)))
"""


def test_a_one_shot_chat_loads_no_date_parser(toolang_home, tmp_path):
    """sqlite-utils imports dateutil's parser (and its time zones) for recipes toolang
    never calls: the largest single import of a one-shot chat, deferred to first use."""
    toolang_home.write_config(ECHO)
    listing = tmp_path / "modules.txt"
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLANG_")}
    env.update(ENV, HOME=str(toolang_home.path))
    done = subprocess.run(
        [sys.executable, "-c", ONE_SHOT_PROBE.format(out=str(listing))],
        cwd=toolang_home.path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "hello there\n"
    modules = set(listing.read_text().split())
    assert "sqlite_utils" in modules  # the store was opened: the turn is stored
    assert not {"dateutil.parser._parser", "dateutil.tz"} & modules


def test_a_deferred_date_parser_still_parses():
    from sqlite_utils.recipes import parsedate

    assert parsedate("2024-01-02") == "2024-01-02"


OPENS_PROBE = """
import sys
import toolang_core.runtime.runtime as runtime_module
from toolang_core.cli.main import main

opens = []
real = runtime_module.open_store

def counted(*args, **kwargs):
    opens.append(kwargs.get("read_only", False))
    return real(*args, **kwargs)

runtime_module.open_store = counted
sys.argv = ["toolang", "chat", "hello there"]
try:
    main()
except SystemExit as stop:
    assert not stop.code, stop.code
with open({out!r}, "w") as out:
    out.write(str(len(opens)))
"""


def test_a_one_shot_chat_opens_the_store_for_its_request_once(toolang_home, tmp_path):
    """The submission and the wait share one connection; the one-shot runtime serving
    the turn opens its own (it takes the store for its run): two opens, not three —
    each open checks the store's schema and its approval key again."""
    toolang_home.write_config(ECHO)
    count = tmp_path / "opens.txt"
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLANG_")}
    env.update(ENV, HOME=str(toolang_home.path))
    done = subprocess.run(
        [sys.executable, "-c", OPENS_PROBE.format(out=str(count))],
        cwd=toolang_home.path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "hello there\n"
    assert count.read_text() == "2"
