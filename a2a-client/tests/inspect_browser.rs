//! `a2a inspect` in a real browser: headless Chromium driven through ChromeDriver (Debian's
//! `chromium` and `chromium-driver`, installed by `tests/interop/setup-browser.sh`, which
//! `tests/interop/setup.sh` runs; `support/browser.rs`).
//!
//! - Against the demo agent, over each binding: connect and read the card, stream `countdown 3`
//!   and see its three chunks and the completed state, answer `greet` in the page, cancel a
//!   countdown, open the task's timeline and resume it after its first event (the resume point
//!   marked, `Last-Event-ID` on the wire, exactly the later events replayed), find the requests
//!   in the wire console; and run `a2a check` from the page.
//! - Against the official Python SDK's helloworld sample agent (`tests/interop/py_helloworld.py`),
//!   over JSON-RPC and gRPC: the card, a blocking and a streamed send, the task's timeline (and a
//!   resubscribe, marked as having no event id to resume after), the wire console.
//! - A page of bad input: an unreachable URL, a URL that is not an agent, a card that does not
//!   parse, an agent that hangs mid-stream: each a clear message in the page, which stays usable.
//!
//! With `INSPECT_SCREENSHOTS=DIR`, screenshots of the main views are written to DIR.

#[path = "support/browser.rs"]
mod browser;
mod common;

use a2a_client::inspect::{Inspector, Options};
use browser::{Browser, Driver, PythonAgent};
use common::{TestServer, serve, unreachable_url};
use serde_json::json;
use std::time::Duration;

/// Sends `text` from the chat box.
async fn say(b: &Browser<'_>, text: &str, stream: bool) {
    b.fill("#text", text).await;
    b.js(
        "document.getElementById('stream').checked = arguments[0]; return true",
        json!([stream]),
    )
    .await;
    b.click("#send").await;
}

/// Resumes the open timeline's task after its first event: the mark names the resume point
/// and its `Last-Event-ID`, the agent replays exactly the events after it (ids consecutive, up
/// to the canceled state), and the wire console shows the header sent.
async fn resume_after_the_first_event(b: &Browser<'_>, binding: &str) {
    let first = b
        .js(
            "const i = [...document.querySelectorAll('#timeline-events .tl-item')].find(i => i.dataset.seq); return i ? Number(i.dataset.seq) : null",
            json!([]),
        )
        .await
        .as_u64()
        .unwrap_or_else(|| panic!("{binding}: the demo agent's events carry ids"));
    b.click("#timeline-events .tl-item[data-seq] .resume-after")
        .await;
    let mark = b.text("#timeline-events .tl-item.resume").await;
    assert!(
        mark.contains(&format!("Last-Event-ID: {first}"))
            && mark.contains(&format!("after event #{first}")),
        "{binding}: {mark}"
    );
    b.until(
        "the resumed stream's end",
        "return document.querySelector('#timeline-events .tl-item.end')",
        json!([]),
    )
    .await;
    let seqs = b
        .js(
            "const seqs = (sel) => [...document.querySelectorAll(sel)].map(i => Number(i.dataset.seq)).filter(n => n > 0);
             const resumed = [...document.querySelectorAll('#timeline-events .tl-item[data-kind=resumed]')];
             return { before: seqs('#timeline-events .tl-item:not([data-kind=resumed])'),
                      after: seqs('#timeline-events .tl-item[data-kind=resumed]'),
                      last: resumed.length ? resumed[resumed.length - 1].innerText : '' }",
            json!([]),
        )
        .await;
    let ids = |k: &str| -> Vec<u64> {
        seqs[k]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect()
    };
    let (before, after) = (ids("before"), ids("after"));
    let expected: Vec<u64> = (first + 1..=first + after.len() as u64).collect();
    assert!(
        !after.is_empty(),
        "{binding}: nothing replayed after #{first}"
    );
    assert_eq!(
        after, expected,
        "{binding}: the events after #{first}, in order, none twice"
    );
    assert!(
        before.iter().all(|n| *n == first || after.contains(n)),
        "{binding}: every event seen after #{first} is replayed: {before:?} {after:?}"
    );
    assert!(
        seqs["last"].as_str().unwrap().contains("CANCELED"),
        "{binding}: {seqs}"
    );
    b.click("#tabs [data-tab=wire]").await;
    b.until(
        "the SubscribeToTask with Last-Event-ID on the wire",
        "return [...document.querySelectorAll('#wire-log .exchange[data-op=SubscribeToTask]')].some(x => x.dataset.binding === arguments[0] && x.textContent.toLowerCase().includes('last-event-id: ' + arguments[1]))",
        json!([binding, first.to_string()]),
    )
    .await;
    b.click("#tabs [data-tab=tasks]").await;
}

