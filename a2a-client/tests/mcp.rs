//! `a2a mcp`: the demo agent as an MCP server, driven by rmcp's client as the MCP host would,
//! over stdio (the binary as a child process) and over streamable HTTP.

mod common;

use a2a_core::{ListTasksRequest, TaskState};
use common::{TestServer, within};
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult,
    ElicitationAction, Implementation, ProgressNotificationParam,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient, RunningService};
use rmcp::transport::{ConfigureCommandExt as _, TokioChildProcess};
use rmcp::{ClientHandler, ErrorData as McpError, ServiceExt as _};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Notify;

/// The MCP host: records progress, answers (or declines) elicitations.
#[derive(Clone, Default)]
struct Host {
    progress: Arc<Mutex<Vec<String>>>,
    progressed: Arc<Notify>,
    questions: Arc<Mutex<Vec<String>>>,
    /// The user's answer; `None` declines.
    answer: Option<String>,
    /// Whether the host can elicit at all.
    elicits: bool,
}

impl ClientHandler for Host {
    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, McpError> {
        if let ElicitRequestParams::FormElicitationParams { message, .. } = &request {
            self.questions.lock().expect("lock").push(message.clone());
        }
        Ok(match &self.answer {
            Some(a) => {
                ElicitResult::new(ElicitationAction::Accept).with_content(json!({"answer": a}))
            }
            None => ElicitResult::new(ElicitationAction::Decline),
        })
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress
            .lock()
            .expect("lock")
            .push(params.message.unwrap_or_default());
        self.progressed.notify_one();
    }

    fn get_info(&self) -> ClientConfig {
        let capabilities = if self.elicits {
            ClientCapabilities::builder().enable_elicitation().build()
        } else {
            ClientCapabilities::default()
        };
        ClientConfig::new(capabilities, Implementation::new("a2a-mcp-test-host", "1"))
    }
}

/// `a2a mcp URL` as a child process, with `host` as its MCP client.
async fn stdio(url: &str, host: Host) -> RunningService<RoleClient, Host> {
    let command = tokio::process::Command::new(env!("CARGO_BIN_EXE_a2a")).configure(|c| {
        c.arg("mcp").arg(url);
    });
    let transport = TokioChildProcess::new(command).expect("a2a mcp starts");
    within("the MCP handshake", host.serve(transport))
        .await
        .expect("initialized")
}

fn call(tool: &str, arguments: Value) -> CallToolRequestParams {
    let mut params = CallToolRequestParams::new(tool.to_owned());
    params.arguments = arguments.as_object().cloned();
    params
}

fn texts(result: &rmcp::model::CallToolResult) -> Vec<String> {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect()
}

#[tokio::test]
async fn tools_are_the_skills_and_countdown_reports_ordered_progress_and_its_artifact() {
    let server = TestServer::demo().await;
    let host = Host::default();
    let client = stdio(&server.url, host.clone()).await;
    let tools = client.list_all_tools().await.expect("tools");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["echo", "countdown", "greet", "send_message"]);
    assert_eq!(tools[0].input_schema["required"], json!(["text"]));

    let result = within(
        "countdown",
        client.call_tool(call("countdown", json!({"text": "countdown 3"}))),
    )
    .await
    .expect("a result");
    assert_eq!(result.is_error, Some(false), "{result:?}");
    assert_eq!(texts(&result), ["3\n2\n1\n"]);
    let progress = host.progress.lock().expect("lock").clone();
    let counted: Vec<&String> = progress.iter().filter(|p| p.ends_with("...")).collect();
    assert_eq!(counted, ["3...", "2...", "1..."], "{progress:?}");

    // Bad calls are MCP errors, and the bridge stays up.
    let err = client
        .call_tool(call("nope", json!({"text": "x"})))
        .await
        .expect_err("unknown tool");
    assert!(err.to_string().contains("unknown tool"), "{err}");
    let err = client
        .call_tool(call("echo", json!({"text": 5})))
        .await
        .expect_err("a number for text");
    assert!(err.to_string().contains("must be a string"), "{err}");
    let echoed = client
        .call_tool(call("echo", json!({"text": "still here"})))
        .await
        .expect("a result");
    assert_eq!(texts(&echoed), ["echo: still here"]);
    client.cancel().await.expect("closed");
}

