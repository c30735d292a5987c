//! Nothing lost when the server process dies: a task acknowledged to a client survives
//! `kill -9` (on sled and on fjall); every task's event log is gap-free; a stream resumed with
//! `Last-Event-ID` yields exactly the events it missed; a send retried after a crash is answered
//! once, or runs afresh when its task was never written.

mod served;

use serde_json::Value;
use served::{get_json, message};
#[cfg(feature = "cli")]
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::timeout;

const WAIT: Duration = Duration::from_secs(20);

// A real server process, and a small SSE reader over reqwest (with the `cli` feature, which
// builds the binary).
#[cfg(feature = "cli")]
mod process;
#[cfg(feature = "cli")]
use process::{Process, full_log, read_sse, task_id_of};

/// Starts a server on the embedded store `store` with the fault `fault` (`A2A_FAULT`), sends
/// `body`, and sees the server abort before it answers.
#[cfg(all(feature = "cli", feature = "testing"))]
async fn crash_on_first_send(
    dir: &std::path::Path,
    store: &str,
    http: &reqwest::Client,
    fault: &str,
    body: &Value,
) {
    let server = Process::with_env(dir, &[("A2A_FAULT", fault), ("A2A_STORE", store)]);
    process::aborts_before_answering(server, http, body).await;
}

