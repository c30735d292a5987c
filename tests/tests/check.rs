//! `a2a_client::check` (what `a2a check URL` runs) against our demo server, which must pass
//! every check on every binding it serves, and against a deliberately broken agent
//! (`a2a_e2e::broken`), whose findings are pinned: a change in what the checker reports shows
//! up here.

use a2a_client::check::{self, Group, Level, Options, Report, Verdict};
use a2a_e2e::broken::BrokenAgent;
use a2a_e2e::broken_generations::{BrokenGenerations, Fault};
use a2a_server::auth::BearerTokens;
use a2a_server::demo::DemoAgent;
use a2a_server::push::PushSettings;
use a2a_server::{Server, ServerBuilder};
use reqwest::header::{AUTHORIZATION, HeaderValue};
use std::time::{Duration, Instant};
use tokio::task::JoinHandle;

/// Options for a local agent: no pacing to speak of, a deadline well above a run's length, and
/// the demo agent's countdown for the long-poll check.
fn local() -> Options {
    let mut o = Options::default();
    o.rate = 500.0;
    o.deadline = Duration::from_secs(60);
    o.long_task = Some("countdown 5".to_owned());
    o
}

/// The demo server as the binary serves it, on one port (gRPC beside HTTP), webhooks to
/// 127.0.0.1 allowed so that the push checks can create configs.
struct Demo {
    url: String,
    serving: JoinHandle<()>,
}

impl Demo {
    async fn start(configure: impl FnOnce(ServerBuilder) -> ServerBuilder) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let url = format!("http://{}", listener.local_addr().expect("local address"));
        let push = PushSettings::default()
            .allow("127.0.0.1")
            .expect("a valid allow rule");
        let builder = Server::builder(DemoAgent)
            .agent_card(DemoAgent::card())
            .public_url(&url)
            .push_notifications(push);
        let server = configure(builder).build().expect("the demo server builds");
        let serving = tokio::spawn(async move {
            server.serve(listener).await.expect("the server runs");
        });
        Self { url, serving }
    }
}

impl Drop for Demo {
    fn drop(&mut self) {
        self.serving.abort();
    }
}

fn bindings(report: &Report) -> Vec<&'static str> {
    let mut b: Vec<&'static str> = report.findings.iter().filter_map(|f| f.binding).collect();
    b.dedup();
    b
}

/// Every finding that is not a pass, in full (for assertion messages).
fn not_passed(report: &Report) -> String {
    report
        .findings
        .iter()
        .filter(|f| f.verdict != Verdict::Pass)
        .map(|f| format!("{}: {}\n", f.line(), f.detail))
        .collect()
}

#[tokio::test]
async fn our_demo_server_passes_every_check_on_every_binding() {
    let demo = Demo::start(|b| b).await;
    let report = check::run(&demo.url, &local()).await;
    assert!(report.passed(), "{}", report.table());
    assert_eq!(bindings(&report), ["JSONRPC", "HTTP+JSON", "GRPC"]);
    // Nothing fails, at any level; the only skips are the auth checks (the card declares no
    // security) and the v0.3 card shape (no v0.3 interface declared).
    let skipped: Vec<&str> = report
        .findings
        .iter()
        .filter(|f| f.verdict == Verdict::Skip)
        .map(|f| f.check.id)
        .collect();
    assert!(report.failures().is_empty(), "{}", not_passed(&report));
    assert!(
        skipped
            .iter()
            .all(|id| id.starts_with("auth.") || *id == "card.v03-shape"),
        "{}",
        not_passed(&report)
    );
    // Every check of the catalogue ran (or was skipped for a stated reason) somewhere.
    for c in check::catalog::ALL {
        let applies = !matches!(
            c.id,
            // The demo declares streaming and push, so the "not declared" checks do not apply.
            "streaming.not-declared" | "push.not-declared"
        );
        let found = report.findings.iter().any(|f| f.check.id == c.id);
        assert_eq!(found, applies, "{}", c.id);
    }
    // The JSON form carries the same verdict and one finding per line of the table.
    let json = report.to_json();
    assert_eq!(json["passed"], true);
    assert_eq!(
        json["findings"].as_array().map(Vec::len),
        Some(report.findings.len())
    );
    assert_eq!(json["summary"]["GRPC"]["MUST"]["fail"], 0);
}

