// The inspector's other tabs: tasks and their timelines, the wire console, push deliveries,
// and `a2a check`. Uses app.js's Inspector (the API, the state) and views.js's V.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const el = V.el;
  const I = window.Inspector;
  const { state } = I;

  // --- tasks ------------------------------------------------------------------------------

  async function list(pageToken) {
    const request = {};
    if ($("filter-context").value.trim()) request.contextId = $("filter-context").value.trim();
    if ($("filter-state").value) request.status = $("filter-state").value;
    if (pageToken) request.pageToken = pageToken;
    const answer = await I.api("tasks", { binding: I.binding(), request });
    const page = answer.page;
    const rows = (page.tasks || []).map((t) => el("tr", { class: "clickable", "data-task": t.id, onclick: () => I.guarded("timeline", () => timeline(t.id)) },
      el("td", {}, el("code", {}, t.id)), el("td", {}, V.state(t.status.state)),
      el("td", {}, t.status.timestamp || ""), el("td", {}, el("code", {}, t.contextId))));
    const head = el("tr", {}, el("th", {}, "task"), el("th", {}, "state"), el("th", {}, "updated"), el("th", {}, "context"));
    if (pageToken) $("task-list").append(...rows);
    else $("task-list").replaceChildren(head, ...rows);
    $("task-list").append(el("caption", {}, `${(page.tasks || []).length} shown of ${page.totalSize ?? "?"} tasks`));
    state.nextPage = page.nextPageToken || "";
    $("more").hidden = !state.nextPage;
  }
  $("tasks-form").addEventListener("submit", (e) => { e.preventDefault(); I.guarded("list tasks", () => list("")); });
  $("more").addEventListener("click", () => I.guarded("list tasks", () => list(state.nextPage)));

  // One timeline entry: a time, the event's id (its sequence number, on agents that give one),
  // what arrived, and the state change it made (drawn).
  function entry(item, before, resume) {
    const e = item.event;
    let what, s;
    if (e.task) { s = e.task.status.state; what = `task snapshot, ${(e.task.artifacts || []).length} artifact(s)`; }
    else if (e.statusUpdate) { s = e.statusUpdate.status.state; what = `status ${V.text(e.statusUpdate.status.message)}`; }
    else if (e.artifactUpdate) {
      const a = e.artifactUpdate;
      what = `artifact ${a.artifact.name || a.artifact.artifactId}${a.append ? " (appended)" : ""}${a.lastChunk ? " (last chunk)" : ""}: ` +
        (a.artifact.parts || []).map((p) => p.text ?? "[part]").join("");
    } else if (e.message) what = `message: ${V.text(e.message)}`;
    const changed = s && s !== before;
    const hasId = item.id !== null && item.id !== undefined;
    return {
      state: s || before,
      node: el("div", { class: "tl-item" + (changed ? " change" : ""), "data-kind": item.kind, "data-seq": hasId ? item.id : "" },
        el("span", { class: "time" }, V.time(item.at)),
        hasId ? el("span", { class: "seq", title: "the event's id (Last-Event-ID)" }, `#${item.id}`) : "", item.kind, " ",
        changed ? [before ? V.state(before) : "", before ? " → " : "", V.state(s), " "] : "", what || "",
        hasId && resume ? el("button", { type: "button", class: "resume-after", title: `SubscribeToTask with Last-Event-ID: ${item.id}`,
          onclick: () => resume(item) }, "resume after this") : ""),
    };
  }

  async function timeline(id) {
    const answer = await I.api("task", { binding: I.binding(), taskId: id });
    const task = answer.task;
    const list = el("div", { class: "timeline", id: "timeline-events" });
    const seen = state.events[id] || [];
    let last = null;
    // Resubscribes after `from` (an event with an id: Last-Event-ID), or from the current task
    // when the agent gives no ids; marks the resume point, then appends what arrives.
    const resume = (from) => I.guarded("resubscribe", async () => {
      // State changes are drawn from the task's state at the resume point.
      let before = null;
      for (const item of from ? seen : []) {
        before = entry(item, before, null).state;
        if (item === from) break;
      }
      if (from) last = before;
      const at = V.time(Date.now());
      const mark = from
        ? `resubscribed at ${at} with Last-Event-ID: ${from.id}: resuming after event #${from.id} (received ${V.time(from.at)})`
        : seen.length
          ? `resubscribed at ${at}: the agent gave no event ids, so no Last-Event-ID: from the task's current state (${seen.length} event(s) seen before, last at ${V.time(seen[seen.length - 1].at)})`
          : `resubscribed at ${at}: from the task's current state`;
      list.append(el("div", { class: "tl-item resume", "data-after": from ? from.id : "" }, mark));
      await I.apiStream("subscribe", { binding: I.binding(), taskId: id, after: from ? from.id : undefined }, (name, data) => {
        if (name === "event") {
          const item = { at: data.at, kind: "resumed", event: data.event, id: data.id ?? null };
          I.logEvent(id, "resumed", data.event, data.at, data.id);
          const drawn = entry(item, last, resume);
          last = drawn.state;
          list.append(drawn.node);
        } else if (name === "failure" || name === "notice") {
          list.append(el("div", { class: "tl-item" }, el("span", { class: "time" }, V.time(Date.now())), data.message));
        } else if (name === "end") {
          list.append(el("div", { class: "tl-item end" }, el("span", { class: "time" }, V.time(Date.now())), "stream ended"));
        }
      });
    });
    for (const item of seen) {
      const drawn = entry(item, last, resume);
      last = drawn.state;
      list.append(drawn.node);
    }
    if (!seen.length) list.append(el("div", { class: "hint" }, "no events of this task arrived in this page; its history:"));
    for (const m of task.history || []) {
      list.append(el("div", { class: "tl-item" }, el("span", { class: "time" }, ""), `${m.role === "ROLE_USER" ? "user" : "agent"}: ${V.text(m)}`));
    }
    const resub = el("button", { id: "resubscribe", type: "button", title: "SubscribeToTask, after the last event with an id (Last-Event-ID) when the agent gives ids" }, "Resubscribe");
    resub.addEventListener("click", () => {
      const withId = [...seen].reverse().find((i) => i.id !== null && i.id !== undefined);
      resume(withId || null);
    });
    $("timeline").replaceChildren(
      el("h3", {}, "Task ", el("code", {}, id), " ", V.state(task.status.state)),
      el("div", { class: "row" }, resub, el("span", { class: "hint" }, `context ${task.contextId}`)),
      list,
      ...(task.artifacts || []).map((a) => V.artifact(a)),
      el("details", {}, el("summary", {}, "GetTask JSON"), el("pre", {}, V.pretty(task))));
  }
  I.timeline = timeline;

  // --- wire console -------------------------------------------------------------------------

  function exchangeNode(x) {
    const ok = x.status && x.status < 400 && !(x.grpc && x.grpc.code);
    const took = x.end ? ` ${x.end - x.at} ms` : x.error ? "" : " …";
    const status = x.error ? "failed" : x.grpc ? `${x.status} ${x.grpc.name}` : x.status || "…";
    const copy = (text) => () => navigator.clipboard && navigator.clipboard.writeText(text);
    const body = el("div", { class: "body" },
      el("div", { class: "row" },
        el("button", { type: "button", onclick: copy(V.curl(x)) }, "Copy as curl"),
        el("button", { type: "button", onclick: copy(V.a2a(x, state.agentUrl)) }, "Copy as a2a")),
      el("pre", { class: "a2a-command" }, V.a2a(x, state.agentUrl)),
      el("pre", {}, `${x.request.method} ${x.request.url}\n` + x.request.headers.map(([k, v]) => `${k}: ${v}`).join("\n") +
        "\n\n" + V.pretty(x.request.body)),
      x.status ? el("pre", {}, `HTTP ${x.status}\n` + x.headers.map(([k, v]) => `${k}: ${v}`).join("\n")) : null,
      x.chunks.map((c) => el("pre", { class: "chunk" }, el("span", { class: "time" }, V.time(c.at)), "\n" + V.pretty(c.body))),
      x.trailers ? el("pre", {}, "trailers\n" + x.trailers.map(([k, v]) => `${k}: ${v}`).join("\n")) : null,
      x.grpc ? el("pre", {}, "gRPC status\n" + V.pretty(x.grpc)) : null,
      x.error ? el("pre", { class: "status-bad" }, x.error) : null);
    const node = el("details", { class: "exchange", "data-op": x.op || "", "data-binding": x.binding },
      el("summary", {}, el("span", { class: "time" }, V.time(x.at)), ` ${x.binding} ${x.op || ""} ${x.request.method} ${x.request.url} → `,
        el("span", { class: ok ? "status-ok" : "status-bad" }, String(status)), took,
        x.chunks.length > 1 ? ` (${x.chunks.length} chunks)` : ""),
      body);
    return node;
  }

  function matches(x) {
    const f = $("wire-filter").value.trim().toLowerCase();
    return !f || JSON.stringify(x).toLowerCase().includes(f);
  }

  function redraw(x) {
    const open = x.node && x.node.open;
    const node = exchangeNode(x);
    node.open = open;
    node.hidden = !matches(x);
    if (x.node) x.node.replaceWith(node); else $("wire-log").prepend(node);
    x.node = node;
  }

  function onWire(entry) {
    let x = state.wire.get(entry.id);
    if (entry.kind === "request") {
      x = { ...entry, chunks: [], headers: [] };
      state.wire.set(entry.id, x);
      $("wire-count").textContent = `(${state.wire.size})`;
    }
    if (!x) return;
    if (entry.kind === "response") Object.assign(x, { status: entry.status, headers: entry.headers, grpc: entry.grpc || x.grpc });
    else if (entry.kind === "chunk") x.chunks.push({ at: entry.at, body: entry.body });
    else if (entry.kind === "trailers") Object.assign(x, { trailers: entry.headers, grpc: entry.grpc || x.grpc });
    else if (entry.kind === "end") x.end = entry.at;
    else if (entry.kind === "error") x.error = entry.error;
    redraw(x);
  }
  $("wire-filter").addEventListener("input", () => { for (const x of state.wire.values()) if (x.node) x.node.hidden = !matches(x); });
  $("wire-clear").addEventListener("click", () => { $("wire-log").replaceChildren(); state.wire.clear(); $("wire-count").textContent = ""; });

  // --- push ---------------------------------------------------------------------------------

  function onPush(entry) {
    state.pushes += 1;
    $("push-count").textContent = `(${state.pushes})`;
    $("push-log").prepend(el("div", { class: "msg push" },
      el("span", { class: "time" }, V.time(entry.at)), entry.tokenMatches ? "token matches" : "TOKEN MISSING OR WRONG",
      el("pre", {}, V.pretty(entry.body))));
  }
  $("push-form").addEventListener("submit", (e) => {
    e.preventDefault();
    I.guarded("register the webhook", async () => {
      const id = $("push-task").value.trim() || (state.task && state.task.id);
      if (!id) throw new Error("give a task id (or start a task in the chat)");
      const answer = await I.api("push", { binding: I.binding(), taskId: id });
      $("push-log").prepend(el("div", { class: "hint" }, `registered for task ${id}: `, el("pre", {}, V.pretty(answer.config))));
    });
  });

  // --- check --------------------------------------------------------------------------------

  $("check-form").addEventListener("submit", (e) => {
    e.preventDefault();
    I.guarded("check", async () => {
      $("check-report").replaceChildren(el("p", { class: "hint" }, "running a2a check… (up to two minutes)"));
      const groups = $("check-groups").value.split(",").map((g) => g.trim()).filter(Boolean);
      const bindings = $("check-binding").value ? [$("check-binding").value] : [];
      const longTask = $("check-long-task").value.trim() || undefined;
      try {
        $("check-report").replaceChildren(V.report(await I.api("check", { groups, bindings, longTask })));
      } catch (err) {
        $("check-report").replaceChildren();
        throw err;
      }
    });
  });

  // --- the feed: wire exchanges and push deliveries, live -----------------------------------

  const feed = new EventSource("/api/feed?token=" + encodeURIComponent(new URLSearchParams(location.search).get("token") || ""));
  feed.addEventListener("entry", (e) => {
    const entry = JSON.parse(e.data);
    if (entry.type === "wire") onWire(entry);
    else if (entry.type === "push") onPush(entry);
  });

  // Connect at once when the URL names an agent (`a2a inspect URL`).
  const agent = new URLSearchParams(location.search).get("agent");
  if (agent) {
    $("url").value = agent;
    $("connect").click();
  }
})();
