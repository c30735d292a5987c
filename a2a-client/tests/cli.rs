//! The `a2a` command end to end: the built binary against a server started in the test, with
//! the exit codes documented at the top of `src/bin/a2a/main.rs` (0 done, 1 task unsuccessful,
//! 2 bad usage, 3 A2A error, 4 unreachable, 5 needs input). Its output is not a terminal
//! here, so it must carry no color codes.

mod common;
#[path = "support/cli.rs"]
mod run;

use a2a_client::{Binding, Client};
use a2a_core::{ContextId, Message, SendMessageRequest, TaskState};
use common::{Stepper, TestServer, task_of, within};
use run::{a2a, a2a_with_env, command};
use serde_json::Value;
use std::process::Stdio;
use tokio::io::{AsyncBufReadExt as _, BufReader};

async fn library_client(server: &TestServer) -> Client {
    server.client(Binding::JsonRpc).await
}

#[tokio::test]
async fn card_shows_the_agent_its_interfaces_and_skills() {
    let server = TestServer::demo().await;
    let run = a2a(&["card", &server.url]).await;
    run.expect_code(0);
    let out = &run.stdout;
    assert!(out.starts_with("a2a-rust demo agent "), "{out}");
    assert!(
        out.contains(&format!("JSONRPC 1.0 {}", server.url)),
        "{out}"
    );
    assert!(
        out.contains(&format!("HTTP+JSON 1.0 {}", server.url)),
        "{out}"
    );
    assert!(out.contains("streaming: true"), "{out}");
    for skill in ["echo", "countdown", "greet"] {
        assert!(out.contains(&format!("skill {skill}:")), "{out}");
    }
    assert!(run.stderr.is_empty(), "{}", run.stderr);
}

#[tokio::test]
async fn card_json_prints_the_card_as_json() {
    let server = TestServer::demo().await;
    let run = a2a(&["card", &server.url, "--json"]).await;
    run.expect_code(0);
    let card: a2a_core::AgentCard = serde_json::from_value(run.json()).expect("a card");
    assert_eq!(card, server.card);
}

#[tokio::test]
async fn send_prints_the_echo_and_exits_0() {
    let server = TestServer::demo().await;
    let run = a2a(&["send", &server.url, "hello world"]).await;
    run.expect_code(0);
    assert!(run.stdout.contains("echo: hello world"), "{}", run.stdout);
    assert!(run.stdout.contains("completed"), "{}", run.stdout);
}

#[tokio::test]
async fn send_json_prints_the_task_as_json() {
    let server = TestServer::demo().await;
    let run = a2a(&["send", &server.url, "hello", "--json"]).await;
    run.expect_code(0);
    let task: a2a_core::Task = serde_json::from_value(run.json()).expect("a task");
    assert_eq!(task.status.state, TaskState::Completed);
    assert_eq!(task.artifacts[0].text_content(), "echo: hello");
}

#[tokio::test]
async fn send_greet_exits_5_and_shows_the_question() {
    let server = TestServer::demo().await;
    let run = a2a(&["send", &server.url, "greet"]).await;
    run.expect_code(5);
    assert!(run.stdout.contains("input-required"), "{}", run.stdout);
    assert!(run.stdout.contains("What is your name?"), "{}", run.stdout);
    assert!(
        run.stdout.contains("--task "),
        "tells how to answer: {}",
        run.stdout
    );
}

#[tokio::test]
async fn send_with_task_answers_the_question_in_that_task() {
    let server = TestServer::demo().await;
    let asked = a2a(&["send", &server.url, "greet", "--json"]).await;
    asked.expect_code(5);
    let asked = asked.json();
    let id = asked["id"].as_str().expect("a task id");
    assert_eq!(asked["status"]["state"], "TASK_STATE_INPUT_REQUIRED");

    let run = a2a(&["send", &server.url, "Ada", "--task", id]).await;
    run.expect_code(0);
    assert!(run.stdout.contains("Hello, Ada!"), "{}", run.stdout);
    assert!(run.stdout.contains(id), "{}", run.stdout);
}