#[tokio::test]
async fn an_agent_that_wants_credentials_is_checked_with_them_and_refuses_without() {
    let demo = Demo::start(|b| b.authenticator(BearerTokens::each_its_own(["s3cret"]))).await;

    let mut options = local();
    options
        .headers
        .insert(AUTHORIZATION, HeaderValue::from_static("Bearer s3cret"));
    let report = check::run(&demo.url, &options).await;
    assert!(report.passed(), "{}", report.table());
    assert!(report.failures().is_empty(), "{}", not_passed(&report));
    for binding in ["JSONRPC", "HTTP+JSON", "GRPC"] {
        let auth: Vec<String> = report
            .findings
            .iter()
            .filter(|f| f.check.group == Group::Auth && f.binding == Some(binding))
            .map(|f| f.line())
            .collect();
        // gRPC has no WWW-Authenticate to look for.
        let expected = match binding {
            "GRPC" => vec![format!("pass MUST {binding} auth.required")],
            _ => vec![
                format!("pass MUST {binding} auth.required"),
                format!("pass SHOULD {binding} auth.challenge"),
            ],
        };
        assert_eq!(auth, expected);
    }

    // Without the token nothing past the card can be checked: the run says so, and does not
    // pass.
    let report = check::run(&demo.url, &local()).await;
    assert!(!report.passed());
    assert!(!report.complete());
    assert_eq!(report.gaps.len(), 3, "{:?}", report.gaps);
    assert!(report.gaps[0].contains("--token"), "{:?}", report.gaps);
    assert!(report.failures().is_empty(), "{}", not_passed(&report));
}

/// What the checker must find wrong with `a2a_e2e::broken` (its module doc lists the faults).
const BROKEN_FINDINGS: &[&str] = &[
    // No description, version or skills; no caching headers; no legacy path.
    "FAIL MUST card card.required",
    "FAIL SHOULD card card.cache-control",
    "FAIL SHOULD card card.etag",
    "FAIL MAY card card.legacy-path",
    // -32600 for a body that is not JSON, -32603 for an unknown method, any A2A-Version.
    "FAIL MUST JSONRPC errors.malformed-json",
    "FAIL MUST JSONRPC errors.unknown-method",
    "FAIL MUST JSONRPC errors.unsupported-version",
    // ListTasks is not there at all.
    "FAIL SHOULD JSONRPC errors.page-size",
    "FAIL SHOULD JSONRPC errors.page-token",
    // historyLength ignored (0 still gives history; -1 is not refused).
    "FAIL MUST JSONRPC tasks.history-length",
    "FAIL MUST JSONRPC tasks.list",
    "FAIL MUST JSONRPC tasks.pagination",
    "FAIL SHOULD JSONRPC errors.history-length",
    // The stream never closes; a finished task can be subscribed to.
    "FAIL MUST JSONRPC streaming.closes",
    "FAIL MUST JSONRPC streaming.subscribe-finished",
    // Push is not declared, and its methods are unknown (-32603).
    "FAIL MUST JSONRPC push.not-declared",
    // TaskNotFound without an ErrorInfo (a SHOULD over JSON-RPC).
    "FAIL SHOULD JSONRPC errors.error-info",
];

#[tokio::test]
async fn a_broken_agent_gets_exactly_the_expected_findings_within_its_deadline() {
    let agent = BrokenAgent::start().await;
    let started = Instant::now();
    let report = check::run(&agent.url, &local()).await;
    // The never-closing stream costs the checker its linger time, not the stream's life.
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    assert!(report.complete(), "{:?}", report.gaps);
    assert!(!report.passed());
    assert_eq!(report.failures(), BROKEN_FINDINGS, "{}", report.table());

    // Each failure shows what was sent and what came back.
    let closes = report
        .findings
        .iter()
        .find(|f| f.check.id == "streaming.closes")
        .expect("a streaming.closes finding");
    assert_eq!(closes.level, Level::Must);
    assert!(closes.detail.contains("stayed open"), "{}", closes.detail);
    let got = closes.response.as_deref().unwrap_or_default();
    assert!(got.contains("TASK_STATE_COMPLETED"), "{got}");
    assert!(got.contains("still open"), "{got}");
    let sent = closes.request.as_deref().unwrap_or_default();
    assert!(sent.contains("SendStreamingMessage"), "{sent}");
    assert!(sent.contains("\"a2a-check\":true"), "{sent}");
}

#[tokio::test]
async fn a_run_that_hits_its_deadline_ends_on_time_and_says_what_did_not_run() {
    let agent = BrokenAgent::start().await;
    let mut options = local();
    // Long enough for the card, too short for the stream that never closes.
    options.deadline = Duration::from_millis(1500);
    let started = Instant::now();
    let report = check::run(&agent.url, &options).await;
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert!(!report.complete());
    assert!(!report.passed());
    assert!(report.gaps[0].contains("deadline"), "{:?}", report.gaps);
    let cut: Vec<&str> = report
        .findings
        .iter()
        .filter(|f| f.detail.contains("deadline"))
        .map(|f| f.check.id)
        .collect();
    assert!(cut.contains(&"streaming.subscribe-finished"), "{cut:?}");
}

