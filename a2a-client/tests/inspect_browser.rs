//! `a2a inspect` in a real browser: headless Chromium driven through ChromeDriver (Debian's
//! `chromium` and `chromium-driver`, installed by `tests/interop/setup-browser.sh`, which
//! `tests/interop/setup.sh` runs) against the demo agent, over each binding: connect and read
//! the card, stream `countdown 3` and see its three chunks and the completed state, answer
//! `greet` in the page, open the task's timeline, cancel a countdown, find the requests in the
//! wire console; and run `a2a check` from the page.
//!
//! WebDriver is JSON over HTTP, spoken here with reqwest. A missing browser that cannot be
//! installed fails the test with the setup script's message; nothing is skipped silently.
//! With `INSPECT_SCREENSHOTS=DIR`, screenshots of the main views are written to DIR.

mod common;

use a2a_client::inspect::{Inspector, Options};
use common::TestServer;
use serde_json::{Value, json};
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

/// How long the page may take to show what a step waits for.
const STEP: Duration = Duration::from_secs(20);

fn set_up() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/interop/setup-browser.sh");
    let out = std::process::Command::new("bash")
        .arg(script)
        .output()
        .expect("run setup-browser.sh");
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// ChromeDriver on a free port in a process group of its own, which is ended when dropped
/// (Chromium with it, even when a failed step left its session open).
struct Driver {
    child: tokio::process::Child,
    url: String,
    http: reqwest::Client,
}

impl Driver {
    async fn start() -> Self {
        set_up();
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let driver = std::env::var("CHROMEDRIVER").unwrap_or_else(|_| "chromedriver".into());
        let child = tokio::process::Command::new(driver)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .process_group(0)
            .spawn()
            .expect("start chromedriver");
        let url = format!("http://127.0.0.1:{port}");
        let http = reqwest::Client::new();
        let ready = async {
            loop {
                if let Ok(r) = http.get(format!("{url}/status")).send().await
                    && r.status().is_success()
                {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        };
        tokio::time::timeout(STEP, ready)
            .await
            .expect("chromedriver ready");
        Self { child, url, http }
    }

    async fn session(&self) -> Browser<'_> {
        let dir = tempfile::tempdir().expect("profile dir");
        let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
        let caps = json!({ "capabilities": { "alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": chromium,
                "args": ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                    "--no-first-run", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync",
                    "--window-size=1280,900",
                    format!("--user-data-dir={}", dir.path().display())],
            },
        }}});
        let answer: Value = tokio::time::timeout(
            Duration::from_secs(60),
            self.http
                .post(format!("{}/session", self.url))
                .json(&caps)
                .send(),
        )
        .await
        .expect("session in time")
        .expect("chromedriver answers")
        .json()
        .await
        .expect("JSON");
        let id = answer["value"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session: {answer}"))
            .to_owned();
        Browser {
            driver: self,
            base: format!("{}/session/{id}", self.url),
            _profile: dir,
        }
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        if let Some(pid) = self.child.id() {
            let _ = std::process::Command::new("kill")
                .args(["-TERM", "--", &format!("-{pid}")])
                .status();
        }
        let _ = self.child.start_kill();
    }
}

/// One browser session.
struct Browser<'d> {
    driver: &'d Driver,
    base: String,
    _profile: tempfile::TempDir,
}

impl Browser<'_> {
    async fn command(&self, method: reqwest::Method, path: &str, body: Value) -> Value {
        let request = self
            .driver
            .http
            .request(method, format!("{}{path}", self.base));
        let request = if body.is_null() {
            request
        } else {
            request.json(&body)
        };
        let answer: Value = tokio::time::timeout(STEP, async {
            request
                .send()
                .await
                .expect("webdriver")
                .json()
                .await
                .expect("JSON")
        })
        .await
        .unwrap_or_else(|_| panic!("webdriver {path} timed out"));
        answer["value"].clone()
    }

    async fn goto(&self, url: &str) {
        self.command(reqwest::Method::POST, "/url", json!({ "url": url }))
            .await;
    }

    /// Runs `script` (a function body; `arguments` are `args`) in the page.
    async fn js(&self, script: &str, args: Value) -> Value {
        self.command(
            reqwest::Method::POST,
            "/execute/sync",
            json!({ "script": script, "args": args }),
        )
        .await
    }

    /// Waits until `script` returns something truthy; returns it. `what` names it on failure.
    async fn until(&self, what: &str, script: &str, args: Value) -> Value {
        let wait = async {
            loop {
                let v = self.js(script, args.clone()).await;
                if !(v.is_null() || v == json!(false) || v == json!("") || v == json!(0)) {
                    return v;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        };
        match tokio::time::timeout(STEP, wait).await {
            Ok(v) => v,
            Err(_) => {
                let page = self.js("return document.body.innerText", json!([])).await;
                panic!("timed out waiting for {what}; the page shows:\n{page}")
            }
        }
    }

    async fn click(&self, selector: &str) {
        self.js(
            "const e = document.querySelector(arguments[0]); if (!e) throw new Error('no ' + arguments[0]); e.click(); return true",
            json!([selector]),
        )
        .await;
    }

    async fn fill(&self, selector: &str, text: &str) {
        self.js(
            "const e = document.querySelector(arguments[0]); e.value = arguments[1]; e.dispatchEvent(new Event('input')); return true",
            json!([selector, text]),
        )
        .await;
    }

    async fn text(&self, selector: &str) -> String {
        let v = self
            .js(
                "const e = document.querySelector(arguments[0]); return e ? e.innerText : ''",
                json!([selector]),
            )
            .await;
        v.as_str().unwrap_or_default().to_owned()
    }

    async fn screenshot(&self, name: &str) {
        let Ok(dir) = std::env::var("INSPECT_SCREENSHOTS") else {
            return;
        };
        use base64::Engine as _;
        let png = self
            .command(reqwest::Method::GET, "/screenshot", Value::Null)
            .await;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(png.as_str().expect("base64 PNG"))
            .expect("PNG");
        std::fs::write(Path::new(&dir).join(format!("{name}.png")), bytes).expect("write PNG");
    }

    async fn close(self) {
        self.command(reqwest::Method::DELETE, "", Value::Null).await;
    }
}

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
    b.click(&format!(
        "#task-list tr[data-task=\"{}\"]",
        task_id.as_str().unwrap()
    ))
    .await;
    b.until(
        "the timeline's state changes",
        "return document.querySelectorAll('#timeline-events .tl-item.change').length >= 2",
        json!([]),
    )
    .await;
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

    // A bad URL is a clear message, and the page stays usable.
    b.fill("#url", "http://127.0.0.1:9").await;
    b.click("#connect").await;
    b.until("the error", "const e = document.getElementById('error'); return !e.hidden && e.innerText.includes('cannot reach')", json!([]))
        .await;
    b.close().await;
}