#[tokio::test]
async fn send_no_wait_returns_while_the_task_runs() {
    let server = TestServer::demo().await;
    let run = a2a(&["send", &server.url, "countdown 100", "--no-wait", "--json"]).await;
    run.expect_code(0);
    let task: a2a_core::Task = serde_json::from_value(run.json()).expect("a task");
    assert!(task.status.state.is_active(), "{}", task.status.state);
    let client = library_client(&server).await;
    within("cancel", client.cancel_task(task.id))
        .await
        .expect("cancel");
    let sent = server.seen.calls_of("SendMessage");
    assert_eq!(sent[0].params()["configuration"]["returnImmediately"], true);
}

#[tokio::test]
async fn send_continues_a_context_and_attaches_files_and_data() {
    let server = TestServer::demo().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("notes.txt");
    std::fs::write(&path, b"file body").expect("write");
    let run = a2a(&[
        "send",
        &server.url,
        "with attachments",
        "--file",
        path.to_str().expect("path"),
        "--data",
        r#"{"n": 1}"#,
        "--context",
        "ctx-cli",
        "--json",
    ])
    .await;
    run.expect_code(0);
    assert_eq!(run.json()["contextId"], "ctx-cli");
    let params = server.seen.calls_of("SendMessage")[0].params();
    let parts = params["message"]["parts"].as_array().expect("parts");
    assert_eq!(parts.len(), 3);
    assert_eq!(parts[0]["text"], "with attachments");
    assert_eq!(parts[1]["filename"], "notes.txt");
    assert_eq!(parts[1]["mediaType"], "text/plain");
    assert_eq!(parts[1]["raw"], "ZmlsZSBib2R5");
    assert_eq!(parts[2]["data"], serde_json::json!({"n": 1}));
}

#[tokio::test]
async fn stream_prints_each_event_as_it_comes() {
    let server = TestServer::demo().await;
    let run = a2a(&["stream", &server.url, "countdown 2"]).await;
    run.expect_code(0);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert!(
        lines[0].starts_with("task ") && lines[0].ends_with(" working"),
        "{lines:?}"
    );
    assert!(lines.contains(&"2"), "{lines:?}");
    assert!(lines.contains(&"1"), "{lines:?}");
    assert!(
        lines.iter().any(|l| l.ends_with("working 1...")),
        "{lines:?}"
    );
    let last = lines.last().expect("output");
    assert!(last.ends_with("completed Liftoff!"), "{lines:?}");
    assert_eq!(lines.len(), 5, "one line per event: {lines:?}");
}