async fn over(b: &Browser<'_>, binding: &str, shots: bool) {
    b.js(
        "const s = document.getElementById('binding'); s.value = arguments[0]; return s.value === arguments[0]",
        json!([binding]),
    )
    .await;
    b.click("#tabs [data-tab=chat]").await;
    b.click("#new-chat").await;

    // Stream `countdown 3`: three chunks appended live, then COMPLETED.
    say(b, "countdown 3", true).await;
    b.until(
        "countdown 3 completed",
        "const s = [...document.querySelectorAll('#chat-log .msg.agent .state')].pop(); return s && s.innerText === 'COMPLETED'",
        json!([]),
    )
    .await;
    let chunks = b
        .text("#chat-log .msg.agent:last-child .artifact-parts")
        .await;
    assert_eq!(
        chunks.split_whitespace().collect::<Vec<_>>(),
        ["3", "2", "1"],
        "{binding}: {chunks}"
    );
    if shots {
        b.screenshot("chat").await;
    }

    // `greet`: the page asks, the answer continues the task.
    say(b, "greet", false).await;
    b.until(
        "the agent's question",
        "return !document.getElementById('ask').hidden",
        json!([]),
    )
    .await;
    say(b, "Ada", false).await;
    b.until(
        "the greeting",
        "const m = [...document.querySelectorAll('#chat-log .msg.agent')].pop(); return m && m.innerText.includes('Ada') && m.innerText.includes('COMPLETED')",
        json!([]),
    )
    .await;

    // Cancel a countdown while it runs.
    say(b, "countdown 50", true).await;
    b.until(
        "a running countdown",
        "return !document.getElementById('cancel').disabled",
        json!([]),
    )
    .await;
    b.click("#cancel").await;
    b.until(
        "the canceled state",
        "return [...document.querySelectorAll('#chat-log .state')].some(s => s.innerText === 'CANCELED')",
        json!([]),
    )
    .await;

    // The tasks tab: the list, and a task's timeline with its state changes.
    b.click("#tabs [data-tab=tasks]").await;
    b.click("#list").await;
    b.until(
        "the task list",
        "return document.querySelectorAll('#task-list tr.clickable').length >= 3",
        json!([]),
    )
    .await;
    let task_id = b
        .js("return window.Inspector.state.task.id", json!([]))
        .await;
    let row = format!("#task-list tr[data-task=\"{}\"]", task_id.as_str().unwrap());
    b.until(
        "the canceled task in the list",
        "return document.querySelector(arguments[0])",
        json!([row]),
    )
    .await;
    b.click(&row).await;
    b.until(
        "the timeline's state changes",
        "const h = document.querySelector('#timeline h3'); return h && h.innerText.includes(arguments[0]) && document.querySelectorAll('#timeline-events .tl-item.change').length >= 2",
        json!([task_id]),
    )
    .await;
    resume_after_the_first_event(b, binding).await;
    if shots {
        b.screenshot("timeline").await;
    }

    // The wire console has the streaming request of this binding, answered.
    b.click("#tabs [data-tab=wire]").await;
    b.until(
        "the wire console's SendStreamingMessage",
        "return [...document.querySelectorAll('#wire-log .exchange[data-op=SendStreamingMessage]')].some(x => x.dataset.binding === arguments[0] && x.innerText.includes('→ 200'))",
        json!([binding]),
    )
    .await;
    if shots {
        b.click("#wire-log .exchange[data-op=SendStreamingMessage] summary")
            .await;
        b.screenshot("wire").await;
    }
}

