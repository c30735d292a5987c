//! Every shell block of README.md and the guide that starts the server or runs `a2a` is run:
//! each `a2a-server` line starts the debug binary on a free port, each `a2a` line runs against
//! the page's server, and the test fails when a command exits with another code than the one
//! the page implies (0 unless marked), a server or a serving command (`a2a inspect`, `a2a mcp
//! --http`) does not come up, or an output the page promises (`doc-shell: expect`) is missing.
//! Blocks that cannot run here are marked `doc-shell: skip REASON` in the page and listed.
//! The markers and the rewrites (ports, URLs, files): `a2a_e2e::doc_shell`.
//!
//! The binaries are the `a2a-server` and `a2a` of the target directory this test runs from,
//! brought up to date first with `cargo test --workspace --all-features --no-run --test
//! doc_commands` (a no-op after `cargo test --workspace --all-features`, which builds them).

use a2a_e2e::doc_shell::{self, Block, Program};
use a2a_e2e::keys::{self, Kind};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::Notify;
use tokio::task::JoinHandle;

/// How long one command may run, or a server take to come up.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(60);

/// How long bringing the two binaries up to date may take (nothing, after `cargo test
/// --workspace`, which built them; a few minutes when this test runs alone after a change).
const BUILD_TIMEOUT: Duration = Duration::from_secs(1200);

/// The directory holding `a2a-server` and `a2a`, brought up to date first: built as `cargo
/// test --workspace --all-features` builds them (for the `doc_commands` tests of both crates),
/// so that after that command this is only cargo's freshness check.
async fn binaries() -> PathBuf {
    let exe = std::env::current_exe().expect("the test's path");
    // target/<profile>/deps/doc_shell-… → target/<profile>
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("a test binary under target/<profile>/deps")
        .to_path_buf();
    let target = dir.parent().expect("target/<profile> has a parent");
    let mut cargo = Command::new(env!("CARGO"));
    cargo
        .current_dir(doc_shell::root())
        .args([
            "test",
            "--workspace",
            "--all-features",
            "--no-run",
            "--quiet",
        ])
        .args(["--test", "doc_commands", "--target-dir"])
        .arg(target)
        .kill_on_drop(true);
    // Without the variables cargo set for this test (a build script that watches
    // CARGO_MANIFEST_DIR would otherwise rebuild half the dependency tree, then again in the
    // next ordinary build).
    for (name, _) in std::env::vars() {
        let set_for_this_test = [
            "CARGO_MANIFEST_",
            "CARGO_PKG_",
            "CARGO_CRATE_",
            "CARGO_BIN_",
        ]
        .iter()
        .any(|prefix| name.starts_with(prefix))
            || ["CARGO_PRIMARY_PACKAGE", "CARGO_TARGET_TMPDIR"].contains(&name.as_str());
        if set_for_this_test {
            cargo.env_remove(name);
        }
    }
    if dir.file_name().is_some_and(|n| n == "release") {
        cargo.arg("--release");
    }
    let status = tokio::time::timeout(BUILD_TIMEOUT, cargo.status())
        .await
        .unwrap_or_else(|_| panic!("building a2a-server and a2a took over {BUILD_TIMEOUT:?}"))
        .expect("cargo runs");
    assert!(status.success(), "building a2a-server and a2a failed");
    dir
}

/// Everything a serving command wrote on stdout and stderr, as it comes.
#[derive(Default)]
struct Output {
    text: Mutex<String>,
    /// Woken at each line.
    changed: Notify,
}

impl Output {
    fn text(&self) -> String {
        self.text.lock().expect("output").clone()
    }
}

fn drain(pipe: impl AsyncRead + Unpin + Send + 'static, into: Arc<Output>) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut lines = BufReader::new(pipe).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            {
                let mut out = into.text.lock().expect("output");
                out.push_str(&line);
                out.push('\n');
            }
            into.changed.notify_waiters();
        }
    })
}

/// A command that serves until killed: a server, `a2a inspect`, `a2a mcp --http`.
struct Serving {
    child: Child,
    output: Arc<Output>,
    /// The `http://…` it announced.
    url: String,
}

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

/// One page's run: its directory, environment and current server.
struct Page {
    dir: tempfile::TempDir,
    path: String,
    server: Option<Serving>,
    /// The PostgreSQL schema of the page's `--postgres` servers, once one ran.
    schema: Option<String>,
    report: Report,
}

/// What the run found.
#[derive(Default)]
struct Report {
    failures: Vec<String>,
    ran: usize,
    skipped: Vec<String>,
    not_run: Vec<String>,
}