#[tokio::test]
async fn stream_json_prints_one_json_event_per_line() {
    let server = TestServer::demo().await;
    let run = a2a(&["stream", &server.url, "countdown 2", "--json"]).await;
    run.expect_code(0);
    let events = run.json_lines();
    assert_eq!(events.len(), 5);
    assert!(events[0].get("task").is_some(), "{:?}", events[0]);
    assert!(events[1].get("artifactUpdate").is_some(), "{:?}", events[1]);
    assert_eq!(
        events[4]["statusUpdate"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
}

#[tokio::test]
async fn stream_of_a_question_exits_5() {
    let server = TestServer::demo().await;
    let run = a2a(&["stream", &server.url, "greet"]).await;
    run.expect_code(5);
    assert!(run.stdout.contains("input-required"), "{}", run.stdout);
}

#[tokio::test]
async fn get_shows_a_task_and_get_json_parses() {
    let server = TestServer::demo().await;
    let client = library_client(&server).await;
    let task = task_of(within("send", client.send_text("hi")).await.expect("send"));
    let run = a2a(&["get", &server.url, task.id.as_str()]).await;
    run.expect_code(0);
    assert!(run.stdout.contains(task.id.as_str()), "{}", run.stdout);
    assert!(run.stdout.contains("echo: hi"), "{}", run.stdout);

    let run = a2a(&[
        "get",
        &server.url,
        task.id.as_str(),
        "--json",
        "--history",
        "0",
    ])
    .await;
    run.expect_code(0);
    let got: a2a_core::Task = serde_json::from_value(run.json()).expect("a task");
    assert_eq!(got.id, task.id);
    assert!(got.history.is_empty());
}

#[tokio::test]
async fn get_wait_returns_once_the_task_moved_past_the_generation() {
    let server = TestServer::demo().await;
    let client = library_client(&server).await;
    let request = a2a_core::SendMessageRequest::new(a2a_core::Message::user_text("countdown 3"))
        .with_return_immediately(true);
    let task = task_of(
        within("send", client.send_message(&request))
            .await
            .expect("send"),
    );
    // Long polls (the demo agent speaks 1.1) until past generation 5 of the 7 a countdown makes.
    let args = [
        "get",
        &server.url,
        task.id.as_str(),
        "--json",
        "--wait",
        "--after",
        "5",
    ];
    let run = a2a(&args).await;
    run.expect_code(0);
    let got: a2a_core::Task = serde_json::from_value(run.json()).expect("a task");
    assert!(got.generation > 5, "{got:?}");
    let run = a2a(&["get", &server.url, "t", "--after", "1"]).await;
    run.expect_code(2);
}

#[tokio::test]
async fn get_of_an_unknown_task_exits_3() {
    let server = TestServer::demo().await;
    let run = a2a(&["get", &server.url, "no-such-task"]).await;
    run.expect_code(3);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    assert!(run.stderr.starts_with("a2a: "), "{}", run.stderr);
    assert!(run.stderr.contains("no-such-task"), "{}", run.stderr);
}

#[tokio::test]
async fn list_pages_with_page_size_and_page_token() {
    let server = TestServer::demo().await;
    let client = library_client(&server).await;
    for text in ["a", "b", "c"] {
        let m = Message::user_text(text).with_context_id(ContextId::new("ctx-list"));
        within("send", client.send_message(&SendMessageRequest::new(m)))
            .await
            .expect("send");
    }
    let run = a2a(&["list", &server.url, "--page-size", "2"]).await;
    run.expect_code(0);
    assert!(run.stdout.contains("2 of 3 tasks"), "{}", run.stdout);
    let token = run
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("next page: --page-token "))
        .expect("a next page")
        .to_owned();

    let run = a2a(&[
        "list",
        &server.url,
        "--page-size",
        "2",
        "--page-token",
        &token,
    ])
    .await;
    run.expect_code(0);
    assert!(run.stdout.contains("1 of 3 tasks"), "{}", run.stdout);
    assert!(!run.stdout.contains("next page"), "{}", run.stdout);

    let run = a2a(&[
        "list",
        &server.url,
        "--json",
        "--context",
        "ctx-list",
        "--status",
        "completed",
        "--artifacts",
    ])
    .await;
    run.expect_code(0);
    let page = run.json();
    assert_eq!(page["totalSize"], 3);
    assert_eq!(page["tasks"].as_array().expect("tasks").len(), 3);
    assert!(page["tasks"][0]["artifacts"].is_array());
}

#[tokio::test]
async fn cancel_cancels_a_running_task_and_a_finished_one_exits_3() {
    let server = TestServer::demo().await;
    let client = library_client(&server).await;
    let request =
        SendMessageRequest::new(Message::user_text("countdown 100")).with_return_immediately(true);
    let task = task_of(
        within("send", client.send_message(&request))
            .await
            .expect("send"),
    );

    let run = a2a(&["cancel", &server.url, task.id.as_str()]).await;
    run.expect_code(0);
    assert!(run.stdout.contains("canceled"), "{}", run.stdout);
    let got = within("get", client.get_task(task.id.clone()))
        .await
        .expect("get");
    assert_eq!(got.status.state, TaskState::Canceled);

    let run = a2a(&["cancel", &server.url, task.id.as_str()]).await;
    run.expect_code(3);
    assert!(run.stderr.starts_with("a2a: "), "{}", run.stderr);
}

/// A server whose two-step agent runs a task, held after its first step (it goes on at
/// `agent.open(2)`).
async fn a_task_at_its_first_step() -> (Stepper, TestServer, a2a_core::Task) {
    let agent = Stepper::new(2);
    let server = TestServer::start(agent.clone(), |b| b).await;
    let client = library_client(&server).await;
    agent.open(1);
    let request =
        SendMessageRequest::new(Message::user_text("steps")).with_return_immediately(true);
    let task = task_of(
        within("send", client.send_message(&request))
            .await
            .expect("send"),
    );
    agent.reached(1).await;
    (agent, server, task)
}

/// `a2a subscribe` to `task` with `extra` arguments, its output piped to the test.
fn subscribe(server: &TestServer, task: &a2a_core::Task, extra: &[&str]) -> tokio::process::Child {
    let mut args = vec!["subscribe", server.url.as_str(), task.id.as_str()];
    args.extend_from_slice(extra);
    command(&args, &[])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn a2a")
}

#[tokio::test]
async fn subscribe_prints_the_events_of_a_running_task_as_they_come() {
    let (agent, server, task) = a_task_at_its_first_step().await;
    let mut child = subscribe(&server, &task, &["--json"]);
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let first = within("the first line", lines.next_line())
        .await
        .expect("read")
        .expect("a line");
    let first: Value = serde_json::from_str(&first).expect("JSON");
    assert_eq!(first["task"]["id"], task.id.as_str());
    assert_eq!(first["task"]["artifacts"][0]["parts"][0]["text"], "1;");

    // The task goes on only now that the command follows it.
    agent.open(2);
    let mut events = vec![first];
    while let Some(line) = within("the next line", lines.next_line())
        .await
        .expect("read")
    {
        events.push(serde_json::from_str(&line).expect("JSON"));
    }
    let status = within("a2a to exit", child.wait()).await.expect("wait");
    assert_eq!(status.code(), Some(0));
    assert_eq!(events.len(), 4, "{events:?}");
    let last = events.last().expect("events");
    assert_eq!(
        last["statusUpdate"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
}

/// `a2a subscribe URL ID | head -1`: once nothing reads its output, the command ends quietly
/// (exit 0, nothing on stderr) instead of panicking on the closed pipe.
#[tokio::test]
async fn a_reader_that_goes_away_ends_the_command_quietly() {
    let (agent, server, task) = a_task_at_its_first_step().await;
    let mut child = subscribe(&server, &task, &[]);
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    within("the first line", lines.next_line())
        .await
        .expect("read")
        .expect("a line");
    drop(lines); // the reader goes away
    agent.open(2); // more output for a pipe nobody reads
    let output = within("a2a to exit", child.wait_with_output())
        .await
        .expect("wait");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "stderr: {stderr}");
    assert!(stderr.is_empty(), "nothing on stderr: {stderr}");
}

#[tokio::test]
async fn an_unreachable_agent_exits_4() {
    let url = common::unreachable_url().await;
    for args in [vec!["card", url.as_str()], vec!["send", url.as_str(), "hi"]] {
        let run = a2a(&args).await;
        run.expect_code(4);
        assert!(run.stderr.starts_with("a2a: "), "{}", run.stderr);
    }
}

#[tokio::test]
async fn binding_grpc_talks_grpc_and_an_unreachable_grpc_endpoint_exits_4() {
    let server = TestServer::demo().await;
    let run = a2a(&["--binding", "grpc", "send", &server.url, "over grpc"]).await;
    run.expect_code(0);
    assert!(run.stdout.contains("echo: over grpc"), "{}", run.stdout);
    let calls = server.seen.calls();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].path, "/lf.a2a.v1.A2AService/SendStreamingMessage");

    // A card whose gRPC interface points nowhere.
    let nowhere = common::unreachable_url().await;
    let nowhere = nowhere.trim_start_matches("http://").to_owned();
    let server = TestServer::start(a2a_server::demo::DemoAgent, move |b| {
        b.agent_card(a2a_server::demo::DemoAgent::card())
            .grpc_public_url(nowhere)
    })
    .await;
    let run = a2a(&["--binding", "grpc", "send", &server.url, "hi"]).await;
    run.expect_code(4);
    assert!(run.stderr.contains("UNAVAILABLE"), "{}", run.stderr);
}

