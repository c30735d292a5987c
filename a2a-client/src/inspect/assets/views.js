// Rendering for the inspector's page: pure functions from A2A JSON to DOM nodes. Everything
// the agent sends is put in the page as text (never as HTML), and nothing is fetched from
// anywhere: a URL in a part is shown, not loaded.
"use strict";

const V = {};

V.el = (tag, attrs, ...children) => {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    node.append(c instanceof Node ? c : String(c));
  }
  return node;
};
const el = V.el;

V.pretty = (v) => (typeof v === "string" ? v : JSON.stringify(v, null, 2));
V.time = (ms) => {
  const d = new Date(ms);
  return d.toLocaleTimeString([], { hour12: false }) + "." + String(d.getMilliseconds()).padStart(3, "0");
};
// TASK_STATE_INPUT_REQUIRED -> INPUT_REQUIRED
V.stateName = (s) => String(s || "").replace(/^TASK_STATE_/, "");
V.state = (s) => el("span", { class: "state " + V.stateName(s) }, V.stateName(s));

V.text = (message) =>
  ((message && message.parts) || []).filter((p) => typeof p.text === "string").map((p) => p.text).join("");

// A small, safe Markdown subset: headings, lists, fenced code, paragraphs, `code`, **bold**, *em*.
V.markdown = (src) => {
  const root = el("div", { class: "markdown" });
  const inline = (line) => {
    const out = [];
    const re = /(`[^`]+`|\*\*[^*]+\*\*|\*[^*]+\*)/g;
    let last = 0, m;
    while ((m = re.exec(line))) {
      out.push(line.slice(last, m.index));
      const t = m[0];
      if (t.startsWith("`")) out.push(el("code", {}, t.slice(1, -1)));
      else if (t.startsWith("**")) out.push(el("strong", {}, t.slice(2, -2)));
      else out.push(el("em", {}, t.slice(1, -1)));
      last = m.index + t.length;
    }
    out.push(line.slice(last));
    return out;
  };
  const lines = src.split("\n");
  let list = null, para = [];
  const flush = () => {
    if (para.length) root.append(el("p", {}, inline(para.join(" "))));
    para = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.startsWith("```")) {
      flush(); list = null;
      const code = [];
      while (++i < lines.length && !lines[i].startsWith("```")) code.push(lines[i]);
      root.append(el("pre", {}, code.join("\n")));
      continue;
    }
    const h = /^(#{1,6})\s+(.*)$/.exec(line);
    const li = /^\s*([-*]|\d+\.)\s+(.*)$/.exec(line);
    if (h) { flush(); list = null; root.append(el("h" + Math.min(h[1].length + 2, 6), {}, inline(h[2]))); }
    else if (li) {
      flush();
      if (!list) { list = el(/\d/.test(li[1]) ? "ol" : "ul"); root.append(list); }
      list.append(el("li", {}, inline(li[2])));
    } else if (!line.trim()) { flush(); list = null; }
    else { list = null; para.push(line); }
  }
  flush();
  return root;
};

// One part, by what it holds and its media type.
V.part = (p) => {
  const media = p.mediaType || "";
  if (typeof p.text === "string") {
    if (media === "text/markdown") return V.markdown(p.text);
    if (media === "application/json") {
      try { return el("pre", {}, V.pretty(JSON.parse(p.text))); } catch (_) { /* shown as text */ }
    }
    return el("pre", { class: "text" }, p.text);
  }
  if (p.data !== undefined) return el("pre", { class: "data" }, V.pretty(p.data));
  if (typeof p.raw === "string") {
    if (/^image\/(png|jpeg|gif|webp|bmp)$/.test(media)) {
      return el("img", { src: `data:${media};base64,${p.raw}`, alt: p.filename || "image" });
    }
    if (/^text\//.test(media) || media === "application/json") {
      try {
        const bytes = Uint8Array.from(atob(p.raw), (c) => c.charCodeAt(0));
        return V.part({ text: new TextDecoder().decode(bytes), mediaType: media });
      } catch (_) { /* shown as a file */ }
    }
    return el("div", {}, `file ${p.filename || ""} (${media || "unknown type"}, ${Math.floor((p.raw.length * 3) / 4)} bytes)`);
  }
  if (typeof p.url === "string") {
    return el("div", {}, `file ${p.filename || ""} at `, el("code", {}, p.url), ` (${media || "unknown type"}; not loaded)`);
  }
  return el("pre", {}, V.pretty(p));
};

V.parts = (parts) => el("div", { class: "parts" }, (parts || []).map(V.part));

V.artifact = (a) =>
  el("div", { class: "artifact", "data-artifact": a.artifactId },
    el("div", { class: "hint" }, a.name || a.artifactId),
    el("div", { class: "artifact-parts" }, (a.parts || []).map(V.part)));

