"""The web console in a real browser (Debian's chromium driven by Playwright) against a
real ``toolang run``. Without the browser these tests fail, saying what to install."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from server_helpers import ANSWER_WAIT, open_runtime_store, spawn_run, wait_for

CHROMIUM = os.environ.get("TOOLANG_CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-dev-shm-usage",
    "--no-first-run",
]
WAIT_MS = 60_000
"""How long a wait for something on a page may take at most (it ends when it is seen):
generous, as these tests share the machine with others in a combined run."""
FIVE_STAGES = ["turn_state", "prompt_trace", "memory_write", "events", "delivery"]


@pytest.fixture(scope="module")
def browser():
    if not (Path(CHROMIUM).is_file() or shutil.which(CHROMIUM)):
        pytest.fail(
            f"no chromium at {CHROMIUM}: install it (`apt-get install -y chromium`) or set "
            "TOOLANG_CHROMIUM to a Chromium executable; the console's browser tests need it"
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    yield context.new_page()
    context.close()


@pytest.fixture
def shots(tmp_path):
    """Where screenshots go: $TOOLANG_SCREENSHOT_DIR, else the test's tmp_path."""
    target = Path(os.environ.get("TOOLANG_SCREENSHOT_DIR") or tmp_path / "screenshots")
    target.mkdir(parents=True, exist_ok=True)

    def shoot(page, name: str) -> Path:
        path = target / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        assert path.stat().st_size > 1000
        return path

    return shoot


def open_ready(page, url: str) -> None:
    """Go to ``url`` and wait until its script has set the page up (buttons answer)."""
    page.goto(url)
    page.wait_for_selector("html[data-ready]", state="attached", timeout=WAIT_MS)


@pytest.fixture
def console(live_server):
    """A loopback server whose model streams a word every 80 ms."""
    return live_server(env={"TL_WORD_DELAY": "0.08"})


def sign_in(page, link: str) -> None:
    """Open a one-time sign-in link and wait for the console to show who is signed in."""
    page.goto(link)
    page.wait_for_selector("#principal", timeout=WAIT_MS)


def test_chat_page_shows_the_answer_streaming_in(console, page, shots):
    open_ready(page, f"{console.url}/chat/web:browser")
    # Longer than the redaction's hold (64 characters), so part of it shows before the end.
    message = (
        "please stream these words back to me one at a time, enough of them to "
        "outrun the short tail the redaction on the wire holds back"
    )
    final = f"echo: {message}"
    # Every text the answer bubble shows, recorded as the page changes: what was shown
    # part-way is known however late this test gets to look (a busy machine).
    page.evaluate(
        """() => { window.shown = [];
             new MutationObserver(() => {
               const b = [...document.querySelectorAll('.msg.agent')].pop();
               if (b) window.shown.push(b.textContent);
             }).observe(document.querySelector('#chat-log'),
                        {subtree: true, childList: true, characterData: true}); }"""
    )
    page.fill("#chat-form textarea", message)
    page.click("#chat-form button[type=submit]")
    bubble = page.locator(".msg.agent").last
    partial_js = "(f) => window.shown.find((t) => t.length > 0 && t.length < f.length)"
    page.wait_for_function(partial_js, arg=final, timeout=WAIT_MS)  # seen part-way
    shots(page, "chat-streaming")
    page.wait_for_selector(".msg.agent[data-status=completed]", timeout=WAIT_MS)
    partial = page.evaluate(partial_js, final)
    assert bubble.text_content() == final
    assert final.startswith(partial) and partial != final
    with console.client() as client:
        turn_id = bubble.get_attribute("data-turn")
        assert client.get(f"/api/turns/{turn_id}").json()["output"] == final
    page.reload()
    assert page.locator(".msg.agent").last.text_content().startswith(final)
    shots(page, "chat")


def test_a_tool_call_is_approved_with_the_button_and_the_turn_completes(console, page, shots):
    with console.client() as client:
        turn_id = client.post(
            "/api/turns",
            json={
                "input": '/tool guarded_write {"name": "ok.txt", "text": "approved"}',
                "thread_id": "web:approve",
            },
        ).json()["turn_id"]
        wait_for(lambda: client.get("/api/approvals?status=pending").json(), what="approval")
        sign_in(page, console.new_sign_in_link())  # only a signed-in person decides
        open_ready(page, f"{console.url}/approvals")
        row = page.locator("#pending-approvals tr[data-approval]")
        assert row.count() == 1
        assert "guarded_write" in row.text_content()
        shots(page, "approvals")
        # The page reloads itself every few seconds; a fresh load leaves the click a whole
        # interval, and once clicked it waits for the approval's own reload.
        open_ready(page, f"{console.url}/approvals")
        row.locator("button.approve").click()
        page.wait_for_selector("#pending-approvals", state="detached", timeout=WAIT_MS)
        approvals = client.get("/api/approvals").json()
        assert [a["status"] for a in approvals] == ["approved"], approvals
        turn = wait_for(
            lambda: (
                (t := client.get(f"/api/turns/{turn_id}").json())["status"] == "completed" and t
            ),
            what="the turn to complete",
        )
    assert "wrote 8 characters to ok.txt" in turn["output"]
    assert (console.home / "out" / "ok.txt").read_text() == "approved"
    shots(page, "approvals-decided")