impl Page {
    fn new(bins: &Path) -> Self {
        let dir = tempfile::tempdir().expect("a temp dir");
        // The files the pages name: signing keys and a trusted public key.
        let ec = keys::pem(Kind::Es256);
        std::fs::write(dir.path().join("ec.pem"), ec).expect("write ec.pem");
        std::fs::write(dir.path().join("ed25519.pem"), keys::pem(Kind::EdDsa))
            .expect("write ed25519.pem");
        let public = {
            use p256::pkcs8::{DecodePrivateKey as _, EncodePublicKey as _};
            p256::SecretKey::from_pkcs8_pem(ec)
                .expect("a P-256 key")
                .public_key()
                .to_public_key_pem(Default::default())
                .expect("PEM")
        };
        std::fs::write(dir.path().join("their-public-key.pem"), public)
            .expect("write their-public-key.pem");
        let path = format!(
            "{}:{}",
            bins.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        Self {
            dir,
            path,
            server: None,
            schema: None,
            report: Report::default(),
        }
    }

    /// `sh -c line` in the page's directory and environment.
    fn shell(&self, line: &str) -> Command {
        let mut command = Command::new("sh");
        command
            .arg("-c")
            .arg(line)
            .current_dir(self.dir.path())
            .env("PATH", &self.path)
            .env("TOKEN", "doc-shell-token")
            .env("KEY", "doc-shell-key")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        for (name, _) in std::env::vars() {
            if name.starts_with("A2A_") {
                command.env_remove(name);
            }
        }
        command
    }

    /// Starts `line` (rewritten to `exec` its program) and waits for the `http://` URL it
    /// announces on a line containing `announce`.
    async fn serve(
        &self,
        line: &str,
        announce: &str,
        env: &[(&str, &str)],
    ) -> Result<Serving, String> {
        let mut command = self.shell(&format!("exec {line}"));
        for (name, value) in env {
            command.env(name, value);
        }
        let mut child = command.spawn().map_err(|e| format!("`{line}`: {e}"))?;
        let output = Arc::new(Output::default());
        let drains = [
            drain(child.stdout.take().expect("stdout"), output.clone()),
            drain(child.stderr.take().expect("stderr"), output.clone()),
        ];
        let deadline = tokio::time::Instant::now() + COMMAND_TIMEOUT;
        loop {
            // Created before the check, so that a line written in between still wakes it
            // (`notify_waiters` wakes every `Notified` created before it).
            let watch = output.clone();
            let changed = watch.changed.notified();
            let announced = output
                .text()
                .lines()
                .find(|l| l.contains(announce))
                .and_then(|l| l.split_whitespace().find(|w| w.starts_with("http://")))
                .map(str::to_owned);
            if let Some(url) = announced {
                return Ok(Serving { child, output, url });
            }
            tokio::select! {
                () = changed => {}
                status = child.wait() => {
                    // The drains take the last lines (they end at the pipes' end).
                    let _ = tokio::time::timeout(COMMAND_TIMEOUT, futures::future::join_all(drains)).await;
                    let status = status.map_or_else(|e| e.to_string(), |s| s.to_string());
                    return Err(format!("`{line}` ended ({status}) before serving:\n{}", output.text()));
                }
                () = tokio::time::sleep_until(deadline) => {
                    return Err(format!("`{line}` did not serve within {COMMAND_TIMEOUT:?}:\n{}", output.text()));
                }
            }
        }
    }

    /// Starts the `a2a-server` line as the page's server (stopping the previous one, which
    /// a reader would stop too: the two would share ./a2a-data).
    async fn start_server(&mut self, line: &str) -> Result<(), String> {
        self.stop_server().await;
        let line = doc_shell::server_line(line);
        let mut env = Vec::new();
        if let Some(schema) = &self.schema {
            env.push(("A2A_POSTGRES_SCHEMA", schema.as_str()));
        }
        let server = self.serve(&line, "a2a-server listening on", &env).await?;
        // The agent card answers: the server is up, not only listening.
        let card = format!("{}/.well-known/agent-card.json", server.url);
        let status = reqwest::get(&card)
            .await
            .map_err(|e| format!("{card}: {e}"))?
            .status();
        if !status.is_success() {
            return Err(format!("`{line}`: {card} answered {status}"));
        }
        self.server = Some(server);
        Ok(())
    }

    /// Stops the page's server and waits for it to be gone (its files unlocked).
    async fn stop_server(&mut self) {
        if let Some(mut server) = self.server.take() {
            let _ = tokio::time::timeout(COMMAND_TIMEOUT, server.child.kill()).await;
        }
    }

    /// The URL of the page's server, starting the demo agent when there is none.
    async fn server_url(&mut self) -> Result<String, String> {
        if self.server.is_none() {
            self.start_server("a2a-server --memory").await?;
        }
        Ok(self.server.as_ref().expect("a server").url.clone())
    }

    /// A task that is still running, for a line that names `TASK_ID`.
    async fn running_task(&self, url: &str) -> Result<String, String> {
        let line = format!("a2a send {url} 'countdown 20' --no-wait --json");
        let (code, out) = self.run(&line, None).await?;
        if code != 0 {
            return Err(format!("`{line}` exited with {code}:\n{out}"));
        }
        let value: serde_json::Value = out
            .lines()
            .find_map(|l| serde_json::from_str(l).ok())
            .ok_or_else(|| format!("`{line}` printed no JSON:\n{out}"))?;
        let id = value
            .pointer("/task/id")
            .or_else(|| value.pointer("/id"))
            .and_then(|v| v.as_str())
            .ok_or_else(|| format!("`{line}` printed no task id:\n{out}"))?;
        Ok(id.to_owned())
    }

    /// Runs `line` to its end, `stdin` on its standard input: its exit code and output.
    async fn run(&self, line: &str, stdin: Option<&str>) -> Result<(i32, String), String> {
        let mut command = self.shell(line);
        if stdin.is_some() {
            command.stdin(Stdio::piped());
        }
        let mut child = command.spawn().map_err(|e| format!("`{line}`: {e}"))?;
        if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
            let text = text.to_owned();
            // Written beside the run (a command that does not read it must not block us),
            // then closed: the end of input.
            tokio::spawn(async move {
                use tokio::io::AsyncWriteExt as _;
                let _ = pipe.write_all(text.as_bytes()).await;
            });
        }
        let out = tokio::time::timeout(COMMAND_TIMEOUT, child.wait_with_output())
            .await
            .map_err(|_| format!("`{line}` did not end within {COMMAND_TIMEOUT:?}"))?
            .map_err(|e| format!("`{line}`: {e}"))?;
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        Ok((out.status.code().unwrap_or(-1), text))
    }