#[tokio::test]
async fn the_page_drives_the_demo_agent_over_every_binding() {
    let server = TestServer::demo().await;
    let inspector = Inspector::bind(Options::default()).await.expect("bind");
    let url = format!("{}&agent={}", inspector.url(), server.url);
    tokio::spawn(inspector.serve());
    let driver = Driver::start().await;
    let b = driver.session().await;
    b.goto(&url).await;

    // Connected at once (the agent is in the URL): the card, its interfaces and problems.
    b.until(
        "the card",
        "const h = document.getElementById('card-name'); return h && h.innerText",
        json!([]),
    )
    .await;
    let card = b.text("#card-view").await;
    assert!(card.contains(&server.card.name), "{card}");
    for binding in ["JSONRPC", "HTTP+JSON", "GRPC"] {
        assert!(card.contains(binding), "{binding} in {card}");
    }
    b.screenshot("card").await;

    for binding in ["JSONRPC", "HTTP+JSON", "GRPC"] {
        over(&b, binding, binding == "GRPC").await;
    }

    // `a2a check` from the page (the card and error groups, to keep it short).
    b.click("#tabs [data-tab=check]").await;
    b.fill("#check-groups", "card,errors").await;
    b.click("#run-check").await;
    b.until(
        "the check report",
        "return document.getElementById('check-verdict')",
        json!([]),
    )
    .await;
    let report = b.text("#check-report").await;
    assert!(
        report.contains("errors") && report.contains("MUST"),
        "{report}"
    );
    b.screenshot("check").await;

    b.close().await;
}

/// Picks `binding` in the page and starts a new conversation.
async fn pick(b: &Browser<'_>, binding: &str) {
    let picked = b
        .js(
            "const s = document.getElementById('binding'); s.value = arguments[0]; return s.value === arguments[0]",
            json!([binding]),
        )
        .await;
    assert_eq!(picked, json!(true), "the page offers {binding}");
    b.click("#tabs [data-tab=chat]").await;
    b.click("#new-chat").await;
}

/// The last agent bubble once it shows COMPLETED: its text.
async fn completed_reply(b: &Browser<'_>, what: &str) -> String {
    b.until(
        what,
        "const m = [...document.querySelectorAll('#chat-log .msg.agent')].pop(); return m && m.innerText.includes('COMPLETED') && m.innerText",
        json!([]),
    )
    .await
    .as_str()
    .unwrap()
    .to_owned()
}

#[tokio::test]
async fn the_page_drives_the_python_sdks_sample_agent_over_jsonrpc_and_grpc() {
    let agent = PythonAgent::start().await;
    let inspector = Inspector::bind(Options::default()).await.expect("bind");
    let url = format!("{}&agent={}", inspector.url(), agent.url);
    tokio::spawn(inspector.serve());
    let driver = Driver::start().await;
    let b = driver.session().await;
    b.goto(&url).await;

    b.until(
        "the card",
        "const h = document.getElementById('card-name'); return h && h.innerText",
        json!([]),
    )
    .await;
    let card = b.text("#card-view").await;
    for expected in ["Hello World Agent", "echo_bot", "JSONRPC", "GRPC"] {
        assert!(card.contains(expected), "{expected} in {card}");
    }

    for binding in ["JSONRPC", "GRPC"] {
        pick(&b, binding).await;
        say(&b, "hi", false).await;
        let reply = completed_reply(&b, "the blocking answer").await;
        assert!(
            reply.contains("Hello, World! I have received your request (hi)"),
            "{binding}: {reply}"
        );

        say(&b, "stream me", true).await;
        let reply = completed_reply(&b, "the streamed answer").await;
        assert!(
            reply.contains("Hello, World! I have received your request (stream me)"),
            "{binding}: {reply}"
        );

        // The streamed task's timeline: SUBMITTED, WORKING, COMPLETED as they arrived.
        b.click("#tabs [data-tab=tasks]").await;
        b.click("#list").await;
        let task_id = b
            .js("return window.Inspector.state.task.id", json!([]))
            .await;
        let row = format!("#task-list tr[data-task=\"{}\"]", task_id.as_str().unwrap());
        b.until(
            "the streamed task in the list",
            "return document.querySelector(arguments[0])",
            json!([row]),
        )
        .await;
        b.click(&row).await;
        b.until(
            "the timeline's three states",
            "const h = document.querySelector('#timeline h3'); const t = document.getElementById('timeline-events'); return h && h.innerText.includes(arguments[0]) && t.querySelectorAll('.tl-item.change').length >= 3 && t.innerText.includes('Processing request...')",
            json!([task_id]),
        )
        .await;
        // The SDK gives no event ids: the resume point says so (no Last-Event-ID).
        b.click("#resubscribe").await;
        let mark = b.text("#timeline-events .tl-item.resume").await;
        assert!(mark.contains("no event ids"), "{binding}: {mark}");
        b.until(
            "the resubscribe's outcome",
            "const e = document.getElementById('error'); return (!e.hidden && e.innerText.includes('resubscribe')) || document.querySelector('#timeline-events .tl-item.end')",
            json!([]),
        )
        .await;

        // The wire console: both sends of this binding, answered.
        b.click("#tabs [data-tab=wire]").await;
        for op in ["SendMessage", "SendStreamingMessage"] {
            b.until(
                &format!("{binding} {op} in the wire console"),
                "return [...document.querySelectorAll(`#wire-log .exchange[data-op=${arguments[0]}]`)].some(x => x.dataset.binding === arguments[1] && x.innerText.includes('→ 200'))",
                json!([op, binding]),
            )
            .await;
        }
    }
    b.close().await;
}

