//! The `a2a` command against a hostile agent (`common::hostile`): `card`, `card --jwks`, `send`,
//! `stream` and `mcp` each fail within their limit (size or time) with a message naming the
//! flag that raises it, and the process stays under [`MAX_RSS`] however much the agent
//! declares or sends.

mod common;

use a2a_core::{BINDING_GRPC, BINDING_HTTP_JSON, BINDING_JSONRPC};
use common::hostile::{Attack, HostileAgent, Target};
use common::within;
use rmcp::ServiceExt as _;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::{ConfigureCommandExt as _, TokioChildProcess};
use std::time::{Duration, Instant};

/// The most memory (resident set) one run of `a2a` may take.
const MAX_RSS: u64 = 100 << 20;
/// How much later than its limit a failure may come (a loaded machine).
const SLACK: Duration = Duration::from_secs(3);

/// What a run of `a2a` did.
#[derive(Debug)]
struct Run {
    code: i32,
    stderr: String,
    took: Duration,
    /// Its peak resident set, in bytes.
    max_rss: u64,
}

impl Run {
    /// Asserts the run failed as unreachable (4), naming `flag`, within `limit` and
    /// [`MAX_RSS`].
    fn failed_naming(&self, flag: &str, limit: Duration) {
        assert_eq!(self.code, 4, "{self:#?}");
        assert!(self.stderr.contains(flag), "{self:#?}");
        assert!(self.took < limit + SLACK, "{self:#?}");
        assert!(self.max_rss < MAX_RSS, "{self:#?}");
    }
}

