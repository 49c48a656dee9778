"""toolang-tools-navigator with a real Chromium: a scripted agent works a small site
served on 127.0.0.1 through the whole tool chain of a served runtime (one browser for
the module), BrowserRecovery brings it through a crashed renderer and a re-rendered
element, and the allow-list refuses every way out."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from navigator_site import OUTSIDE, browser_processes, served_runtime, serving_site

import toolang_tools_navigator as plugin
from toolang_core.testing.models import tool_call
from toolang_core.testing.runtimes import tool_results

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def site():
    with serving_site() as base:
        yield base


@pytest.fixture(scope="module")
def navigator(tmp_path_factory):
    with served_runtime(tmp_path_factory.mktemp("navigator"), plugin) as served:
        yield served


def ref_of(observed, **like):
    """The reference of the one observed element with the given fields."""
    (found,) = [e["ref"] for e in observed["output"]["elements"] if like.items() <= e.items()]
    return found


def steps_of(runtime, turn_id):
    store = runtime.open_store()
    try:
        return [s.data for s in store.steps(turn_id) if "result" in s.data]
    finally:
        store.close()


@pytest.mark.slow  # kills the browser's renderer processes
def test_an_agent_fills_and_submits_a_form_and_survives_a_crash_and_a_redrawn_element(
    navigator, site
):

    async def crash_the_renderer():
        """Kill every renderer of the browser (real processes, by their host ids: the
        browser's own are its sandbox's)."""
        renderers = [pid for pid, argv in browser_processes() if "--type=renderer" in argv]
        assert renderers
        for pid in renderers:
            os.kill(pid, signal.SIGKILL)

    def agent():
        yield tool_call("browser_open", {"url": f"{site}/form"})
        seen = yield tool_call("browser_observe", {})
        name, note = ref_of(seen, field="name"), ref_of(seen, field="note")
        item, send = ref_of(seen, field="item"), ref_of(seen, tag="button")
        yield tool_call("browser_type", {"ref": name, "text": "Ada"})
        yield tool_call("browser_type", {"ref": note, "text": "two, please"})
        yield tool_call("browser_click", {"ref": send})
        yield crash_the_renderer
        yield tool_call("browser_extract", {})
        yield tool_call("browser_screenshot", {"name": "thanks"})
        # A list whose button is drawn anew on every keystroke: the old reference dies.
        yield tool_call("browser_open", {"url": f"{site}/rerender"})
        seen = yield tool_call("browser_observe", {})
        filter_, details = ref_of(seen, field="filter"), ref_of(seen, name="Details")
        yield tool_call("browser_type", {"ref": filter_, "text": "x"})
        yield tool_call("browser_click", {"ref": details})
        yield tool_call("browser_click", {"ref": item})  # from a page long gone
        yield tool_call("browser_close", {})

    turn_id = navigator.turn(agent)
    (opened, observed, typed, _, clicked, extracted, shot, _, _, _, redrawn, stale, closed) = (
        tool_results(navigator.runtime, turn_id)
    )
    assert opened["ok"] and opened["output"]["title"] == "Order"
    assert {e["tag"] for e in observed["output"]["elements"]} == {
        "input", "select", "textarea", "button"
    }  # fmt: skip
    assert typed["ok"]
    assert clicked["output"]["url"].startswith(f"{site}/result?name=Ada")
    # The renderer died: BrowserRecovery reopened the page and the extract ran again.
    assert extracted["ok"], extracted
    content = extracted["output"]
    assert content["title"] == "Thanks" and content["headings"] == [
        {"level": 1, "text": "Thank you"}
    ]
    assert content["tables"] == [[["name", "Ada"], ["item", "tea"], ["note", "two, please"]]]
    assert content["recovery"]["action"].startswith("the page had crashed: reopened")
    assert "crashed" in content["recovery"]["failed"] and content["recovery"]["retry"] == "ok"
    path = shot["output"]["path"]
    assert path.endswith("/plugins/tools-navigator/screenshots/alice/thanks.png")
    data = Path(path).read_bytes()
    assert data[:8] == PNG and len(data) == shot["output"]["bytes"] > 1_000
    # The redrawn button: re-observed, found by what it is, clicked under its new reference.
    assert redrawn["ok"] and redrawn["output"]["url"] == f"{site}/result?name=details"
    assert redrawn["output"]["recovery"]["action"].startswith("re-observed the page:")
    # An element of a page long gone: recovered once, retried never more, error told.
    assert not stale["ok"] and "BrowserRecovery could not recover" in stale["error"]
    assert closed["output"] == {"closed": True}
    # The trace shows each recovery: the post-execute stage that changed the result.
    steps = steps_of(navigator.runtime, turn_id)
    recovered = [s for s in steps if "recovery" in (s["result"].get("output") or {})]
    assert [s["call"]["name"] for s in recovered] == [
        "browser_extract", "browser_click", "browser_click"
    ]  # fmt: skip
    for step in steps:
        by_navigator = [
            (c["stage"], c["verdict"]) for c in step["chain"] if c["plugin"] == "tools-navigator"
        ]
        assert by_navigator == ([("SecurityFilter", "modify")] if step in recovered else [])


def test_nothing_outside_the_allow_list_is_loaded(navigator, site):
    def agent():
        yield tool_call("browser_open", {"url": OUTSIDE})
        yield tool_call("browser_open", {"url": f"{site}/redirect"})
        yield tool_call("browser_open", {"url": f"{site}/"})
        seen = yield tool_call("browser_observe", {})
        yield tool_call("browser_click", {"ref": ref_of(seen, name="Elsewhere")})
        yield tool_call("browser_extract", {})
        yield tool_call("browser_open", {"url": "file:///etc/passwd"})
        yield tool_call("browser_screenshot", {"name": "../../escape"})

    turn_id = navigator.turn(agent, thread="cli:bob")
    direct, redirect, _, _, link, after, file_, escape = tool_results(navigator.runtime, turn_id)
    assert direct["error_type"] == "NavigationRefused"
    assert "host '203.0.113.9' is outside the navigator's allow-list" in direct["error"]
    for refused in (redirect, link):
        assert refused["error_type"] == "NavigationRefused", refused
        assert f"refused navigation to {OUTSIDE}" in refused["error"]
    assert "recovery" not in str(redirect) + str(link)  # a refusal is never retried
    assert after["output"]["url"] == f"{site}/"  # the page stayed where it was
    assert "file URLs are refused" in file_["error"]
    assert escape["error_type"] == "invalid_params"


def unseen(path: Path) -> bool:
    """Nothing of it shows: absent, an empty directory (a hidden directory is covered
    with an empty tmpfs) or an empty file (a hidden file with /dev/null)."""
    if path.is_dir():
        return not any(path.iterdir())
    return not path.exists() or path.stat().st_size == 0


def test_the_browser_runs_confined_in_the_sandbox(navigator, site):
    """Chromium runs inside bubblewrap: its own mount namespace, where the runtime's
    home, store and approval key are not, nor the system's secrets; its environment is
    not the runtime's; it shares the host's network (the allow-list is the routing's)."""

    def agent():
        yield tool_call("browser_open", {"url": f"{site}/form"})

    turn_id = navigator.turn(agent, thread="cli:carol")
    (opened,) = tool_results(navigator.runtime, turn_id)
    assert opened["ok"], opened
    processes = browser_processes()
    assert any("--type=renderer" in argv for _, argv in processes)
    config = navigator.runtime.config
    mine = {kind: os.readlink(f"/proc/self/ns/{kind}") for kind in ("mnt", "pid", "net")}
    shadow = Path("/etc/shadow")
    for pid, _ in processes:
        proc = Path(f"/proc/{pid}")
        assert os.readlink(proc / "ns/mnt") != mine["mnt"]
        assert os.readlink(proc / "ns/pid") != mine["pid"]
        assert os.readlink(proc / "ns/net") == mine["net"]  # the host's network, shared
        root = proc / "root"
        assert (root / "usr/bin/chromium").is_file()  # the system, read-only
        for hidden in (config.home, config.store_path, config.approval_key_path):
            assert Path(hidden).exists()
            assert unseen(root / str(hidden).lstrip("/")), hidden
        if shadow.exists() and shadow.stat().st_size:
            assert (root / "etc/shadow").stat().st_size == 0  # covered with /dev/null
        names = {line.split(b"=", 1)[0] for line in (proc / "environ").read_bytes().split(b"\0")}
        assert b"PYTEST_CURRENT_TEST" not in names  # not the runtime's environment
