//! A server on PostgreSQL killed around a new task's single write (issue 41): its message
//! claim, lease and task are one transaction at the task's first reveal, so a crash before it
//! leaves nothing (the retried send runs afresh), and a crash after it, before the answer,
//! leaves the task, which the retried send is answered with: its own run of the agent finds
//! the claim at its first write, writes nothing, and answers with the task written first.
#![cfg(all(feature = "postgres", feature = "cli", feature = "testing"))]

mod pg;
mod process;

use pg::TestSchema;
use process::{Process, full_log};
use serde_json::{Value, json};

fn message(id: &str, text: &str) -> Value {
    json!({"message": {"messageId": id, "role": "ROLE_USER", "parts": [{"text": text}]}})
}

/// The arguments of a replica on `db`.
fn args(db: &TestSchema) -> Vec<&str> {
    vec![
        "--postgres",
        &db.url,
        "--postgres-schema",
        &db.schema,
        "--postgres-pool",
        "4",
        "--replica-id",
        "r0",
    ]
}

/// Starts a replica with the fault `fault` (`A2A_FAULT`), sends `body`, and sees it abort
/// before it answers.
async fn crash_on_first_send(db: &TestSchema, http: &reqwest::Client, fault: &str, body: &Value) {
    let server = Process::with_args_env(&args(db), &[("A2A_FAULT", fault)]);
    process::aborts_before_answering(server, http, body).await;
}

/// Sends `body` to `url`; the answer must be a success.
async fn send(http: &reqwest::Client, url: &str, body: &Value) -> Value {
    let r = http
        .post(format!("{url}/message:send"))
        .json(body)
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success(), "answered: {}", r.status());
    r.json().await.unwrap()
}

#[tokio::test]
async fn a_crash_before_a_new_tasks_write_leaves_nothing_and_the_retry_runs_afresh() {
    let Some(db) = TestSchema::new().await else {
        return;
    };
    let http = reqwest::Client::new();
    let body = message("pg-crash-before", "hello");
    crash_on_first_send(&db, &http, "abort-before-batch", &body).await;
    // Neither the task nor its claim nor its lease: they were to be one transaction.
    for table in ["a2a_tasks", "a2a_claims", "a2a_leases"] {
        assert_eq!(db.count(table).await, 0, "{table}");
    }
    let server = Process::with_args(&args(&db));
    server.ready(&http).await;
    let retry = send(&http, &server.url, &body).await;
    assert_eq!(
        retry["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{retry}"
    );
    assert_eq!(db.count("a2a_tasks").await, 1);
    let id = retry["task"]["id"].as_str().unwrap();
    assert_eq!(
        send(&http, &server.url, &body).await["task"]["id"],
        id,
        "and again"
    );
}

#[tokio::test]
async fn a_crash_between_a_new_tasks_write_and_its_answer_answers_the_retried_send_once() {
    let Some(db) = TestSchema::new().await else {
        return;
    };
    let http = reqwest::Client::new();
    let body = message("pg-crash-after", "hello");
    crash_on_first_send(&db, &http, "abort-after-batch", &body).await;
    // Written whole: the task, its claim; no lease (it finished in that write).
    assert_eq!(db.count("a2a_tasks").await, 1);
    assert_eq!(db.count("a2a_claims").await, 1);
    assert_eq!(db.count("a2a_leases").await, 0);

    let server = Process::with_args(&args(&db));
    server.ready(&http).await;
    let url = &server.url;
    let retry = send(&http, url, &body).await;
    let id = retry["task"]["id"].as_str().expect("a task").to_owned();
    assert_eq!(retry["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(
        retry["task"]["artifacts"][0]["parts"][0]["text"], "echo: hello",
        "{retry}"
    );
    assert_eq!(db.count("a2a_tasks").await, 1, "no second task");
    let log = full_log(&http, url, &id).await;
    let seqs: Vec<u64> = log.iter().map(|e| e.id).collect();
    assert_eq!(
        seqs,
        [1, 2],
        "creation (with the artifact), completion: {log:?}"
    );
    assert_eq!(
        send(&http, url, &body).await["task"]["id"],
        id.as_str(),
        "and again"
    );
}