/// A crash while a task waits unwritten (write-behind), after its message's claim became
/// durable with another task's flush: the client got no answer; its retry is told that the
/// first send was lost (rather than waiting on a claim whose task will never exist), and the
/// next one runs the agent afresh. One task.
#[cfg(all(feature = "cli", feature = "testing"))]
#[tokio::test]
async fn a_crash_before_a_tasks_first_write_lets_the_retried_send_run_afresh() {
    let dir = tempfile::tempdir().unwrap();
    let http = reqwest::Client::new();
    let body = message("crash-2", "hello");
    crash_on_first_send(dir.path(), "sled", &http, "abort-before-batch", &body).await;

    let server = Process::start(dir.path());
    server.ready(&http).await;
    let url = &server.url;
    let send = || async {
        let r = http
            .post(format!("{url}/message:send"))
            .json(&body)
            .send()
            .await
            .unwrap();
        (r.status(), r.json::<Value>().await.unwrap())
    };
    // The claim names a task that was never written: the retry says so and lets the claim go.
    let (status, refused) = send().await;
    assert!(
        !status.is_success() && refused.to_string().contains("lost in a server restart"),
        "{status} {refused}"
    );
    let (status, retry) = send().await;
    assert!(
        status.is_success(),
        "the next retry runs afresh: {status} {retry}"
    );
    assert_eq!(
        retry["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{retry}"
    );
    let listed: Value = get_json(&http, &format!("{url}/tasks")).await;
    assert_eq!(
        listed["tasks"].as_array().map(Vec::len),
        Some(1),
        "one task: {listed}"
    );
}

/// The crash between a batch's write and its reveal (write-behind, `engine/cell/outbox.rs`):
/// the server aborts once the task of a blocking send is written and flushed, before it
/// answers. The client got no answer; its retry, to the restarted server, is answered with
/// the task the first send wrote, and the agent does not run again: one task, whose log is
/// the first run's.
#[cfg(all(feature = "cli", feature = "testing"))]
#[tokio::test]
async fn a_crash_between_a_batchs_write_and_its_reveal_answers_the_retried_send_once() {
    crash_between_write_and_reveal("sled").await;
}

/// The same on fjall (`--store fjall`).
#[cfg(all(feature = "cli", feature = "testing"))]
#[tokio::test]
async fn on_fjall_a_crash_between_a_batchs_write_and_its_reveal_answers_the_retried_send_once() {
    crash_between_write_and_reveal("fjall").await;
}

#[cfg(all(feature = "cli", feature = "testing"))]
async fn crash_between_write_and_reveal(store: &str) {
    let dir = tempfile::tempdir().unwrap();
    let http = reqwest::Client::new();
    let body = message("crash-1", "hello");
    crash_on_first_send(dir.path(), store, &http, "abort-after-batch", &body).await;

    let dir_arg = dir.path().to_str().unwrap();
    let server = Process::with_args(&["--data-dir", dir_arg, "--store", store]);
    server.ready(&http).await;
    let url = &server.url;
    let send = || async {
        let r = http
            .post(format!("{url}/message:send"))
            .json(&body)
            .send()
            .await
            .unwrap();
        assert!(
            r.status().is_success(),
            "the retry is answered: {}",
            r.status()
        );
        r.json::<Value>().await.unwrap()
    };
    let retry = send().await;
    let id = retry["task"]["id"].as_str().expect("a task").to_owned();
    assert_eq!(retry["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(
        retry["task"]["artifacts"][0]["parts"][0]["text"], "echo: hello",
        "{retry}"
    );
    // Once: the task the first send wrote, the only one; its log is that run's, gap-free.
    let listed: Value = get_json(&http, &format!("{url}/tasks")).await;
    let ids: Vec<&str> = listed["tasks"]
        .as_array()
        .expect("a listing")
        .iter()
        .filter_map(|t| t["id"].as_str())
        .collect();
    assert_eq!(ids, [id.as_str()], "one task, no second run: {listed}");
    let log = full_log(&http, url, &id).await;
    let seqs: Vec<u64> = log.iter().map(|e| e.id).collect();
    assert_eq!(
        seqs,
        [1, 2],
        "creation (with the artifact), completion: {log:?}"
    );
    assert_eq!(send().await["task"]["id"], id.as_str(), "and again");
}

/// One round: load, SIGKILL after `kill_after`, restart, check everything, on the embedded
/// store `store` (`--store`).
#[cfg(feature = "cli")]
async fn kill_and_check(kill_after: Duration, store: &str) {
    let dir = tempfile::tempdir().unwrap();
    let http = reqwest::Client::new();
    let start =
        || Process::with_args(&["--data-dir", dir.path().to_str().unwrap(), "--store", store]);
    let mut server = start();
    server.ready(&http).await;
    let url = server.url.clone();

    // Blocking senders: every response received is an acknowledged task.
    let acked = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let mut load = Vec::new();
    for worker in 0..6 {
        let (http, url, acked) = (http.clone(), url.clone(), acked.clone());
        load.push(tokio::spawn(async move {
            for i in 0.. {
                let body = message(&format!("w{worker}-{i}"), &format!("hello {worker}/{i}"));
                let Ok(r) = http
                    .post(format!("{url}/message:send"))
                    .json(&body)
                    .send()
                    .await
                else {
                    return;
                };
                let Ok(v) = r.json::<Value>().await else {
                    return;
                };
                if let Some(id) = v["task"]["id"].as_str() {
                    acked.lock().unwrap().push(id.to_owned());
                }
            }
        }));
    }
    // Streaming clients: what each saw before the crash.
    let mut streams = Vec::new();
    for s in 0..4 {
        let (http, url) = (http.clone(), url.clone());
        streams.push(tokio::spawn(async move {
            let mut seen = Vec::new();
            let body = message(&format!("s{s}"), "countdown 40");
            if let Ok(r) = http
                .post(format!("{url}/message:stream"))
                .json(&body)
                .send()
                .await
            {
                read_sse(r, &mut seen).await;
            }
            seen
        }));
    }
    // Kill at the chosen point, but only once the load has been acknowledged at least once.
    tokio::time::sleep(kill_after).await;
    timeout(WAIT, async {
        while acked.lock().unwrap().is_empty() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("the load gets acknowledged");
    server.kill9();
    for l in load {
        let _ = l.await;
    }
    let mut seen_by_stream = Vec::new();
    for s in streams {
        seen_by_stream.push(s.await.unwrap());
    }

    let server = start();
    server.ready(&http).await;
    let url = server.url.clone();
    let acked = acked.lock().unwrap().clone();
    assert!(
        !acked.is_empty(),
        "the load produced acknowledged tasks before the kill"
    );

    // Every acknowledged task exists, completed, with its artifact.
    for id in &acked {
        let t: Value = get_json(&http, &format!("{url}/tasks/{id}")).await;
        assert_eq!(t["id"], id.as_str(), "acknowledged task {id} survived: {t}");
        assert_eq!(t["status"]["state"], "TASK_STATE_COMPLETED");
        assert!(
            t["artifacts"][0]["parts"][0]["text"]
                .as_str()
                .unwrap()
                .starts_with("echo: hello")
        );
    }

    // Every task's log is gap-free, and ends in its current (terminal) state once recovery ran.
    let mut all = Vec::new();
    let mut token = String::new();
    loop {
        let page: Value = get_json(
            &http,
            &format!("{url}/tasks?pageSize=100&pageToken={token}"),
        )
        .await;
        all.extend(
            page["tasks"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["id"].as_str().unwrap().to_owned()),
        );
        token = page["nextPageToken"].as_str().unwrap().to_owned();
        if token.is_empty() {
            break;
        }
    }
    // And listed: the store writes listing keys after the task (a relist), and the reopened store
    // writes those the kill left unwritten.
    let listed: std::collections::HashSet<&String> = all.iter().collect();
    for id in &acked {
        assert!(listed.contains(id), "acknowledged task {id} is listed");
    }
    let mut logs = HashMap::new();
    for id in &all {
        let log = timeout(WAIT, async {
            loop {
                // Recovery fails tasks the old process left running; wait until it has.
                let log = full_log(&http, &url, id).await;
                let last = log.last().map(|e| e.data.clone()).unwrap_or_default();
                let state = last["statusUpdate"]["status"]["state"]
                    .as_str()
                    .or(last["task"]["status"]["state"].as_str())
                    .unwrap_or_default()
                    .to_owned();
                if state != "TASK_STATE_WORKING" && state != "TASK_STATE_SUBMITTED" {
                    return log;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await
        .expect("recovery settles every task");
        let ids: Vec<u64> = log.iter().map(|e| e.id).collect();
        let expected: Vec<u64> = (1..=ids.len() as u64).collect();
        assert_eq!(ids, expected, "task {id}: the log has no gap");
        logs.insert(id.clone(), log);
    }

    // Every interrupted stream: what it saw is exactly the log's prefix, and resuming with
    // Last-Event-ID yields exactly the rest.
    for seen in seen_by_stream {
        let Some(id) = task_id_of(&seen) else {
            continue;
        };
        let log = &logs[&id];
        assert_eq!(
            &log[..seen.len()],
            &seen[..],
            "task {id}: the client saw only durable events"
        );
        let last = seen.last().unwrap().id;
        let response = http
            .get(format!("{url}/tasks/{id}:subscribe"))
            .header("Last-Event-ID", last.to_string())
            .send()
            .await
            .unwrap();
        let mut resumed = Vec::new();
        timeout(WAIT, read_sse(response, &mut resumed))
            .await
            .unwrap();
        assert_eq!(
            &resumed[..],
            &log[seen.len()..],
            "task {id}: resumed with exactly the missing events"
        );
        let final_state = &resumed.last().unwrap_or(seen.last().unwrap()).data;
        assert!(
            final_state["statusUpdate"]["status"]["state"] == "TASK_STATE_FAILED"
                || final_state["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED",
            "task {id} ends completed (if it finished) or failed by the restart: {final_state}"
        );
    }
}

#[cfg(feature = "cli")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_under_load_loses_no_acknowledged_task_and_no_event() {
    for kill_after in [150, 450, 900] {
        kill_and_check(Duration::from_millis(kill_after), "sled").await;
    }
}

#[cfg(feature = "cli")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_under_load_on_fjall_loses_no_acknowledged_task_and_no_event() {
    for kill_after in [150, 450, 900] {
        kill_and_check(Duration::from_millis(kill_after), "fjall").await;
    }
}
