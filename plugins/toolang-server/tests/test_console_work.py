"""The console as a person works in it, in a real browser (Debian's chromium driven by
Playwright) against a real ``toolang run``: a tool call seen through a reload, deciding
and answering inside the chat, choosing the agent and starting a task run there, who is
signed in and another owner's thread, a phone-width layout, a turn's waterfall, and
search, paging, raw JSON and resubmitting a turn."""

from __future__ import annotations

import json

from server_helpers import ANSWER_WAIT, TOKENS, wait_for
from test_console_browser import WAIT_MS, browser, console, open_ready, page, shots, sign_in

__all__ = ["browser", "console", "page", "shots"]  # the browser fixtures, shared with that module

PHONE = {"width": 375, "height": 740}


def send_in_chat(page, text: str, *, agent: str | None = None, task_run: bool = False) -> str:
    """Type ``text`` into the open chat and send it; the id of the turn it started."""
    if agent is not None:
        page.select_option("#chat-agent", agent)
    if task_run:
        page.check("#as-task-run")
    before = page.locator(".msg.agent[data-turn]").count()
    page.fill("#chat-form textarea", text)
    page.click("#chat-form button[type=submit]")
    bubble = page.locator(".msg.agent").nth(before)
    page.wait_for_function(
        "(n) => document.querySelectorAll('.msg.agent[data-turn]').length > n",
        arg=before,
        timeout=WAIT_MS,
    )
    return str(bubble.get_attribute("data-turn"))


def completed(client, turn_id: str) -> dict[str, object]:
    return wait_for(
        lambda: (t := client.get(f"/api/turns/{turn_id}").json())["status"] == "completed" and t,
        what=f"turn {turn_id} to complete",
    )


def test_a_reload_while_a_tool_runs_shows_it_running_then_its_result(console, page, shots):
    open_ready(page, f"{console.url}/chat/web:reload")
    turn_id = send_in_chat(page, '/tool gate_wait {"name": "gate-reload"}')
    with console.client() as client:
        wait_for(
            lambda: any(
                s["status"] == "intent" for s in client.get(f"/api/turns/{turn_id}/steps").json()
            ),
            what="the tool call running",
        )
        open_ready(page, f"{console.url}/chat/web:reload")  # a reload mid-tool
        note = page.locator(".msg.notice.tool")
        note.wait_for(timeout=WAIT_MS)
        assert note.text_content() == "running gate_wait …"
        shots(page, "chat-tool-running-after-reload")
        (console.home / "out" / "gate-reload").write_text("")  # the tool may finish now
        page.wait_for_selector(".msg.notice.tool[data-phase=finished]", timeout=WAIT_MS)
        assert note.text_content() == "ran gate_wait: ok"
        page.wait_for_selector(".msg.agent[data-status=completed]", timeout=WAIT_MS)
        assert "gate gate-reload opened" in str(completed(client, turn_id)["output"])
    shots(page, "chat-tool-finished-after-reload")


def test_approving_and_answering_inside_the_chat(console, page, shots):
    sign_in(page, console.new_sign_in_link())  # only a signed-in person decides
    chat = f"{console.url}/chat/web:inline"
    open_ready(page, chat)
    turn_id = send_in_chat(page, '/tool guarded_write {"name": "inline.txt", "text": "yes"}')
    approval = page.locator(".msg.notice.approval")
    approval.wait_for(timeout=WAIT_MS)
    assert "guarded_write" in approval.text_content()
    shots(page, "chat-approval-inline")
    approval.locator("button.approve").click()
    page.wait_for_selector(f'.msg.agent[data-turn="{turn_id}"][data-status]', timeout=WAIT_MS)
    assert page.url == chat  # decided without leaving the chat
    assert approval.locator(".decided").text_content() == "approved"
    assert (console.home / "out" / "inline.txt").read_text() == "yes"

    asked = {"question": "Which city?", "choices": ["Lisbon", "Porto"]}
    turn_id = send_in_chat(page, f"/tool ask_person {json.dumps(asked)}")
    question = page.locator(".msg.notice.question")
    question.wait_for(timeout=WAIT_MS)
    assert "Which city?" in question.text_content()
    question.locator("select").select_option("Porto")
    shots(page, "chat-question-inline")
    question.locator("button[type=submit]").click()
    page.wait_for_selector(f'.msg.agent[data-turn="{turn_id}"][data-status]', timeout=WAIT_MS)
    assert page.url == chat
    with console.client() as client:
        assert '"output": "Porto"' in str(completed(client, turn_id)["output"])
        (answered,) = client.get("/api/questions?status=answered").json()
        assert answered["answered_by"] == "console:operator"
    shots(page, "chat-question-answered")
    open_ready(page, f"{console.url}/approvals?q=guarded_write+approved")  # searched
    assert page.locator("#decided-approvals tr").count() == 2  # a header and the one
    open_ready(page, f"{console.url}/approvals?q=nothing-like-this")
    assert page.locator("#decided-approvals").count() == 0