// The card: identity, interfaces, capabilities, security, skills, problems, signatures, raw.
V.card = (answer) => {
  const c = answer.card;
  const caps = c.capabilities || {};
  const section = (title, ...body) => el("section", {}, el("h3", {}, title), ...body);
  const sig = answer.signature || {};
  let sigText;
  if (!sig.count) sigText = "the card is not signed";
  else if (!sig.checked) sigText = `${sig.count} signature(s); ${sig.error || "give a JWK set URL or a key above to verify them"}`;
  else if (sig.verified) sigText = `verified: signature ${sig.index}, kid ${sig.kid || "(none)"}, ${sig.algorithm}`;
  else sigText = `NOT verified: ${sig.error}`;
  const problems = (answer.problems || []).filter((f) => f.verdict !== "pass");
  return el("div", { class: "card" },
    el("h2", { id: "card-name" }, c.name || "(no name)", " ", el("span", { class: "hint" }, c.version || "")),
    el("p", {}, c.description || ""),
    section("Interfaces", el("table", {},
      el("tr", {}, el("th", {}, "binding"), el("th", {}, "version"), el("th", {}, "URL"), el("th", {}, "tenant")),
      (c.supportedInterfaces || []).map((i) => el("tr", {},
        el("td", {}, i.protocolBinding), el("td", {}, i.protocolVersion), el("td", {}, el("code", {}, i.url)), el("td", {}, i.tenant || ""))))),
    section("Capabilities", el("div", {},
      ["streaming", "pushNotifications", "extendedAgentCard"].map((k) => el("span", { class: "tag" }, `${k}: ${caps[k] ? "yes" : "no"}`)),
      (caps.extensions || []).map((e) => el("div", {}, "extension ", el("code", {}, e.uri), e.required ? " (required)" : "")))),
    section("Security", c.securitySchemes ? el("pre", {}, V.pretty({ securitySchemes: c.securitySchemes, securityRequirements: c.securityRequirements })) : el("p", { class: "hint" }, "no security schemes")),
    section("Skills", (c.skills || []).map((s) => el("div", { class: "skill" },
      el("strong", {}, s.name || s.id), " ", el("code", {}, s.id), el("div", {}, s.description || ""),
      el("div", {}, (s.tags || []).map((t) => el("span", { class: "tag" }, t))),
      (s.examples || []).length ? el("div", { class: "hint" }, "e.g. ", s.examples.join(" · ")) : null))),
    section("Problems (a2a check, card group)", el("div", { id: "card-problems" },
      problems.length ? problems.map(V.finding) : el("p", { class: "status-ok" }, "none: every card check passed"))),
    section("Signatures", el("p", { id: "card-signature", class: sig.checked && !sig.verified ? "status-bad" : "" }, sigText)),
    section("Raw JSON", el("pre", { id: "card-raw" }, V.pretty(c))));
};

V.finding = (f) =>
  el("details", { class: "finding" },
    el("summary", {}, el("span", { class: "verdict " + f.verdict }, f.verdict), " ", f.level, " ",
      f.binding ? `[${f.binding}] ` : "", f.title, " ", el("span", { class: "hint" }, `§${f.section} (${f.id})`)),
    el("div", {}, f.detail || ""),
    f.request ? el("pre", {}, "request:\n" + V.pretty(f.request)) : null,
    f.response ? el("pre", {}, "response:\n" + V.pretty(f.response)) : null);

// The check report: summary per binding, then findings by group.
V.report = (r) => {
  const groups = {};
  for (const f of r.findings || []) (groups[f.group] = groups[f.group] || []).push(f);
  return el("div", { id: "report" },
    el("p", { class: r.passed ? "status-ok" : "status-bad", id: "check-verdict" },
      r.passed ? "PASSED: every MUST holds" : "FAILED: a MUST does not hold, or the run was incomplete"),
    (r.gaps || []).map((g) => el("p", { class: "hint" }, g)),
    el("table", {}, el("tr", {}, el("th", {}, "binding"), ["MUST", "SHOULD", "MAY"].map((l) => el("th", {}, l + " pass/fail/skip"))),
      Object.entries(r.summary || {}).map(([b, per]) => el("tr", {}, el("td", {}, b),
        ["MUST", "SHOULD", "MAY"].map((l) => el("td", {}, `${per[l].pass}/${per[l].fail}/${per[l].skip}`))))),
    Object.entries(groups).map(([g, fs]) => el("section", {}, el("h3", {}, g), fs.map(V.finding))));
};

// Shell quoting for copied commands.
V.sh = (s) => "'" + String(s).replace(/'/g, "'\\''") + "'";

V.curl = (x) => {
  if (x.binding === "GRPC") return "# gRPC: curl cannot send it; use the `a2a` command instead";
  const r = x.request;
  const parts = ["curl", "-sS", "-N", "-X", r.method, V.sh(r.url)];
  for (const [k, v] of r.headers) parts.push("-H", V.sh(`${k}: ${v}`));
  if (r.body) parts.push("--data-raw", V.sh(r.body));
  return parts.join(" ");
};

// The `a2a` command that makes the same call, where there is one.
V.a2a = (x, agentUrl) => {
  const flag = { JSONRPC: "jsonrpc", "HTTP+JSON": "rest", GRPC: "grpc" }[x.binding];
  const bind = flag ? ` --binding ${flag}` : "";
  const u = V.sh(agentUrl || "URL");
  if (x.binding === "card") return `a2a card ${u}`;
  const op = x.op || "";
  const p = x.params || {};
  const msg = p.message || {};
  const text = V.text(msg);
  const extra = (msg.taskId ? ` --task ${V.sh(msg.taskId)}` : "") + (msg.contextId ? ` --context ${V.sh(msg.contextId)}` : "");
  const id = p.id || p.name || p.taskId || "";
  switch (op) {
    case "SendMessage": return `a2a send ${u} ${V.sh(text)}${extra}${bind}`;
    case "SendStreamingMessage": return `a2a stream ${u} ${V.sh(text)}${extra}${bind}`;
    case "GetTask": return `a2a get ${u} ${V.sh(id)}${bind}`;
    case "CancelTask": return `a2a cancel ${u} ${V.sh(id)}${bind}`;
    case "SubscribeToTask": return `a2a subscribe ${u} ${V.sh(id)}${bind}`;
    case "ListTasks": return `a2a list ${u}${p.contextId ? " --context " + V.sh(p.contextId) : ""}${p.status ? " --status " + p.status : ""}${bind}`;
    default: return `# no a2a subcommand for ${op || "this call"}`;
  }
};

window.V = V;
