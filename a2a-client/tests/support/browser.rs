//! WebDriver for `a2a inspect`'s browser test: ChromeDriver (Debian's `chromium-driver`,
//! installed by `tests/interop/setup-browser.sh`) driving headless Chromium, spoken as JSON over
//! HTTP with reqwest; and the official Python SDK's sample agent (`tests/interop/py_helloworld.py`
//! in the venv `tests/interop/setup.sh` installs). A missing browser or SDK that cannot be
//! installed fails the test with the setup script's message; nothing is skipped silently.

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

/// How long the page may take to show what a step waits for.
pub(crate) const STEP: Duration = Duration::from_secs(20);

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("a2a-client/ has a parent")
        .to_path_buf()
}

/// Runs `tests/interop/SCRIPT`, panicking with its output (which names what to install) when
/// it fails.
fn set_up_with(script: &str) {
    let out = std::process::Command::new("bash")
        .arg(repo_root().join("tests/interop").join(script))
        .current_dir(repo_root())
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run bash {script}: {e}"));
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// ChromeDriver on a free port in a process group of its own, which is ended when dropped
/// (Chromium with it, even when a failed step left its session open).
pub(crate) struct Driver {
    child: tokio::process::Child,
    url: String,
    http: reqwest::Client,
}

impl Driver {
    pub(crate) async fn start() -> Self {
        set_up_with("setup-browser.sh");
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

    pub(crate) async fn session(&self) -> Browser<'_> {
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
pub(crate) struct Browser<'d> {
    driver: &'d Driver,
    base: String,
    _profile: tempfile::TempDir,
}

impl Browser<'_> {
    pub(crate) async fn command(&self, method: reqwest::Method, path: &str, body: Value) -> Value {
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

    pub(crate) async fn goto(&self, url: &str) {
        self.command(reqwest::Method::POST, "/url", json!({ "url": url }))
            .await;
    }

    /// Runs `script` (a function body; `arguments` are `args`) in the page.
    pub(crate) async fn js(&self, script: &str, args: Value) -> Value {
        self.command(
            reqwest::Method::POST,
            "/execute/sync",
            json!({ "script": script, "args": args }),
        )
        .await
    }

    /// Waits until `script` returns something truthy; returns it. `what` names it on failure.
    pub(crate) async fn until(&self, what: &str, script: &str, args: Value) -> Value {
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

    pub(crate) async fn click(&self, selector: &str) {
        self.js(
            "const e = document.querySelector(arguments[0]); if (!e) throw new Error('no ' + arguments[0]); e.click(); return true",
            json!([selector]),
        )
        .await;
    }

    pub(crate) async fn fill(&self, selector: &str, text: &str) {
        self.js(
            "const e = document.querySelector(arguments[0]); e.value = arguments[1]; e.dispatchEvent(new Event('input')); return true",
            json!([selector, text]),
        )
        .await;
    }

    pub(crate) async fn text(&self, selector: &str) -> String {
        let v = self
            .js(
                "const e = document.querySelector(arguments[0]); return e ? e.innerText : ''",
                json!([selector]),
            )
            .await;
        v.as_str().unwrap_or_default().to_owned()
    }

    pub(crate) async fn screenshot(&self, name: &str) {
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

    pub(crate) async fn close(self) {
        self.command(reqwest::Method::DELETE, "", Value::Null).await;
    }
}

/// The official Python SDK's helloworld sample agent (`tests/interop/py_helloworld.py`, a2a-sdk
/// 1.3.0 in `.scratch/interop/py1`), serving JSON-RPC and gRPC until dropped.
pub(crate) struct PythonAgent {
    _child: tokio::process::Child,
    /// Its base URL (the card is at `/.well-known/agent-card.json`).
    pub(crate) url: String,
}

impl PythonAgent {
    pub(crate) async fn start() -> Self {
        tokio::task::spawn_blocking(|| set_up_with("setup.sh"))
            .await
            .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()));
        let python = repo_root().join(".scratch/interop/py1/bin/python");
        let mut child = tokio::process::Command::new(&python)
            .arg(repo_root().join("tests/interop/py_helloworld.py"))
            .env("PYTHONUNBUFFERED", "1")
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", python.display()));
        let stdout = child.stdout.take().expect("piped stdout");
        let mut lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(stdout));
        let first = tokio::time::timeout(Duration::from_secs(60), lines.next_line())
            .await
            .expect("py_helloworld.py listening within 60 s")
            .expect("its stdout");
        let port = first
            .as_deref()
            .and_then(|l| l.strip_prefix("LISTENING "))
            .unwrap_or_else(|| panic!("py_helloworld.py printed {first:?}, not `LISTENING <port>`"))
            .trim()
            .to_owned();
        Self {
            _child: child,
            url: format!("http://127.0.0.1:{port}"),
        }
    }
}