def test_the_chat_chooses_the_agent_and_starts_a_task_run(console, page, shots):
    open_ready(page, f"{console.url}/chat/web:agents")
    options = page.locator("#chat-agent option").all_text_contents()
    assert "assistant" in options, options
    turn_id = send_in_chat(page, "who answers", agent="assistant")
    page.wait_for_selector(f'.msg.agent[data-turn="{turn_id}"][data-status]', timeout=WAIT_MS)
    with console.client() as client:
        assert completed(client, turn_id)["agent"] == "assistant"
        run_id = send_in_chat(page, "a task for later", task_run=True)
        page.wait_for_selector(
            f'.msg.agent[data-turn="{run_id}"][data-status=completed]', timeout=WAIT_MS
        )
        assert (
            page.locator(f'.msg.agent[data-turn="{run_id}"]')
            .text_content()
            .startswith("echo: a task for later")
        )
        run = client.get(f"/api/task-runs/{run_id}").json()
        assert (run["parent_thread_id"], run["agent_name"]) == ("web:agents", "assistant")
    assert page.locator(".msg.notice.run a").get_attribute("href") == f"/task-runs/{run_id}"
    shots(page, "chat-agent-and-task-run")
    open_ready(page, f"{console.url}/task-runs?q=task+for+later")
    assert page.locator("#runs a").all_text_contents() == [run_id[-8:]]
    open_ready(page, f"{console.url}/task-runs?q=not+a+task")
    assert "No task run matches" in page.locator("main").text_content()


def test_who_is_signed_in_signing_out_and_another_owners_thread(token_server, page, shots):
    with token_server.client(TOKENS["bob"]) as bob:
        bob.post("/api/turns", json={"input": "bob's", "thread_id": "web:bobs", "wait": 60})
    page.goto(f"{token_server.url}/login")
    page.fill("input[name=token]", TOKENS["alice"])
    page.click("button[type=submit]")
    page.wait_for_selector("#principal", timeout=WAIT_MS)
    assert page.locator("#principal").text_content() == "console:alice"
    response = page.goto(f"{token_server.url}/chat/web:bobs")
    assert response.status == 403
    assert page.locator("#not-yours").text_content() == "Not yours"
    assert "console:alice" in page.locator("main").text_content()
    assert "bob's" not in page.locator("main").text_content()
    assert page.locator("#principal").text_content() == "console:alice"  # still in the header
    shots(page, "not-yours")
    page.click("header button:has-text('Sign out')")
    page.wait_for_url(f"{token_server.url}/login", timeout=WAIT_MS)
    assert page.locator("#principal").count() == 0
    page.goto(f"{token_server.url}/chat")
    assert "/login?next=/chat" in page.url  # the session ended
    shots(page, "signed-out")


def test_the_console_fits_a_375_px_phone(console, browser, shots):
    with console.client() as client:
        for n in range(3):
            client.post(
                "/api/turns",
                json={
                    "input": f"a long message number {n} " + "word " * 40,
                    "thread_id": "web:a-rather-long-thread-name-for-a-phone-screen",
                    "wait": ANSWER_WAIT,
                },
            )
    context = browser.new_context(viewport=PHONE)
    try:
        page = context.new_page()
        for path in [
            "/",
            "/turns",
            "/chat",
            "/chat/web:a-rather-long-thread-name-for-a-phone-screen",
            "/approvals",
            "/task-runs",
            "/agents",
            "/plugins",
        ]:
            open_ready(page, f"{console.url}{path}")
            width = page.evaluate("() => document.documentElement.scrollWidth")
            assert width <= PHONE["width"], (path, width)
            header = page.locator("header").bounding_box()
            nav = page.locator("header nav").bounding_box()
            assert header and nav
            assert (
                nav["y"] >= header["y"]
                and nav["y"] + nav["height"] <= header["y"] + header["height"] + 0.5
            ), (path, header, nav)
            assert nav["x"] >= 0 and nav["x"] + nav["width"] <= PHONE["width"], (path, nav)
            for box in [t.bounding_box() for t in page.locator("main table").all()]:
                assert box and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], path
            shots(page, "phone" + path.replace("/", "-").replace(":", "-").rstrip("-"))
    finally:
        context.close()