#[tokio::test]
async fn greet_asks_the_user_through_elicitation_and_the_answer_completes_the_same_task() {
    let server = TestServer::demo().await;
    let host = Host {
        answer: Some("Ada".into()),
        elicits: true,
        ..Host::default()
    };
    let client = stdio(&server.url, host.clone()).await;
    let result = within(
        "greet",
        client.call_tool(call("greet", json!({"text": "greet"}))),
    )
    .await
    .expect("a result");
    assert_eq!(texts(&result), ["Hello, Ada!"], "{result:?}");
    assert_eq!(host.questions.lock().expect("lock").len(), 1);
    // One task, from question to answer.
    let a2a = server.client(a2a_client::Binding::JsonRpc).await;
    let tasks = a2a
        .list_tasks(&ListTasksRequest::default())
        .await
        .expect("tasks");
    assert_eq!(tasks.tasks.len(), 1);
    assert_eq!(tasks.tasks[0].status.state, TaskState::Completed);
    client.cancel().await.expect("closed");

    // Declined: the tool fails and the A2A task is canceled.
    let host = Host {
        answer: None,
        elicits: true,
        ..Host::default()
    };
    let client = stdio(&server.url, host).await;
    let result = client
        .call_tool(call("greet", json!({"text": "greet"})))
        .await
        .expect("a result");
    assert_eq!(result.is_error, Some(true));
    assert!(texts(&result)[0].contains("declined"), "{result:?}");
    let tasks = a2a
        .list_tasks(&ListTasksRequest::default())
        .await
        .expect("tasks");
    assert!(
        tasks
            .tasks
            .iter()
            .any(|t| t.status.state == TaskState::Canceled),
        "{tasks:?}"
    );
    client.cancel().await.expect("closed");

    // A host that cannot elicit gets the question and the task to answer through
    // send_message, which completes it.
    let client = stdio(&server.url, Host::default()).await;
    let result = client
        .call_tool(call("greet", json!({"text": "greet"})))
        .await
        .expect("a result");
    let text = texts(&result).join("");
    assert!(text.contains("What is your name?"), "{text}");
    let task_id = text
        .split("taskId \"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .expect("the task id")
        .to_owned();
    let context_id = text
        .split("contextId \"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .expect("the context id")
        .to_owned();
    let answered = client
        .call_tool(call(
            "send_message",
            json!({"text": "Grace", "taskId": task_id, "contextId": context_id}),
        ))
        .await
        .expect("a result");
    assert_eq!(texts(&answered), ["Hello, Grace!"]);
    client.cancel().await.expect("closed");
}

#[tokio::test]
async fn cancelling_the_tool_call_cancels_the_a2a_task() {
    let server = TestServer::demo().await;
    let host = Host::default();
    let client = stdio(&server.url, host.clone()).await;
    let long = client.call_tool(call("countdown", json!({"text": "countdown 100"})));
    // Dropping the call once the countdown runs sends notifications/cancelled.
    tokio::select! {
        r = long => panic!("the countdown finished: {r:?}"),
        () = host.progressed.notified() => {}
    }
    let a2a = server.client(a2a_client::Binding::JsonRpc).await;
    let canceled = async {
        loop {
            let tasks = a2a
                .list_tasks(&ListTasksRequest::default())
                .await
                .expect("tasks");
            if tasks
                .tasks
                .first()
                .is_some_and(|t| t.status.state == TaskState::Canceled)
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    within("the A2A task canceled", canceled).await;
    client.cancel().await.expect("closed");
}

#[tokio::test]
async fn streamable_http_serves_the_same_tools() {
    let server = TestServer::demo().await;
    let (_bridge, url) = http_bridge(&server.url).await;
    let transport = rmcp::transport::StreamableHttpClientTransport::from_uri(url);
    let host = Host::default();
    let client = within("the MCP handshake", host.clone().serve(transport))
        .await
        .expect("initialized");
    let tools = client.list_all_tools().await.expect("tools");
    assert_eq!(tools.len(), 4);
    let result = within(
        "countdown over HTTP",
        client.call_tool(call("countdown", json!({"text": "countdown 2"}))),
    )
    .await
    .expect("a result");
    assert_eq!(texts(&result), ["2\n1\n"]);
    assert!(
        host.progress
            .lock()
            .expect("lock")
            .iter()
            .any(|p| p == "1..."),
        "{:?}",
        host.progress.lock().expect("lock")
    );
    client.cancel().await.expect("closed");
}

/// A host that declares MCP tasks (SEP-2663).
#[derive(Clone, Default)]
struct TaskHost;

impl ClientHandler for TaskHost {
    fn get_info(&self) -> ClientConfig {
        let capabilities = ClientCapabilities::builder().enable_tasks().build();
        ClientConfig::new(capabilities, Implementation::new("a2a-mcp-task-host", "1"))
    }
}

/// Polls `tasks/get` until the task leaves `working`.
async fn settled(
    client: &RunningService<RoleClient, TaskHost>,
    id: &str,
) -> rmcp::model::DetailedTask {
    within("the MCP task settles", async {
        loop {
            let got = client
                .get_task(rmcp::model::GetTaskParams::new(id))
                .await
                .expect("tasks/get");
            if got.task.status() != rmcp::model::TaskStatus::Working {
                return got.task;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
}

#[tokio::test]
async fn the_a2a_task_is_the_mcp_task_and_outlives_the_mcp_session() {
    use rmcp::model::{CallToolResponse, TaskPayload, TaskStatus, UpdateTaskParams};
    let server = TestServer::demo().await;
    let spawn = |host: TaskHost| {
        let command = tokio::process::Command::new(env!("CARGO_BIN_EXE_a2a")).configure(|c| {
            c.arg("mcp").arg(&server.url);
        });
        let transport = TokioChildProcess::new(command).expect("a2a mcp starts");
        host.serve(transport)
    };
    let client = within("handshake", spawn(TaskHost))
        .await
        .expect("initialized");

    // greet as a task: the question is an input request; the answer goes in tasks/update.
    let started = client
        .call_tool_once(call("greet", json!({"text": "greet"})))
        .await
        .expect("tools/call");
    let CallToolResponse::Task(created) = started else {
        panic!("a task, not {started:?}");
    };
    let id = created.task.task_id.clone();
    let a2a = server.client(a2a_client::Binding::JsonRpc).await;
    assert_eq!(
        a2a.get_task(id.clone())
            .await
            .expect("the A2A task")
            .id
            .to_string(),
        id
    );
    let asked = settled(&client, &id).await;
    assert_eq!(asked.status(), TaskStatus::InputRequired);
    let TaskPayload::InputRequired { input_requests } = &asked.payload else {
        panic!("{asked:?}");
    };
    assert!(input_requests.contains_key("answer"), "{input_requests:?}");
    let answer = json!({"action": "accept", "content": {"answer": "Ada"}});
    client
        .update_task(UpdateTaskParams::new(
            id.clone(),
            [("answer".to_owned(), answer)].into_iter().collect(),
        ))
        .await
        .expect("tasks/update");
    client.cancel().await.expect("closed");

    // A new MCP session (another bridge process) finds the same task, finished.
    let client = within("handshake", spawn(TaskHost))
        .await
        .expect("initialized");
    let done = settled(&client, &id).await;
    assert_eq!(done.status(), TaskStatus::Completed, "{done:?}");
    let TaskPayload::Completed { result } = &done.payload else {
        panic!("{done:?}");
    };
    assert_eq!(result["content"][0]["text"], "Hello, Ada!", "{result:?}");

    // tasks/cancel cancels the A2A task.
    let started = client
        .call_tool_once(call("countdown", json!({"text": "countdown 100"})))
        .await
        .expect("tools/call");
    let CallToolResponse::Task(created) = started else {
        panic!("a task, not {started:?}");
    };
    client
        .cancel_task(rmcp::model::CancelTaskParams::new(
            created.task.task_id.clone(),
        ))
        .await
        .expect("tasks/cancel");
    let canceled = settled(&client, &created.task.task_id).await;
    assert_eq!(canceled.status(), TaskStatus::Cancelled);
    assert_eq!(
        a2a.get_task(created.task.task_id.clone())
            .await
            .expect("the A2A task")
            .status
            .state,
        TaskState::Canceled
    );
    // An id that is no task is an error.
    let err = client
        .get_task(rmcp::model::GetTaskParams::new("no-such-task"))
        .await
        .expect_err("no task");
    assert!(err.to_string().contains("no task"), "{err}");
    client.cancel().await.expect("closed");
}

#[tokio::test]
async fn an_agent_that_cannot_be_reached_gives_tool_errors_and_the_bridge_stays_up() {
    // A card whose JSON-RPC interface is a closed port.
    let nowhere = common::unreachable_url().await;
    let mut card = a2a_server::demo::DemoAgent::card();
    card.supported_interfaces = vec![a2a_core::AgentInterface::new("JSONRPC", nowhere)];
    let router = axum::Router::new().route(
        "/.well-known/agent-card.json",
        axum::routing::get(move || {
            let card = card.clone();
            async move { axum::Json(card) }
        }),
    );
    let url = common::serve(router).await;
    let client = stdio(&url, Host::default()).await;
    for _ in 0..2 {
        let result = within(
            "a call to nowhere",
            client.call_tool(call("echo", json!({"text": "hello?"}))),
        )
        .await
        .expect("a tool result, not a protocol error");
        assert_eq!(result.is_error, Some(true));
        let text = texts(&result).join("");
        assert!(text.contains("could not be reached"), "{text}");
    }
    assert_eq!(client.list_all_tools().await.expect("still up").len(), 4);
    client.cancel().await.expect("closed");
}

/// Starts `a2a mcp URL --http 127.0.0.1:0` and returns it with its endpoint URL.
async fn http_bridge(agent: &str) -> (tokio::process::Child, String) {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_a2a"))
        .args(["mcp", agent, "--http", "127.0.0.1:0"])
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("a2a mcp --http starts");
    let mut lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(
        child.stderr.take().expect("stderr"),
    ));
    let line = within("the listening line", lines.next_line())
        .await
        .expect("stderr")
        .expect("a line");
    let url = line
        .strip_prefix("a2a mcp: listening on ")
        .expect("the listening line")
        .to_owned();
    (child, url)
}

/// The MCP messages (`data:` JSON) and their SSE ids, read from a streamable HTTP response
/// until `stop` says so or the stream ends.
async fn read_events(
    response: reqwest::Response,
    mut stop: impl FnMut(&Value) -> bool,
) -> Vec<(Option<String>, Value)> {
    use futures::StreamExt as _;
    let mut parser = a2a_client::sse::SseParser::default();
    let mut body = response.bytes_stream();
    let mut out = Vec::new();
    while let Some(chunk) = body.next().await {
        let Ok(chunk) = chunk else { break };
        for event in parser.feed(&chunk) {
            let Ok(message) = serde_json::from_str::<Value>(&event.data) else {
                continue; // the priming event has no data
            };
            let done = stop(&message);
            out.push((event.id, message));
            if done {
                return out;
            }
        }
    }
    out
}

#[tokio::test]
async fn a_dropped_streamable_http_connection_resumes_with_last_event_id_without_loss() {
    let server = TestServer::demo().await;
    let (_bridge, url) = http_bridge(&server.url).await;
    let http = reqwest::Client::new();
    let post = |body: Value, session: Option<&str>| {
        let mut request = http
            .post(&url)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .json(&body);
        if let Some(s) = session {
            request = request.header("mcp-session-id", s);
        }
        request.send()
    };
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "resume-test", "version": "1"}}});
    let response = within("initialize", post(init, None))
        .await
        .expect("initialize");
    let session = response
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .expect("a session")
        .to_owned();
    within(
        "the initialize result",
        read_events(response, |m| m.get("result").is_some()),
    )
    .await;
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    within("initialized", post(initialized, Some(&session)))
        .await
        .expect("initialized");

    // The countdown's stream, dropped after its first progress event.
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "countdown", "arguments": {"text": "countdown 3"},
        "_meta": {"progressToken": "p"}}});
    let response = within("tools/call", post(call, Some(&session)))
        .await
        .expect("tools/call");
    let first = within(
        "the first progress",
        read_events(response, |m| m["params"]["message"] == "3..."),
    )
    .await;
    let (last_id, _) = first.last().cloned().expect("an event");
    let last_id = last_id.expect("events carry ids");
    // (The response is dropped here: the connection closes mid-stream.)

    // Resumed with GET and Last-Event-ID: the rest, each once, then the result.
    let resumed = http
        .get(&url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-11-25")
        .header("last-event-id", &last_id)
        .send();
    let resumed = within("the resumed stream", resumed).await.expect("GET");
    assert!(resumed.status().is_success(), "{}", resumed.status());
    let rest = within(
        "the rest of the countdown",
        read_events(resumed, |m| m["id"] == 2 && m.get("result").is_some()),
    )
    .await;
    // rmcp 3.11 replays from the event Last-Event-ID names, that one included: a client sees
    // it twice unless it drops what it has seen by id (as ours does on A2A streams).
    assert_eq!(
        rest.first().map(|(id, _)| id.as_deref()),
        Some(Some(last_id.as_str()))
    );
    let progress: Vec<&str> = first
        .iter()
        .chain(
            rest.iter()
                .filter(|(id, _)| id.as_deref() != Some(last_id.as_str())),
        )
        .filter_map(|(_, m)| m["params"]["message"].as_str())
        .filter(|t| t.ends_with("..."))
        .collect();
    assert_eq!(
        progress,
        ["3...", "2...", "1..."],
        "nothing lost, in order: {first:?}\n{rest:?}"
    );
    let result = &rest.last().expect("the result").1["result"];
    assert_eq!(result["content"][0]["text"], "3\n2\n1\n", "{result}");
}