/// An agent that starts working and then says nothing more until canceled (which it accepts).
struct Hangs;

impl a2a_server::Agent for Hangs {
    async fn execute(
        &self,
        cx: a2a_server::RequestContext,
        events: a2a_server::TaskEvents,
    ) -> Result<(), a2a_core::Error> {
        events.working("started").await?;
        cx.cancel.cancelled().await;
        Ok(())
    }

    async fn cancel(
        &self,
        _: a2a_server::RequestContext,
        _: a2a_server::TaskEvents,
    ) -> Result<(), a2a_core::Error> {
        Ok(()) // the server stops `execute` through its token and marks the task canceled
    }
}

#[tokio::test]
async fn a_page_of_bad_input_is_clear_messages_and_the_page_stays_usable() {
    let not_agent = serve(axum::Router::new()).await;
    let bad_card = serve(axum::Router::new().route(
        "/.well-known/agent-card.json",
        axum::routing::get(|| async { axum::Json(json!({ "name": 7 })) }),
    ))
    .await;
    let hangs =
        TestServer::start(Hangs, |b| b.agent_card(a2a_server::demo::DemoAgent::card())).await;
    let demo = TestServer::demo().await;
    let mut options = Options::default();
    options.idle_notice = Duration::from_millis(500);
    let inspector = Inspector::bind(options).await.expect("bind");
    let url = inspector.url().to_owned();
    tokio::spawn(inspector.serve());
    let driver = Driver::start().await;
    let b = driver.session().await;
    b.goto(&url).await;

    for (agent, message) in [
        (unreachable_url().await, "cannot reach"),
        (not_agent, "not an A2A agent"),
        (bad_card, "does not parse as an A2A v1.0 AgentCard"),
    ] {
        b.fill("#url", &agent).await;
        b.click("#connect").await;
        let shown = b
            .until(
                message,
                "const e = document.getElementById('error'); return !e.hidden && e.innerText.includes(arguments[0]) && e.innerText",
                json!([message]),
            )
            .await;
        assert!(
            shown.as_str().unwrap().contains(&agent),
            "names the URL: {shown}"
        );
        assert_eq!(b.text("#status").await, "not connected");
    }

    // An agent that hangs mid-stream: the chat says so while it waits, and the page goes on.
    b.fill("#url", &hangs.url).await;
    b.click("#connect").await;
    b.until(
        "connected to the hanging agent",
        "return document.getElementById('status').innerText.startsWith('connected')",
        json!([]),
    )
    .await;
    assert_eq!(
        b.js("return document.getElementById('error').hidden", json!([]))
            .await,
        json!(true)
    );
    pick(&b, "JSONRPC").await;
    say(&b, "anything", true).await;
    b.until(
        "the notice that the agent is quiet",
        "const m = [...document.querySelectorAll('#chat-log .msg.agent')].pop(); return m && m.innerText.includes('WORKING') && m.innerText.includes('has sent nothing')",
        json!([]),
    )
    .await;
    b.click("#tabs [data-tab=tasks]").await;
    b.click("#list").await;
    b.until(
        "the task list while the stream hangs",
        "return document.querySelectorAll('#task-list tr.clickable').length >= 1",
        json!([]),
    )
    .await;
    b.click("#tabs [data-tab=chat]").await;
    b.click("#cancel").await;
    b.until(
        "the hanging task canceled",
        "return [...document.querySelectorAll('#chat-log .state')].some(s => s.innerText === 'CANCELED')",
        json!([]),
    )
    .await;

    // Still usable: a real agent connects and answers.
    b.fill("#url", &demo.url).await;
    b.click("#connect").await;
    b.until(
        "the demo agent's card",
        "return document.getElementById('status').innerText === 'connected: ' + arguments[0]",
        json!([demo.card.name]),
    )
    .await;
    pick(&b, "HTTP+JSON").await;
    say(&b, "hello", false).await;
    let reply = completed_reply(&b, "the demo agent's echo").await;
    assert!(reply.contains("hello"), "{reply}");
    b.close().await;
}