    /// Runs one block; its failures go into the report.
    async fn block(&mut self, block: &Block) {
        if let Some(why) = &block.skip {
            self.report.skipped.push(format!("{}: {why}", block.place));
            return;
        }
        let mut output = String::new();
        if let Some(args) = &block.server
            && let Err(e) = self.start_server(&format!("a2a-server {args}")).await
        {
            self.report.failures.push(format!("{}: {e}", block.place));
            return;
        }
        for command in &block.commands {
            let result = match doc_shell::program(&command.text) {
                None => {
                    self.report
                        .not_run
                        .push(format!("{}: {}", command.place, command.text));
                    continue;
                }
                Some(Program::Server(line))
                    if line.contains("--postgres") && self.schema.is_none() =>
                {
                    let schema = format!("a2a_doc_shell_{}", uuid::Uuid::new_v4().simple());
                    if !postgres(&schema).await {
                        let why = "no PostgreSQL (A2A_REQUIRE_POSTGRES=1 makes this a failure)";
                        self.report
                            .skipped
                            .push(format!("{}: {why}", command.place));
                        return;
                    }
                    self.schema = Some(schema);
                    self.start_server(&line)
                        .await
                        .map(|()| self.server.as_ref().expect("started").output.text())
                }
                Some(Program::Server(line)) => self
                    .start_server(&line)
                    .await
                    .map(|()| self.server.as_ref().expect("started").output.text()),
                Some(Program::Client(line)) => self.client(block, &line).await,
            };
            self.report.ran += 1;
            match result {
                Ok(out) => output.push_str(&out),
                Err(e) => {
                    self.report.failures.push(format!("{}: {e}", command.place));
                    return;
                }
            }
        }
        for text in &block.expect {
            if !output.contains(text.as_str()) {
                self.report.failures.push(format!(
                    "{}: the output has no {text:?}:\n{output}",
                    block.place
                ));
            }
        }
    }

