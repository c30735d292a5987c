// The inspector's page: talks only to the inspector's own API (with the token of the URL it
// was opened with), which talks to the agent.
"use strict";

const $ = (id) => document.getElementById(id);
// `el` comes from views.js.
const params = new URLSearchParams(location.search);
const TOKEN = params.get("token") || "";

const state = {
  agentUrl: "",
  task: null,          // {id, contextId, state} of the conversation's current task
  contextId: null,
  running: false,
  events: {},          // taskId -> [{at, kind, event, id}] as they arrived in this page (id: the
                       // event's id, for Last-Event-ID, when the agent gives one)
  wire: new Map(),     // exchange id -> exchange
  pushes: 0,
  nextPage: "",
};

// --- the API ------------------------------------------------------------------------------

async function failure(response) {
  try {
    const body = await response.json();
    return new Error((body.error && body.error.message) || `HTTP ${response.status}`);
  } catch (_) {
    return new Error(`the inspector answered HTTP ${response.status}`);
  }
}

async function api(path, body) {
  const response = await fetch("/api/" + path, {
    method: "POST",
    headers: { "content-type": "application/json", "x-inspect-token": TOKEN },
    body: JSON.stringify(body || {}),
  });
  if (!response.ok) throw await failure(response);
  return response.json();
}

// A POST answered with SSE: calls on(name, data) per event; resolves when the stream ends.
async function apiStream(path, body, on) {
  const response = await fetch("/api/" + path, {
    method: "POST",
    headers: { "content-type": "application/json", "x-inspect-token": TOKEN },
    body: JSON.stringify(body || {}),
  });
  if (!response.ok) throw await failure(response);
  if (!(response.headers.get("content-type") || "").startsWith("text/event-stream")) {
    on("answer", await response.json());
    return;
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      let name = "message", data = "";
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) name = line.slice(6).trim();
        else if (line.startsWith("data:")) data += line.slice(5).trimStart();
      }
      if (data) on(name, JSON.parse(data));
    }
  }
}

function binding() { return $("binding").value || undefined; }

function showError(e) {
  $("error").hidden = !e;
  $("error").textContent = e ? String(e.message || e) : "";
}
function setStatus(text) { $("status").textContent = text; }

async function guarded(what, f) {
  showError(null);
  try { await f(); } catch (e) { showError(new Error(`${what}: ${e.message || e}`)); }
}

// --- tabs ---------------------------------------------------------------------------------

function showTab(name) {
  for (const b of document.querySelectorAll("#tabs button")) b.classList.toggle("active", b.dataset.tab === name);
  for (const s of document.querySelectorAll("main > section")) s.hidden = s.id !== "tab-" + name;
}
for (const b of document.querySelectorAll("#tabs button")) b.addEventListener("click", () => showTab(b.dataset.tab));

// --- connect ------------------------------------------------------------------------------

async function connect() {
  const url = $("url").value.trim();
  if (!url) return showError(new Error("give the agent's URL"));
  setStatus("connecting…");
  await guarded("connect", async () => {
    try {
      const answer = await api("connect", {
        url, jwks: [$("jwks").value], keys: [$("key").value], sdkCanonicalization: $("sdk").checked,
      });
      state.agentUrl = answer.url;
      $("binding").replaceChildren(...answer.bindings.map((b) => el("option", {}, b)));
      $("card-empty").hidden = true;
      $("card-view").replaceChildren(V.card(answer));
      $("push-hint").textContent = `The inspector receives push notifications at ${answer.webhook}. ` +
        "A server's SSRF guard refuses loopback webhooks: allow 127.0.0.1 on an agent on this machine " +
        "(a2a-server: --push-allow 127.0.0.1, or PushSettings::allow(\"127.0.0.1\")).";
      setStatus(`connected: ${answer.card.name}`);
      newChat();
    } catch (e) {
      setStatus("not connected");
      throw e;
    }
  });
}
$("connect-form").addEventListener("submit", (e) => { e.preventDefault(); connect(); });

// --- chat ---------------------------------------------------------------------------------

function newChat() {
  state.task = null;
  state.contextId = null;
  $("chat-log").replaceChildren();
  showAsk(null);
  updateContext();
}
$("new-chat").addEventListener("click", newChat);

function updateContext() {
  const t = state.task;
  $("chat-context").textContent = t
    ? `task ${t.id} (${V.stateName(t.state)}), context ${t.contextId}`
    : state.contextId ? `context ${state.contextId}` : "a new conversation";
  $("cancel").disabled = !(t && !isFinal(t.state));
}

const isFinal = (s) => /COMPLETED|FAILED|CANCELED|REJECTED/.test(s || "");
const isInterrupted = (s) => /INPUT_REQUIRED|AUTH_REQUIRED/.test(s || "");

function showAsk(text) {
  $("ask").hidden = text === null;
  $("ask").textContent = text === null ? "" : `The agent asks: ${text || "(no text)"} — your next message answers it.`;
}

function logEvent(taskId, kind, event, at, id) {
  if (!taskId) return;
  (state.events[taskId] = state.events[taskId] || []).push({ at: at || Date.now(), kind, event, id: id ?? null });
}