def test_the_console_signs_in_once_with_the_printed_link_and_only_then_approves(
    console, browser, page, shots
):
    with console.client() as client:
        turn_id = client.post(
            "/api/turns",
            json={"input": '/tool guarded_write {"name": "in.txt", "text": "signed"}'},
        ).json()["turn_id"]
        (approval,) = wait_for(
            lambda: client.get("/api/approvals?status=pending").json(), what="approval"
        )
        # On this machine but not signed in: no buttons, and the API refuses the decision.
        open_ready(page, f"{console.url}/approvals")
        assert page.locator("#sign-in-to-decide").is_visible()
        assert page.locator("#pending-approvals button.approve").count() == 0
        shots(page, "approvals-signed-out")
        refused = client.post(f"/api/approvals/{approval['id']}/approve", json={"always": True})
        assert refused.status_code == 401, refused.text
        link = console.new_sign_in_link()  # as `toolang console` prints one
        sign_in(page, link)
        assert page.locator("#principal").text_content() == "console:operator"
        open_ready(page, f"{console.url}/approvals")
        page.locator("#pending-approvals button.approve").click()
        page.wait_for_selector("#pending-approvals", state="detached", timeout=WAIT_MS)
        (decided,) = client.get("/api/approvals").json()
        assert (decided["status"], decided["decided_by"]) == ("approved", "console:operator")
        wait_for(
            lambda: client.get(f"/api/turns/{turn_id}").json()["status"] == "completed",
            what="the turn to complete",
        )
    assert (console.home / "out" / "in.txt").read_text() == "signed"
    shots(page, "approvals-signed-in")
    # The link worked once: another browser opening it again is not signed in.
    other = browser.new_context()
    try:
        again = other.new_page()
        response = again.goto(link)
        assert response.status == 401
        assert "used already" in again.locator(".flash").text_content()
        assert again.locator("#principal").count() == 0
    finally:
        other.close()
    log = console.stop()
    assert "server.auth_failed" in log
    assert link.partition("token=")[2] not in log  # never printed where it is kept, nor logged


def test_a_trace_page_shows_the_five_stages_in_order(console, page, shots):
    with console.client() as client:
        turn = client.post("/api/turns", json={"input": "trace me", "wait": ANSWER_WAIT}).json()

        # The stages are recorded once every delivery hook has returned: a moment after
        # the server's own has answered the wait (until then 3-5 show as unknown).
        def recorded() -> bool:
            after = client.get(f"/api/turns/{turn['id']}/trace").json()["after"]
            return len([s for s in after if not s.get("unknown")]) == 5

        wait_for(recorded, what="the after-turn stages recorded")
    page.goto(f"{console.url}/turns/{turn['id']}")
    stages = page.locator("#after-stages tr[data-stage]")
    assert [stages.nth(i).get_attribute("data-stage") for i in range(stages.count())] == FIVE_STAGES
    assert page.locator("#timeline li").count() >= 2
    shots(page, "trace")


def test_cancelling_a_running_task_run_from_its_page(console, page, shots):
    run_id = spawn_run(console, "owner", '/tool slow_wait {"seconds": 120}')
    with console.client() as client:
        wait_for(
            lambda: client.get(f"/api/task-runs/{run_id}").json()["status"] == "running",
            what="the run to start",
        )
        sign_in(page, console.new_sign_in_link())  # cancelling needs a signed-in person
        open_ready(page, f"{console.url}/task-runs/{run_id}")
        assert page.locator("#run-status").text_content() == "running"
        shots(page, "task-run")
        open_ready(page, f"{console.url}/task-runs/{run_id}")  # see the approvals test
        page.click("#cancel-run")
        _runtime, store = open_runtime_store(console)
        try:
            wait_for(
                lambda: store.get(run_id).status.value == "canceled", what="canceled in the store"
            )
        finally:
            store.close()
        # The page reloads itself (after the click, then while the run winds down).
        page.wait_for_function(
            "() => { const e = document.querySelector('#run-status');"
            " return e !== null && e.textContent === 'canceled'; }",
            timeout=WAIT_MS,
        )
        shots(page, "task-run-canceled")
        page.goto(f"{console.url}/task-runs")
        assert run_id[-8:] in page.locator("table").text_content()
        shots(page, "task-runs")


def test_every_page_renders_and_is_captured(console, page, shots):
    with console.client() as client:
        client.post(
            "/api/turns",
            json={
                "input": "the parrot is called Polly",
                "wait": ANSWER_WAIT,
                "thread_id": "web:memory",
            },
        )
    for path, name, expect in [
        ("/", "status", "Thread groups"),
        ("/chat", "chat-index", "web:memory"),
        ("/turns", "turns", "the parrot"),
        ("/chores", "chores", "Chores"),
        ("/agents", "agents", "assistant"),
        ("/plugins", "plugins", "toolang_register_routes"),
        ("/memory?q=parrot", "memory", "Polly"),
    ]:
        response = page.goto(f"{console.url}{path}")
        assert response.status == 200, path
        assert expect in page.locator("main").text_content(), path
        shots(page, name)


