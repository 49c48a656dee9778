// toolang console: a little JavaScript for live updates over the server's SSE streams.
"use strict";

async function api(method, path, body) {
  const response = await fetch(path, {
    method, credentials: "same-origin",
    headers: body ? {"Content-Type": "application/json"} : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  const data = await response.json().catch(() => ({}));
  if (!response.ok) {
    const error = data.error || {};
    throw new Error(error.message || `${response.status} ${response.statusText}`);
  }
  return data;
}

function flash(message) {
  let box = document.querySelector(".flash");
  if (!box) {
    box = document.createElement("div");
    box.className = "flash";
    document.querySelector("main").prepend(box);
  }
  box.textContent = message;
}

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

// What a running turn waits for (approvals, questions), rendered by the server, in its
// place before the turn's answer; `until` polls again while it is empty (a question is
// asked a moment after its tool call starts).
async function showWaiting(turnId, bubble, until) {
  for (let tries = 0; tries < 60; tries++) {
    const response = await fetch(`/turns/${encodeURIComponent(turnId)}/waiting`,
                                 {credentials: "same-origin"});
    if (!response.ok) return;
    const holder = document.createElement("div");
    holder.innerHTML = await response.text();
    const fresh = holder.firstElementChild;
    const old = document.querySelector(`.waiting[data-waiting="${CSS.escape(turnId)}"]`);
    // Keep what a person is doing (a decided approval's note, a half-typed answer).
    if (old && old.contains(document.activeElement)) return;
    if (old) old.replaceWith(fresh); else bubble.before(fresh);
    if (!until || fresh.querySelector(until) || bubble.dataset.status) return;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

// A tool call's line in the chat: "running TOOL …" while it runs, then its result.
function toolNotice(turnId, bubble, data) {
  const key = `${turnId}:${data.seq}`;
  let note = document.querySelector(`.msg.notice[data-call="${CSS.escape(key)}"]`);
  if (!note) {
    note = element("div", "msg notice tool");
    note.dataset.call = key;
    bubble.before(note);
  }
  note.dataset.phase = data.phase || "finished";
  note.textContent = data.phase === "started"
    ? `running ${data.tool} …`
    : `ran ${data.tool}: ${data.ok ? "ok" : (data.error || "failed")}`;
}

// Watch one turn: text deltas of its latest model call fill `bubble`; `done` gets the
// finished event. The stream's last call's text equals the stored output.
function watchTurn(turnId, bubble, done) {
  const source = new EventSource(`/api/turns/${encodeURIComponent(turnId)}/events`);
  let call = null;
  source.addEventListener("text", (event) => {
    const data = JSON.parse(event.data);
    if (data.call !== call) { call = data.call; bubble.textContent = ""; }
    bubble.append(data.delta);
    bubble.classList.add("streaming");
    bubble.scrollIntoView({block: "end"});
  });
  source.addEventListener("approval", () => showWaiting(turnId, bubble, "[data-approval]"));
  source.addEventListener("tool_call", (event) => {
    const data = JSON.parse(event.data);
    toolNotice(turnId, bubble, data);
    if (data.phase === "started" && data.tool === "ask_person") {
      showWaiting(turnId, bubble, "[data-question]");
    }
  });
  source.addEventListener("finished", (event) => {
    const data = JSON.parse(event.data);
    source.close();
    bubble.classList.remove("streaming");
    if (data.status !== "completed") {
      bubble.textContent = `${data.status}: ${data.error || data.outcome || ""}`;
    }
    bubble.dataset.status = data.status;
    if (["failed", "canceled", "dropped"].includes(data.status)) {
      // Its trace, and a retry (a completed answer's text stays only the answer).
      const meta = element("span", "meta");
      const trace = element("a", "", "trace");
      trace.href = `/turns/${encodeURIComponent(turnId)}`;
      const retry = element("button", "link retry", "retry");
      retry.dataset.retry = turnId;
      meta.append(trace, " · ", retry);
      bubble.append(meta);
    }
    if (done) done(data);
  });
  return source;
}

// Post a message (or a task run) from the chat form; its answer streams into a new bubble.
function startInChat(log, text, send) {
  const placeholder = log.querySelector(".placeholder");
  if (placeholder) placeholder.remove();
  log.append(element("div", "msg user", text));
  const bubble = element("div", "msg agent streaming", "");
  bubble.id = "answer-pending";
  log.append(bubble);
  return send().then((id) => {
    bubble.dataset.turn = id;
    bubble.id = `answer-${id}`;
    return new Promise((resolve) => watchTurn(id, bubble, resolve));
  }).catch((error) => {
    bubble.classList.remove("streaming");
    bubble.textContent = `not sent: ${error.message}`;
  });
}

function setupChat() {
  const form = document.querySelector("#chat-form");
  if (!form) return;
  const log = document.querySelector("#chat-log");
  const input = form.querySelector("textarea");
  const button = form.querySelector("button[type=submit]");
  const send = async (event) => {
    event.preventDefault();
    const text = input.value.trim();
    if (!text) return;
    button.disabled = true;
    input.value = "";
    const agent = form.elements.agent.value || undefined;
    const thread = form.dataset.thread;
    const asRun = form.elements.task_run.checked;
    await startInChat(log, text, async () => {
      if (!asRun) {
        return (await api("POST", "/api/turns", {input: text, thread_id: thread, agent})).turn_id;
      }
      // A task run's id is its turn's: the chat watches it like its own turns.
      const run = await api("POST", "/task-runs/start", {task: text, thread_id: thread, agent});
      const note = element("div", "msg notice run");
      note.append("task run ");
      const link = element("a", "mono", run.id.slice(-8));
      link.href = `/task-runs/${encodeURIComponent(run.id)}`;
      note.append(link, " started");
      log.querySelector(".msg.agent:last-child").before(note);
      return run.id;
    });
    button.disabled = false;
    input.focus();
  };
  form.addEventListener("submit", send);
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) send(event);
  });
  document.querySelectorAll(".msg.agent[data-live]").forEach((bubble) => {
    watchTurn(bubble.dataset.turn, bubble, null);
  });
}

// A "retry" button resubmits its failed turn: in the chat the new answer streams in
// below, elsewhere (the trace page) the new turn's trace opens.
function setupRetry() {
  document.addEventListener("click", async (event) => {
    const button = event.target.closest("button[data-retry]");
    if (!button || button.disabled) return;
    button.disabled = true;
    const path = `/turns/${encodeURIComponent(button.dataset.retry)}/retry`;
    const log = document.querySelector("#chat-log");
    if (!log) {
      try {
        const made = await api("POST", path, {});
        window.location.assign(`/turns/${encodeURIComponent(made.turn_id)}`);
      } catch (error) { flash(error.message); button.disabled = false; }
      return;
    }
    await startInChat(log, button.dataset.input || "(resubmitted)",
                      async () => (await api("POST", path, {})).turn_id);
  });
}

// "Fork from here" (a turn's trace): a new thread with the history before this turn, the
// turn run again on it with the (edited) input; the new thread's chat opens.
function setupFork() {
  document.addEventListener("submit", async (event) => {
    const form = event.target.closest("form[data-fork]");
    if (!form) return;
    event.preventDefault();
    const button = form.querySelector("button");
    button.disabled = true;
    try {
      const input = form.querySelector("textarea").value;
      const path = `/api/turns/${encodeURIComponent(form.dataset.fork)}/fork`;
      const made = await api("POST", path, {input});
      window.location.assign(`/chat/${encodeURIComponent(made.fork.thread_id)}`);
    } catch (error) { flash(error.message); button.disabled = false; }
  });
}

// An action's request is in flight: a timed reload now would hide its outcome (or cut it).
let acting = false;

// Buttons with data-post send it and reload the page. One listener on the document, so
// a button works as soon as it is on the page, whenever it was added.
function setupActions() {
  document.addEventListener("click", async (event) => {
    const button = event.target.closest("button[data-post]");
    if (!button || button.disabled) return;
    if (button.dataset.confirm && !window.confirm(button.dataset.confirm)) return;
    acting = true;
    button.disabled = true;
    try {
      await api("POST", button.dataset.post, {});
      if (button.dataset.stay) {  // decided in place (the chat): say so, keep the page
        const row = button.closest(".actions") || button;
        row.replaceWith(element("div", "small decided", button.dataset.stay));
        acting = false;
        return;
      }
      window.location.reload();
    } catch (error) {
      flash(error.message);
      button.disabled = false;
      acting = false;
    }
  });
}

// Answer forms (the questions page) post their one field to the API as {answer} and
// reload the page; a refused answer is shown and the form stays as typed.
function setupAnswers() {
  document.addEventListener("submit", async (event) => {
    const form = event.target.closest("form[data-answer]");
    if (!form) return;
    event.preventDefault();
    const button = form.querySelector("button");
    acting = true;
    button.disabled = true;
    try {
      const answer = form.elements.answer.value;
      await api("POST", form.dataset.answer, {answer});
      if (form.dataset.stay) {  // answered in place (the chat)
        form.replaceWith(element("div", "small answered", `answered: ${answer}`));
        acting = false;
        return;
      }
      window.location.reload();
    } catch (error) {
      flash(error.message);
      button.disabled = false;
      acting = false;
    }
  });
}

// Someone is typing into a form: a timed reload now would throw their words away.
function typing() {
  const active = document.activeElement;
  return Boolean(active && active.closest && active.closest("form") && active.value);
}

// Pages marked data-refresh reload themselves while something on them is still moving,
// but not under a person's action: then they wait for the action's own reload.
function setupRefresh() {
  const seconds = Number(document.body.dataset.refresh || 0);
  if (seconds <= 0) return;
  const reload = () =>
    acting || typing() ? setTimeout(reload, 500) : window.location.reload();
  setTimeout(reload, seconds * 1000);
}

document.addEventListener("DOMContentLoaded", () => {
  setupChat();
  setupActions();
  setupAnswers();
  setupRetry();
  setupFork();
  setupRefresh();
  // Set last: a test (or a person's script) waits for this before using the page.
  document.documentElement.dataset.ready = "true";
});