def test_a_trace_page_draws_the_turns_waterfall(console, page, shots):
    with console.client() as client:
        turn = client.post(
            "/api/turns",
            json={"input": '/tool slow_wait {"seconds": 0.3}', "wait": ANSWER_WAIT},
        ).json()
    assert turn["status"] == "completed", turn
    open_ready(page, f"{console.url}/turns/{turn['id']}")
    rows = page.locator("#waterfall .wf-row")
    kinds = [rows.nth(i).get_attribute("data-kind") for i in range(rows.count())]
    assert kinds.count("model_call") == 2 and "tool_call" in kinds, kinds
    offsets = [float(rows.nth(i).get_attribute("data-offset-ms") or 0) for i in range(len(kinds))]
    assert offsets == sorted(offsets)
    tool = page.locator("#waterfall .wf-row[data-kind=tool_call]")
    assert float(tool.get_attribute("data-duration-ms") or 0) >= 300  # the tool's own wait
    assert "slow_wait" in tool.text_content()
    assert "execute: " in tool.locator(".wf-verdicts").text_content()  # the hook verdicts
    model = page.locator("#waterfall .wf-row[data-kind=model_call]").first
    assert "testmodel" in model.locator(".wf-model").text_content()
    assert model.locator(".wf-tokens").text_content() == "input 10 · output 2 tokens"
    assert "tokens input 20, output 4" in page.locator("#waterfall").text_content()
    bar = tool.locator(".wf-bar").bounding_box()
    track = tool.locator(".wf-track").bounding_box()
    assert bar and track and 0 < bar["width"] <= track["width"]
    shots(page, "trace-waterfall")


def answered_questions_are_searched_and_paged(client, page, url: str, shots) -> None:
    """26 questions whose turns were canceled (so they expired): page 1 of 2, page 2,
    a search for one, a search for none."""
    asked = [
        client.post(
            "/api/turns",
            json={
                "input": f'/tool ask_person {{"question": "beta-{n}?"}}',
                "thread_id": f"q:{n}",
            },
        ).json()["turn_id"]
        for n in range(26)
    ]
    wait_for(lambda: len(client.get("/api/questions").json()) == 26, what="26 open questions")
    for turn_id in asked:
        client.post(f"/api/turns/{turn_id}/cancel")
    wait_for(
        lambda: (
            {q["status"] for q in client.get("/api/questions?status=all").json()} == {"expired"}
        ),
        what="the 26 questions expired",
    )
    open_ready(page, f"{url}/questions")
    assert "page 1 of 2" in page.locator("#pager").text_content()
    assert page.locator("#answered-questions tr").count() == 26  # a header and 25
    page.click("#page-next")
    page.wait_for_url("**/questions?page=2", timeout=WAIT_MS)
    assert "page 2 of 2" in page.locator("#pager").text_content()
    assert page.locator("#answered-questions tr").count() == 2
    open_ready(page, f"{url}/questions?q=beta-12")
    rows = page.locator("#answered-questions tr td:first-child").all_text_contents()
    assert rows == ["beta-12?"], rows
    shots(page, "questions-searched")
    open_ready(page, f"{url}/questions?q=nothing-like-this")
    assert page.locator("#answered-questions").count() == 0
    assert "No answered question matches" in page.locator("main").text_content()


def test_search_paging_raw_json_and_resubmitting_a_turn(live_server, page, shots):
    """Turns, threads and answered questions are searched and paged; a turn's raw JSON;
    a canceled turn resubmitted."""
    server = live_server()
    with server.client() as client:
        for n in range(30):
            client.post("/api/turns", json={"input": f"item-alpha-{n}", "thread_id": f"web:t{n}"})
        wait_for(
            lambda: all(
                t["status"] == "completed" for t in client.get("/api/turns?limit=100").json()
            ),
            what="the 30 turns to complete",
        )
        open_ready(page, f"{server.url}/turns")
        assert "page 1 of 2" in page.locator("#pager").text_content()
        assert page.locator("table.turns tr").count() == 26  # a header and 25 turns
        page.click("#page-next")
        assert "page 2 of 2" in page.locator("#pager").text_content()
        assert page.locator("table.turns tr").count() == 6
        open_ready(page, f"{server.url}/turns?q=alpha-7")
        assert page.locator("table.turns td.clip:has-text('item-alpha')").all_text_contents() == [
            "item-alpha-7"
        ]
        open_ready(page, f"{server.url}/chat?q=t2")
        threads = page.locator("#threads a").all_text_contents()
        assert sorted(threads) == ["web:t2", *(f"web:t2{n}" for n in range(10))], threads
        shots(page, "threads-searched")

        answered_questions_are_searched_and_paged(client, page, server.url, shots)

        turn_id = client.post(
            "/api/turns", json={"input": '/tool gate_wait {"name": "retry-gate"}'}
        ).json()["turn_id"]
        client.post(f"/api/turns/{turn_id}/cancel")
        wait_for(
            lambda: client.get(f"/api/turns/{turn_id}").json()["status"] == "canceled",
            what="the turn canceled",
        )
        open_ready(page, f"{server.url}/turns/{turn_id}")
        page.click("details.raw summary")
        raw = json.loads(page.locator("details.raw pre").text_content())
        assert (raw["id"], raw["status"]) == (turn_id, "canceled")
        shots(page, "trace-raw-json")
        page.click("#retry-turn")
        page.wait_for_url(lambda url: turn_id not in url, timeout=WAIT_MS)
        retried = page.url.rsplit("/", 1)[1]
        (server.home / "out" / "retry-gate").write_text("")
        again = completed(client, retried)
        assert again["input"] == '/tool gate_wait {"name": "retry-gate"}'
        assert again["meta"]["retry_of"] == turn_id
        assert again["thread_id"] == client.get(f"/api/turns/{turn_id}").json()["thread_id"]
        open_ready(page, f"{server.url}/turns/{retried}")
        assert turn_id[-8:] in page.locator("main").text_content()
        shots(page, "trace-resubmitted")