#[tokio::test]
async fn only_and_bindings_narrow_the_run() {
    let demo = Demo::start(|b| b).await;
    let mut options = local();
    options.only = vec![Group::Card, Group::Errors];
    options.bindings = vec!["HTTP+JSON"];
    let report = check::run(&demo.url, &options).await;
    assert!(report.passed(), "{}", report.table());
    assert!(
        report
            .findings
            .iter()
            .all(|f| matches!(f.check.group, Group::Card | Group::Errors)),
        "{}",
        report.table()
    );
    assert_eq!(bindings(&report), ["HTTP+JSON"]);
}

#[tokio::test]
async fn the_generations_checks_run_on_every_1_1_interface_and_pass_on_ours() {
    let demo = Demo::start(|b| b).await;
    let mut options = local();
    options.only = vec![Group::Generations];
    let report = check::run(&demo.url, &options).await;
    assert!(report.passed(), "{}", report.table());
    let lines: Vec<String> = report.findings.iter().map(|f| f.line()).collect();
    let mut expected = Vec::new();
    for binding in ["JSONRPC", "HTTP+JSON", "GRPC"] {
        for (level, id) in [
            ("MUST", "present"),
            ("MUST", "gap-free"),
            ("MUST", "poll-past"),
            ("MUST", "mismatch"),
            ("SHOULD", "poll-holds"),
        ] {
            expected.push(format!("pass {level} {binding} generations.{id}"));
        }
    }
    assert_eq!(lines, expected, "{}", report.table());
    let held = report
        .findings
        .iter()
        .find(|f| f.check.id == "generations.poll-holds")
        .expect("a poll-holds finding");
    assert!(held.detail.starts_with("held "), "{}", held.detail);

    // Without a task that lasts, the hold cannot be seen: skipped, saying what to pass.
    options.long_task = None;
    options.bindings = vec!["JSONRPC"];
    let report = check::run(&demo.url, &options).await;
    assert!(report.passed(), "{}", report.table());
    let skipped: Vec<&str> = (report.findings.iter())
        .filter(|f| f.verdict == Verdict::Skip)
        .map(|f| f.detail.as_str())
        .collect();
    assert_eq!(skipped.len(), 1, "{}", report.table());
    assert!(skipped[0].contains("--long-task"), "{skipped:?}");
}

#[tokio::test]
async fn an_agent_without_a_1_1_interface_gets_the_generations_checks_skipped() {
    let agent = BrokenAgent::start().await;
    let mut options = local();
    options.only = vec![Group::Generations];
    let report = check::run(&agent.url, &options).await;
    let lines: Vec<String> = report.findings.iter().map(|f| f.line()).collect();
    assert_eq!(lines.len(), 5, "{}", report.table());
    assert!(
        report.findings.iter().all(|f| f.verdict == Verdict::Skip
            && f.detail
                .contains("no JSONRPC interface with protocol version 1.1")),
        "{}",
        report.table()
    );
}

#[tokio::test]
async fn each_broken_1_1_behaviour_fails_its_own_check() {
    for (fault, failed) in [
        (Fault::NoGeneration, "FAIL MUST JSONRPC generations.present"),
        (Fault::Gaps, "FAIL MUST JSONRPC generations.gap-free"),
        (Fault::NoHold, "FAIL SHOULD JSONRPC generations.poll-holds"),
        (
            Fault::NoPrecondition,
            "FAIL MUST JSONRPC generations.mismatch",
        ),
    ] {
        let agent = BrokenGenerations::start(fault).await;
        let mut options = local();
        options.only = vec![Group::Generations];
        options.bindings = vec!["JSONRPC"];
        let report = check::run(&agent.url, &options).await;
        assert!(report.complete(), "{fault:?}: {:?}", report.gaps);
        assert_eq!(report.failures(), [failed], "{fault:?}: {}", report.table());
        let finding = (report.findings.iter())
            .find(|f| f.verdict == Verdict::Fail)
            .expect("the failure");
        assert!(finding.request.is_some() && finding.response.is_some());
        assert_eq!(
            report.passed(),
            fault == Fault::NoHold,
            "{fault:?}: a SHOULD"
        );
    }
}