    /// Runs one `a2a` line against the page's server: its output, or why it failed.
    async fn client(&mut self, block: &Block, line: &str) -> Result<String, String> {
        let url = self.server_url().await?;
        let task = if line.split(' ').any(|w| w == "TASK_ID") {
            Some(self.running_task(&url).await?)
        } else {
            None
        };
        let line = doc_shell::client_line(line, &url, task.as_deref());
        if doc_shell::serves(&line) {
            let serving = self.serve(&line, "http://", &[]).await?;
            if line.split_whitespace().nth(1) == Some("inspect") {
                let status = reqwest::get(&serving.url)
                    .await
                    .map_err(|e| format!("`{line}`: {}: {e}", serving.url))?
                    .status();
                if !status.is_success() {
                    return Err(format!("`{line}`: {} answered {status}", serving.url));
                }
            }
            return Ok(serving.output.text());
        }
        let (code, out) = self.run(&line, block.stdin.as_deref()).await?;
        let want = block.exit_code(&line);
        if code != want {
            return Err(format!("`{line}` exited with {code}, not {want}:\n{out}"));
        }
        Ok(out)
    }

    /// Stops the page's server and drops the PostgreSQL schemas it used.
    async fn finish(mut self) -> Report {
        self.stop_server().await;
        if let Some(schema) = &self.schema {
            drop_schema(schema).await;
        }
        self.report
    }
}

/// The PostgreSQL server the pages name (the project machines' one).
const POSTGRES: &str = "postgres://postgres@127.0.0.1:5432/test";

/// Whether PostgreSQL answers at [`POSTGRES`] (making `schema` there); a failure when it
/// does not and `A2A_REQUIRE_POSTGRES=1` (as in CI).
async fn postgres(schema: &str) -> bool {
    use a2a_server::postgres::{PgOptions, PgStore};
    let options = PgOptions {
        schema: Some(schema.to_owned()),
        pool_size: 1,
        ..PgOptions::default()
    };
    match PgStore::connect_with(POSTGRES, options).await {
        Ok(_) => true,
        Err(e) if std::env::var("A2A_REQUIRE_POSTGRES").is_ok_and(|v| v == "1") => {
            panic!("PostgreSQL at {POSTGRES} is required (A2A_REQUIRE_POSTGRES=1) but: {e}")
        }
        Err(e) => {
            eprintln!("doc_shell: no PostgreSQL at {POSTGRES} ({e})");
            false
        }
    }
}

/// Drops a schema a `--postgres` server made.
async fn drop_schema(schema: &str) {
    use a2a_server::postgres::{PgOptions, PgStore};
    let url = POSTGRES;
    let options = PgOptions {
        schema: Some(schema.to_owned()),
        pool_size: 1,
        ..PgOptions::default()
    };
    if let Ok(store) = PgStore::connect_with(url, options).await {
        let _ = store.drop_schema().await;
    }
}

#[test]
fn doc_shell_markers_are_all_well_formed() {
    let blocks = doc_shell::blocks().unwrap_or_else(|e| panic!("{e}"));
    assert!(
        blocks.len() >= 20,
        "only {} shell blocks found",
        blocks.len()
    );
    for block in &blocks {
        if block.skip.is_some() && !(block.expect.is_empty() && block.exits.is_empty()) {
            panic!("{}: a skipped block with expectations", block.place);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_documented_server_and_a2a_command_runs() {
    let started = Instant::now();
    let bins = binaries().await;
    let blocks = doc_shell::blocks().unwrap_or_else(|e| panic!("{e}"));
    // Pages run side by side, each with its own directory and servers.
    let mut pages: Vec<(String, Vec<Block>)> = Vec::new();
    for block in blocks {
        match pages.last_mut() {
            Some((page, list)) if *page == block.page => list.push(block),
            _ => pages.push((block.page.clone(), vec![block])),
        }
    }
    let runs = pages.into_iter().map(|(_, blocks)| {
        let bins = bins.clone();
        tokio::spawn(async move {
            let mut page = Page::new(&bins);
            for block in &blocks {
                page.block(block).await;
            }
            page.finish().await
        })
    });
    let mut report = Report::default();
    for run in runs.collect::<Vec<_>>() {
        let page = run.await.expect("a page's run");
        report.failures.extend(page.failures);
        report.ran += page.ran;
        report.skipped.extend(page.skipped);
        report.not_run.extend(page.not_run);
    }
    let mut summary = format!(
        "doc_shell: {} command lines run in {:.1?}\n",
        report.ran,
        started.elapsed()
    );
    let _ = writeln!(summary, "blocks not run (marked in the page):");
    for line in &report.skipped {
        let _ = writeln!(summary, "  {line}");
    }
    let _ = writeln!(
        summary,
        "lines that run neither a2a-server nor a2a (not run):"
    );
    for line in &report.not_run {
        let _ = writeln!(summary, "  {line}");
    }
    eprintln!("{summary}");
    assert!(report.ran >= 30, "only {} command lines ran", report.ran);
    assert!(
        report.failures.is_empty(),
        "documented commands that failed:\n\n{}",
        report.failures.join("\n\n")
    );
}