def test_a_token_server_asks_for_the_token_then_lets_the_owner_in(token_server, page, shots):
    from server_helpers import TOKENS

    page.goto(f"{token_server.url}/approvals")
    assert page.url.endswith("/login?next=/approvals")
    page.fill("input[name=token]", "wrong-token-wrong-token")
    page.click("button[type=submit]")
    assert "not valid" in page.locator(".flash").text_content()
    shots(page, "login")
    page.fill("input[name=token]", TOKENS["alice"])
    page.click("button[type=submit]")
    page.wait_for_url(f"{token_server.url}/approvals")
    assert "Nothing waits for a decision" in page.locator("main").text_content()


def ask_person(client, params: dict[str, object]) -> tuple[str, dict[str, object]]:
    """Start a turn whose model calls ask_person with ``params``: its id and question."""
    import json

    turn_id = client.post(
        "/api/turns", json={"input": f"/tool ask_person {json.dumps(params)}"}
    ).json()["turn_id"]
    (question,) = wait_for(
        lambda: [q for q in client.get("/api/questions").json() if q["turn_id"] == turn_id],
        what="the question",
    )
    return turn_id, question


def submit_answer(page, url: str, question_id: str, fill) -> str | None:
    """Open the questions page, ``fill(form)``, submit it as a person does; the message
    the page shows when the answer is refused (None once the question is answered)."""
    open_ready(page, f"{url}/questions")
    form = page.locator(f'tr[data-question="{question_id}"] form')
    fill(form)
    form.locator("button[type=submit]").click()
    # Read in the page in one step: the page reloads itself after an answer (and every
    # few seconds), which takes a refusal's message with it.
    shown = page.wait_for_function(
        """(id) => { const flash = document.querySelector('.flash');
             if (flash && flash.textContent) return {refused: flash.textContent};
             const open = document.querySelector(`tr[data-question="${id}"]`);
             return document.readyState === 'complete' && open === null && {refused: null}; }""",
        arg=question_id,
        timeout=WAIT_MS,
    ).json_value()
    return shown["refused"]


def test_a_question_is_answered_from_the_console_form_and_the_turn_resumes(console, page, shots):
    with console.client() as client:
        turn_id, question = ask_person(
            client, {"question": "Which city?", "choices": ["Lisbon", "Porto"]}
        )
        open_ready(page, f"{console.url}/questions")
        assert page.locator("#sign-in-to-answer").is_visible()  # no form before signing in
        assert page.locator("form[data-answer]").count() == 0
        sign_in(page, console.new_sign_in_link())

        def tampered(form) -> None:
            # A choice the question does not offer (a stale or edited page): the server
            # is the judge, not the pick list.
            form.locator("select").evaluate(
                "(s) => { s.add(new Option('Rome', 'Rome')); s.value = 'Rome'; }"
            )

        refused = submit_answer(page, console.url, question["id"], tampered)
        assert refused is not None and "expected one of 'Lisbon', 'Porto'" in refused, refused
        shots(page, "question-refused")
        assert client.get(f"/api/questions/{question['id']}").json()["status"] == "open"

        def porto(form) -> None:
            form.locator("select").select_option("Porto")

        assert submit_answer(page, console.url, question["id"], porto) is None
        answered = client.get(f"/api/questions/{question['id']}").json()
        assert (answered["status"], answered["answer"], answered["answered_by"]) == (
            "answered",
            "Porto",
            "console:operator",
        )
        turn = wait_for(
            lambda: (
                (t := client.get(f"/api/turns/{turn_id}").json())["status"] == "completed" and t
            ),
            what="the turn to complete",
        )
        assert '"output": "Porto"' in turn["output"]  # the answer is the tool's result
        assert '"Porto"' in page.locator("main").text_content()  # listed as answered
        shots(page, "question-answered")


def test_a_schema_question_takes_json_typed_into_the_console_form(console, page, shots):
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    with console.client() as client:
        turn_id, question = ask_person(client, {"question": "How many?", "schema": schema})
        sign_in(page, console.new_sign_in_link())

        def typed(text: str):
            return lambda form: form.locator("textarea[name=answer]").fill(text)

        refused = submit_answer(page, console.url, question["id"], typed('{"n": "three"}'))
        assert refused is not None and "does not match the question's schema" in refused
        shots(page, "question-schema-refused")
        assert client.get(f"/api/questions/{question['id']}").json()["status"] == "open"
        assert submit_answer(page, console.url, question["id"], typed('{"n": 3}')) is None
        assert client.get(f"/api/questions/{question['id']}").json()["answer"] == {"n": 3}
        turn = wait_for(
            lambda: (
                (t := client.get(f"/api/turns/{turn_id}").json())["status"] == "completed" and t
            ),
            what="the turn to complete",
        )
        assert '"output": {"n": 3}' in turn["output"]