/// Runs `a2a args…`, measuring its peak resident set: with GNU time where there is one, else
/// by reading `VmHWM` from /proc while it runs.
async fn a2a(args: &[&str]) -> Run {
    let gnu_time = std::path::Path::new("/usr/bin/time");
    let started = Instant::now();
    let mut command = if gnu_time.exists() {
        let mut c = tokio::process::Command::new(gnu_time);
        c.args(["-f", "max-rss-kib %M", env!("CARGO_BIN_EXE_a2a")]);
        c
    } else {
        tokio::process::Command::new(env!("CARGO_BIN_EXE_a2a"))
    };
    command
        .args(args)
        .env_remove("A2A_TOKEN")
        .env_remove("A2A_API_KEY")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    let child = command.spawn().expect("a2a starts");
    let pid = child.id().expect("a pid");
    let polled = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let poller = {
        let polled = polled.clone();
        tokio::spawn(async move {
            loop {
                if let Some(kib) = std::fs::read_to_string(format!("/proc/{pid}/status"))
                    .ok()
                    .and_then(|s| {
                        let line = s.lines().find(|l| l.starts_with("VmHWM:"))?.to_owned();
                        line.split_whitespace().nth(1)?.parse::<u64>().ok()
                    })
                {
                    polled.fetch_max(kib << 10, std::sync::atomic::Ordering::Relaxed);
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
    };
    let output = within(&format!("a2a {args:?}"), child.wait_with_output())
        .await
        .expect("a2a runs");
    poller.abort();
    let took = started.elapsed();
    let mut stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let mut max_rss = polled.load(std::sync::atomic::Ordering::Relaxed);
    if let Some(at) = stderr.rfind("max-rss-kib ") {
        let kib: u64 = stderr[at + 12..].trim().parse().expect("GNU time's %M");
        max_rss = max_rss.max(kib << 10);
        stderr.truncate(at);
    }
    Run {
        code: output.status.code().unwrap_or(-1),
        stderr,
        took,
        max_rss,
    }
}

#[tokio::test]
async fn card_declared_at_5_gib_fails_at_once_within_the_card_limit() {
    let agent = HostileAgent::start(BINDING_JSONRPC, Attack::Huge, Target::Card).await;
    a2a(&["card", &agent.url])
        .await
        .failed_naming("--max-card-bytes", Duration::ZERO);
}

#[tokio::test]
async fn card_without_a_length_that_never_ends_fails_at_the_card_limit() {
    let agent = HostileAgent::start(BINDING_JSONRPC, Attack::Endless, Target::Card).await;
    a2a(&["card", &agent.url])
        .await
        .failed_naming("--max-card-bytes", Duration::ZERO);
}

#[tokio::test]
async fn card_trickled_fails_within_the_timeout() {
    let agent = HostileAgent::start(BINDING_JSONRPC, Attack::Trickle, Target::Card).await;
    let run = a2a(&["card", &agent.url, "--timeout", "1"]).await;
    run.failed_naming("--timeout", Duration::from_secs(1));
    assert!(run.took >= Duration::from_secs(1), "{run:#?}");
}

#[tokio::test]
async fn card_verified_with_a_5_gib_jwk_set_fails_within_the_jwks_limit() {
    let agent = HostileAgent::start(BINDING_JSONRPC, Attack::Huge, Target::Jwks).await;
    let jwks = format!("{}/jwks.json", agent.url);
    a2a(&["card", &agent.url, "--verify", "--jwks", &jwks])
        .await
        .failed_naming("--max-jwks-bytes", Duration::ZERO);
}

#[tokio::test]
async fn card_verified_with_late_jwk_sets_fails_within_one_timeout_for_the_whole_command() {
    // Each JWK set comes after 1 s, within a fetch's timeout of 2 s; the four of them and the
    // card take over 4 s, past the command's.
    let agent = HostileAgent::start(BINDING_JSONRPC, Attack::Late, Target::Jwks).await;
    let jwks = format!("{}/jwks.json", agent.url);
    let mut args = vec!["card", &agent.url, "--verify", "--timeout", "2"];
    for _ in 0..4 {
        args.extend(["--jwks", &jwks]);
    }
    let run = a2a(&args).await;
    run.failed_naming("--timeout", Duration::from_secs(2));
    assert!(run.took >= Duration::from_secs(2), "{run:#?}");
}

#[tokio::test]
async fn send_of_a_5_gib_answer_fails_within_the_response_limit_on_every_binding() {
    for binding in [BINDING_JSONRPC, BINDING_HTTP_JSON, BINDING_GRPC] {
        let agent = HostileAgent::start(binding, Attack::Huge, Target::Calls).await;
        a2a(&["send", &agent.url, "hi", "--json"])
            .await
            .failed_naming("--max-response-bytes", Duration::ZERO);
    }
}

#[tokio::test]
async fn send_of_an_endless_answer_stays_under_the_memory_bound_at_the_default_limit() {
    for binding in [BINDING_JSONRPC, BINDING_HTTP_JSON] {
        let agent = HostileAgent::start(binding, Attack::Endless, Target::Calls).await;
        a2a(&["send", &agent.url, "hi", "--json"])
            .await
            .failed_naming("--max-response-bytes", Duration::from_secs(2));
    }
}

#[tokio::test]
async fn send_of_a_trickled_answer_fails_within_the_timeout_on_every_binding() {
    for binding in [BINDING_JSONRPC, BINDING_HTTP_JSON, BINDING_GRPC] {
        let agent = HostileAgent::start(binding, Attack::Trickle, Target::Calls).await;
        // The timeout bounds the call, not each of its 4 attempts (8 s and more, with backoff).
        let run = a2a(&["send", &agent.url, "hi", "--json", "--timeout", "2"]).await;
        run.failed_naming("--timeout", Duration::from_secs(2));
        assert!(run.took >= Duration::from_secs(2), "{run:#?}");
    }
}

#[tokio::test]
async fn stream_of_an_event_that_never_ends_fails_at_the_event_limit_on_every_binding() {
    for binding in [BINDING_JSONRPC, BINDING_HTTP_JSON, BINDING_GRPC] {
        let agent = HostileAgent::start(binding, Attack::Huge, Target::Calls).await;
        a2a(&["stream", &agent.url, "hi"])
            .await
            .failed_naming("--max-event-bytes", Duration::from_secs(2));
    }
}

#[tokio::test]
async fn stream_without_events_fails_within_the_idle_timeout_on_every_binding() {
    for binding in [BINDING_JSONRPC, BINDING_HTTP_JSON, BINDING_GRPC] {
        let agent = HostileAgent::start(binding, Attack::Trickle, Target::Calls).await;
        let run = a2a(&["stream", &agent.url, "hi", "--idle-timeout", "1"]).await;
        run.failed_naming("--idle-timeout", Duration::from_secs(1));
    }
}

/// `a2a mcp URL args…` as a child process, and an rmcp client's handshake with it.
async fn mcp(
    url: &str,
    args: &[&str],
) -> Result<rmcp::service::RunningService<rmcp::RoleClient, ()>, rmcp::service::ClientInitializeError>
{
    let command = tokio::process::Command::new(env!("CARGO_BIN_EXE_a2a")).configure(|c| {
        c.arg("mcp").arg(url).args(args);
    });
    let transport = TokioChildProcess::new(command).expect("a2a mcp starts");
    within("the MCP handshake", ().serve(transport)).await
}

#[tokio::test]
async fn mcp_answers_initialize_with_the_error_when_the_card_is_too_large() {
    let agent = HostileAgent::start(BINDING_JSONRPC, Attack::Huge, Target::Card).await;
    let started = Instant::now();
    let Err(e) = mcp(&agent.url, &[]).await else {
        panic!("initialize succeeded");
    };
    let text = e.to_string();
    assert!(text.contains("--max-card-bytes"), "{text}");
    assert!(started.elapsed() < SLACK, "{:?}", started.elapsed());
}

#[tokio::test]
async fn mcp_answers_initialize_with_the_error_when_the_card_trickles() {
    let agent = HostileAgent::start(BINDING_JSONRPC, Attack::Trickle, Target::Card).await;
    let started = Instant::now();
    let Err(e) = mcp(&agent.url, &["--timeout", "1"]).await else {
        panic!("initialize succeeded");
    };
    assert!(e.to_string().contains("--timeout"), "{e}");
    assert!(started.elapsed() < Duration::from_secs(1) + SLACK);
}

#[tokio::test]
async fn mcp_tool_calls_on_huge_or_trickled_answers_are_tool_errors_within_the_limit() {
    for (attack, flag) in [
        (Attack::Huge, "--max-event-bytes"),
        (Attack::Trickle, "--idle-timeout"),
    ] {
        for binding in [BINDING_JSONRPC, BINDING_HTTP_JSON, BINDING_GRPC] {
            let agent = HostileAgent::start(binding, attack, Target::Calls).await;
            let args = [
                "--timeout",
                "1",
                "--idle-timeout",
                "1",
                "--max-event-bytes",
                "1000000",
            ];
            let client = mcp(&agent.url, &args).await.expect("initialized");
            let mut call = CallToolRequestParams::new("send_message");
            call.arguments = serde_json::json!({"text": "hi"}).as_object().cloned();
            let started = Instant::now();
            let result = within("tools/call", client.call_tool(call))
                .await
                .expect("a result");
            assert_eq!(result.is_error, Some(true), "{result:?}");
            let text = format!("{:?}", result.content);
            assert!(text.contains(flag), "{binding} {attack:?}: {text}");
            assert!(started.elapsed() < Duration::from_secs(1) + SLACK);
        }
    }
}

#[tokio::test]
async fn mcp_tool_calls_to_an_agent_that_cannot_stream_fail_within_the_timeout() {
    // The task is followed by unary calls, each trickled: the tool call fails at the timeout,
    // not after 4 attempts of it.
    for binding in [BINDING_JSONRPC, BINDING_HTTP_JSON, BINDING_GRPC] {
        let agent = HostileAgent::start_unary(binding, Attack::Trickle, Target::Calls).await;
        let client = mcp(&agent.url, &["--timeout", "2"])
            .await
            .expect("initialized");
        let mut call = CallToolRequestParams::new("send_message");
        call.arguments = serde_json::json!({"text": "hi"}).as_object().cloned();
        let started = Instant::now();
        let result = within("tools/call", client.call_tool(call))
            .await
            .expect("a result");
        let took = started.elapsed();
        assert_eq!(result.is_error, Some(true), "{result:?}");
        let text = format!("{:?}", result.content);
        assert!(text.contains("--timeout"), "{binding}: {text}");
        assert!(
            took >= Duration::from_secs(2) && took < Duration::from_secs(2) + SLACK,
            "{binding}: {took:?}"
        );
    }
}