def test_fork_from_here_opens_a_new_thread_with_the_edited_turn(console, page, shots):
    """A turn's trace page forks its thread at that turn (issue #39): the new thread's
    chat opens with the edited input answered; the original thread is untouched."""
    with console.client() as client:
        first = client.post("/api/turns", json={"input": "one", "thread_id": "web:forked"})
        completed(client, first.json()["turn_id"])
        second = client.post("/api/turns", json={"input": "two", "thread_id": "web:forked"})
        second_id = second.json()["turn_id"]
        completed(client, second_id)
        open_ready(page, f"{console.url}/turns/{second_id}")
        page.click("#fork-turn summary")
        page.fill("#fork-turn textarea", "two, edited")
        shots(page, "trace-fork-from-here")
        page.click("#fork-turn button[type=submit]")
        page.wait_for_url(lambda url: "/chat/fork" in url, timeout=WAIT_MS)
        thread = page.url.rsplit("/chat/", 1)[1].replace("%3A", ":")
        page.locator(".msg.agent").last.wait_for(timeout=WAIT_MS)
        forked = wait_for(
            lambda: [
                t
                for t in client.get(f"/api/turns?thread_id={thread}").json()
                if t["status"] == "completed"
            ],
            what="the forked turn to complete",
        )
        assert [t["input"] for t in forked] == ["two, edited"]
        original = client.get("/api/turns?thread_id=web:forked").json()
        assert sorted(t["input"] for t in original) == ["one", "two"]
        shots(page, "chat-forked")


def test_eval_runs_are_listed_and_a_run_shows_its_cases(
    live_server, toolang_distribution, page, shots
):
    """``toolang eval``'s stored runs in the console (issue #39): the list with the pass
    count, and a run's cases with each evaluator's verdict."""
    import os
    import subprocess
    import sys

    first = live_server()
    first.stop()  # `toolang eval` keeps its run in the store the server holds
    home = first.home
    (home / "cases.yaml").write_text(
        "cases:\n"
        "  - {id: greet, input: hi, evaluators: [{contains: 'echo: hi'}]}\n"
        "  - {id: wrong, input: bye, expected: hello}\n",
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLANG_")}
    env.update(
        PYTHONPATH=os.pathsep.join(
            filter(None, [str(toolang_distribution.root), env.get("PYTHONPATH")])
        ),
        TOOLANG_LOAD_PLUGINS="server,test-kit",
        TL_OUT_DIR=str(home / "out"),
    )
    done = subprocess.run(
        [sys.executable, "-m", "toolang_core", "eval", "cases.yaml"],
        check=False,
        cwd=home,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "1/2 passed" in done.stdout, done.stdout + done.stderr
    server = live_server()
    open_ready(page, f"{server.url}/evals")
    row = page.locator("#eval-runs tr[data-run]")
    assert row.count() == 1
    assert "1/2" in row.text_content()
    row.locator("a").click()
    page.wait_for_selector("#eval-cases", timeout=WAIT_MS)
    assert "1/2 passed" in page.locator("#eval-passed").text_content()
    greet = page.locator("#eval-cases tr[data-case=greet]")
    wrong = page.locator("#eval-cases tr[data-case=wrong]")
    assert "pass" in greet.text_content() and "contains" in greet.text_content()
    assert "FAIL" in wrong.text_content() and "exact" in wrong.text_content()
    shots(page, "eval-run")