#[tokio::test]
async fn binding_rest_talks_http_json_and_binding_jsonrpc_talks_json_rpc() {
    let server = TestServer::demo().await;
    let run = a2a(&["--binding", "rest", "send", &server.url, "over rest"]).await;
    run.expect_code(0);
    assert!(run.stdout.contains("echo: over rest"), "{}", run.stdout);
    let run = a2a(&["send", &server.url, "over json-rpc", "--binding", "jsonrpc"]).await;
    run.expect_code(0);

    // For people, `send` follows the task live: a streaming send on a streaming agent.
    let calls = server.seen.calls();
    assert_eq!(calls.len(), 2);
    assert_eq!(
        (calls[0].method.as_str(), calls[0].path.as_str()),
        ("POST", "/message:stream")
    );
    assert_eq!(calls[1].path, "/");
    assert_eq!(
        calls[1].rpc_method().as_deref(),
        Some("SendStreamingMessage")
    );
}

#[tokio::test]
async fn a_token_and_headers_reach_the_agent() {
    let server = TestServer::demo().await;
    let run = a2a(&[
        "send",
        &server.url,
        "hi",
        "--token",
        "t-1",
        "-H",
        "X-Trace: abc",
    ])
    .await;
    run.expect_code(0);
    let run = a2a_with_env(&["send", &server.url, "hi"], &[("A2A_TOKEN", "t-env")]).await;
    run.expect_code(0);
    let calls = server.seen.calls();
    assert_eq!(calls[0].header("authorization"), Some("Bearer t-1"));
    assert_eq!(calls[0].header("x-trace"), Some("abc"));
    assert_eq!(calls[1].header("authorization"), Some("Bearer t-env"));
    // The card fetches carry them too: an agent may serve its card only to callers it knows.
    let cards: Vec<_> = (server.seen.all().into_iter())
        .filter(|s| s.path.starts_with("/.well-known/"))
        .collect();
    assert_eq!(cards.len(), 2, "{cards:?}");
    assert_eq!(cards[0].header("authorization"), Some("Bearer t-1"));
    assert_eq!(cards[0].header("x-trace"), Some("abc"));
    assert_eq!(cards[1].header("authorization"), Some("Bearer t-env"));
    let run = a2a(&["card", &server.url, "-H", "X-Trace: card"]).await;
    run.expect_code(0);
    let last = server.seen.all().pop().expect("the card fetch");
    assert_eq!(last.header("x-trace"), Some("card"));
}

#[tokio::test]
async fn bad_usage_exits_2() {
    let server = TestServer::demo().await;
    let run = a2a(&["send"]).await;
    run.expect_code(2);
    let run = a2a(&["send", &server.url]).await;
    run.expect_code(2);
    assert!(run.stderr.contains("nothing to send"), "{}", run.stderr);
    let run = a2a(&["send", &server.url, "hi", "-H", "no colon here"]).await;
    run.expect_code(2);
    let run = a2a(&["frobnicate"]).await;
    run.expect_code(2);
    assert!(server.seen.calls().is_empty());
}

#[tokio::test]
async fn a_rejected_task_exits_1() {
    let server = TestServer::demo().await;
    let run = a2a(&["send", &server.url, "countdown zero"]).await;
    run.expect_code(1);
    assert!(run.stdout.contains("rejected"), "{}", run.stdout);
}
