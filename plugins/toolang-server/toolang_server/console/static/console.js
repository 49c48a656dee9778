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
  source.addEventListener("approval", (event) => {
    const data = JSON.parse(event.data);
    const note = element("div", "msg notice");
    note.append(`${data.tool} waits for approval — `);
    const link = element("a", "", "decide on the approvals page");
    link.href = "/approvals";
    note.append(link);
    bubble.before(note);
  });
  source.addEventListener("tool_call", (event) => {
    const data = JSON.parse(event.data);
    bubble.before(element("div", "msg notice", `ran ${data.tool}: ${data.ok ? "ok" : data.error}`));
  });
  source.addEventListener("finished", (event) => {
    const data = JSON.parse(event.data);
    source.close();
    bubble.classList.remove("streaming");
    if (data.status !== "completed") {
      bubble.textContent = `${data.status}: ${data.error || data.outcome || ""}`;
    }
    bubble.dataset.status = data.status;
    if (done) done(data);
  });
  return source;
}

function setupChat() {
  const form = document.querySelector("#chat-form");
  if (!form) return;
  const log = document.querySelector("#chat-log");
  const input = form.querySelector("textarea");
  const button = form.querySelector("button");
  const send = async (event) => {
    event.preventDefault();
    const text = input.value.trim();
    if (!text) return;
    button.disabled = true;
    const placeholder = log.querySelector(".placeholder");
    if (placeholder) placeholder.remove();
    log.append(element("div", "msg user", text));
    const bubble = element("div", "msg agent streaming", "");
    bubble.id = "answer-pending";
    log.append(bubble);
    input.value = "";
    try {
      const submitted = await api("POST", "/api/turns", {input: text, thread_id: form.dataset.thread});
      bubble.dataset.turn = submitted.turn_id;
      bubble.id = `answer-${submitted.turn_id}`;
      watchTurn(submitted.turn_id, bubble, () => { button.disabled = false; input.focus(); });
    } catch (error) {
      bubble.classList.remove("streaming");
      bubble.textContent = `not sent: ${error.message}`;
      button.disabled = false;
    }
  };
  form.addEventListener("submit", send);
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) send(event);
  });
  document.querySelectorAll(".msg.agent[data-live]").forEach((bubble) => {
    watchTurn(bubble.dataset.turn, bubble, null);
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
      await api("POST", form.dataset.answer, {answer: form.elements.answer.value});
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
  setupRefresh();
  // Set last: a test (or a person's script) waits for this before using the page.
  document.documentElement.dataset.ready = "true";
});