async function readFile(file) {
  const buffer = new Uint8Array(await file.arrayBuffer());
  let binary = "";
  for (let i = 0; i < buffer.length; i += 0x8000) binary += String.fromCharCode(...buffer.subarray(i, i + 0x8000));
  return { raw: btoa(binary), filename: file.name, mediaType: file.type || "application/octet-stream" };
}

async function buildMessage() {
  const parts = [];
  const text = $("text").value;
  if (text.trim()) parts.push({ text });
  for (const f of $("file").files) parts.push(await readFile(f));
  const data = $("data").value.trim();
  if (data) {
    try { parts.push({ data: JSON.parse(data), mediaType: "application/json" }); }
    catch (e) { throw new Error(`the data is not JSON: ${e.message}`); }
  }
  if (!parts.length) throw new Error("nothing to send: write a message, pick a file or give data");
  const message = { messageId: crypto.randomUUID(), role: "ROLE_USER", parts };
  if (state.task && !isFinal(state.task.state)) message.taskId = state.task.id;
  if (state.contextId) message.contextId = state.contextId;
  return message;
}

// The agent's side of the conversation: one bubble per send, updated as events arrive.
class Reply {
  constructor() {
    this.status = el("div", { class: "status-line" });
    this.body = el("div");
    this.artifacts = el("div");
    this.node = el("div", { class: "msg agent" }, el("div", { class: "who" }, "agent"), this.status, this.body, this.artifacts);
    $("chat-log").append(this.node);
  }
  scroll() { $("chat-log").scrollTop = $("chat-log").scrollHeight; }
  setState(s, text) {
    this.status.replaceChildren(V.state(s), text ? " " + text : "");
    this.scroll();
  }
  message(m) { this.body.append(V.parts(m.parts)); this.scroll(); }
  artifact(a, append) {
    const old = this.artifacts.querySelector(`[data-artifact="${CSS.escape(a.artifactId)}"]`);
    if (old && append) old.querySelector(".artifact-parts").append(...(a.parts || []).map(V.part));
    else if (old) old.replaceWith(V.artifact(a));
    else this.artifacts.append(V.artifact(a));
    this.scroll();
  }
  task(t) {
    this.setState(t.status.state, V.text(t.status.message));
    for (const a of t.artifacts || []) this.artifact(a, false);
  }
}

function track(task, reply) {
  state.task = { id: task.id || task.taskId, contextId: task.contextId, state: task.status.state };
  state.contextId = task.contextId;
  if (isInterrupted(task.status.state)) showAsk(V.text(task.status.message));
  else showAsk(null);
  updateContext();
  if (reply) reply.setState(task.status.state, V.text(task.status.message));
}

function onEvent(reply, event, at, id) {
  if (event.task) {
    logEvent(event.task.id, "task", event, at, id);
    reply.task(event.task);
    track(event.task, null);
  } else if (event.statusUpdate) {
    const u = event.statusUpdate;
    logEvent(u.taskId, "status", event, at, id);
    track({ id: u.taskId, contextId: u.contextId, status: u.status }, reply);
  } else if (event.artifactUpdate) {
    const u = event.artifactUpdate;
    logEvent(u.taskId, "artifact", event, at, id);
    reply.artifact(u.artifact, u.append);
  } else if (event.message) {
    logEvent(event.message.taskId, "message", event, at, id);
    if (event.message.contextId) state.contextId = event.message.contextId;
    reply.message(event.message);
    updateContext();
  }
}

async function send() {
  await guarded("send", async () => {
    const message = await buildMessage();
    $("chat-log").append(el("div", { class: "msg user" }, el("div", { class: "who" }, "you"), V.parts(message.parts)));
    $("text").value = ""; $("file").value = ""; $("data").value = "";
    const reply = new Reply();
    const stream = $("stream").checked;
    $("send").disabled = true;
    try {
      if (!stream) {
        reply.setState("TASK_STATE_SUBMITTED", "waiting for the answer…");
        const answer = await api("send", { binding: binding(), stream: false, message });
        const r = answer.response;
        if (r.task) { logEvent(r.task.id, "task", r, answer.at); reply.task(r.task); track(r.task, null); }
        else { onEvent(reply, r, answer.at); reply.status.replaceChildren(); }
        return;
      }
      await apiStream("send", { binding: binding(), stream: true, message }, (name, data) => {
        if (name === "event") onEvent(reply, data.event, data.at, data.id);
        else if (name === "notice") reply.status.append(el("div", { class: "hint" }, data.message));
        else if (name === "failure") reply.body.append(el("div", { class: "error" }, data.message));
      });
    } catch (e) {
      reply.body.append(el("div", { class: "error" }, e.message));
      throw e;
    } finally {
      $("send").disabled = false;
    }
  });
}
$("chat-form").addEventListener("submit", (e) => { e.preventDefault(); send(); });
$("text").addEventListener("keydown", (e) => { if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) send(); });

$("cancel").addEventListener("click", () => guarded("cancel", async () => {
  const answer = await api("cancel", { binding: binding(), taskId: state.task.id });
  logEvent(answer.task.id, "canceled", { task: answer.task }, answer.at);
  $("chat-log").append(el("div", { class: "msg agent" }, el("div", { class: "who" }, "cancel"), V.state(answer.task.status.state)));
  track(answer.task, null);
}));

window.Inspector = { state, api, apiStream, showTab, onEvent, logEvent, Reply, binding, guarded };
