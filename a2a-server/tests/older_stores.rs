//! Stores written by older releases open in this one and answer as those releases did.
//!
//! `older_stores/<release>-<engine>/data` is the data directory a release's `a2a-server` left
//! after serving three tasks, and `answers.json` what it answered to GetTask for each;
//! `older_stores/write.sh` wrote both with that release's binary. Issue 41 changed the layout
//! twice, and each fixture comes from before one change:
//! - 3a08a5b (sled): a task's creation is its log's first entry, not in its head, and
//!   retention has a tree of its own: this release moves each creation into its head, and
//!   drops that tree, when it opens the store;
//! - 0ce9695 (sled and fjall): a task's later events are all in its log, and the retention
//!   tree is still there: read as they are, the tree dropped at open.
//!
//! The tests open a copy of each directory, read every task and its whole log, list them, and
//! continue the task that was waiting for input.

mod served;

use a2a_server::demo::DemoAgent;
use a2a_server::{FjallStore, Server, SledStore, Store};
use serde_json::{Value, json};
use std::path::Path;
use std::sync::Arc;

/// A copy of `from` in `to`, files and directories.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// The fixture `name`: a fresh copy of its data directory (the test writes to it), and the
/// tasks the older release answered.
fn fixture(name: &str) -> (tempfile::TempDir, Vec<Value>) {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/older_stores")
        .join(name);
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&here.join("data"), dir.path());
    let answers = std::fs::read(here.join("answers.json")).unwrap();
    let answers: Value = serde_json::from_slice(&answers).unwrap();
    let tasks = answers["tasks"].as_array().unwrap().clone();
    assert_eq!(tasks.len(), 3, "hello, greet and countdown 3");
    (dir, tasks)
}

/// The task whose first message was `text`.
fn opened_by<'a>(tasks: &'a [Value], text: &str) -> &'a Value {
    tasks
        .iter()
        .find(|t| t["history"][0]["parts"][0]["text"] == text)
        .unwrap_or_else(|| panic!("no task opened by {text:?}"))
}

async fn reads_as_the_older_release_answered(store: Arc<dyn Store>, tasks: &[Value]) {
    // Every task's log reads whole: one event per version, none missing (the format change
    // moved each task's first event from its log into its head).
    for task in tasks {
        let id = a2a_core::TaskId::from(task["id"].as_str().unwrap());
        let stored = store.get(&id).await.unwrap().expect("the task is there");
        let log = store.events(&id, 0, 1000).await.unwrap();
        let seqs: Vec<u64> = log.iter().map(|e| e.seq).collect();
        assert_eq!(
            seqs,
            (1..=stored.version).collect::<Vec<_>>(),
            "{id}'s log, whole and in order"
        );
    }
    let url = served::start(Server::builder(DemoAgent).task_store_arc(store)).await;
    for task in tasks {
        let got = served::rpc(&url, None, "GetTask", json!({"id": task["id"]})).await;
        assert_eq!(
            &got["result"], task,
            "GetTask answers as the older release did"
        );
    }
    let listed = served::rpc(&url, None, "ListTasks", json!({})).await;
    let mut ids: Vec<&str> = listed["result"]["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    let mut expected: Vec<&str> = tasks.iter().map(|t| t["id"].as_str().unwrap()).collect();
    ids.sort_unstable();
    expected.sort_unstable();
    assert_eq!(ids, expected, "ListTasks lists every task");

    // The task that was waiting for a name goes on where it stopped.
    let greet = opened_by(tasks, "greet");
    assert_eq!(greet["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
    let mut reply = served::message("m-ada", "Ada");
    reply["message"]["taskId"] = greet["id"].clone();
    reply["message"]["contextId"] = greet["contextId"].clone();
    let done = served::rpc(&url, None, "SendMessage", reply).await;
    let task = &done["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{done}");
    assert_eq!(
        task["status"]["message"]["parts"][0]["text"], "Hello, Ada!",
        "{done}"
    );
    let again = served::rpc(&url, None, "GetTask", json!({"id": greet["id"]})).await;
    assert_eq!(again["result"], *task, "the continuation is stored");
}

#[tokio::test]
async fn a_sled_store_whose_heads_lack_their_creation_is_migrated_and_goes_on() {
    let (dir, tasks) = fixture("3a08a5b-sled");
    let store: Arc<dyn Store> = Arc::new(SledStore::open(dir.path()).unwrap());
    reads_as_the_older_release_answered(store, &tasks).await;
}

#[tokio::test]
async fn a_sled_store_with_every_event_in_the_log_reads_the_same_and_goes_on() {
    let (dir, tasks) = fixture("0ce9695-sled");
    let store: Arc<dyn Store> = Arc::new(SledStore::open(dir.path()).unwrap());
    reads_as_the_older_release_answered(store, &tasks).await;
}

#[tokio::test]
async fn a_fjall_store_with_every_event_in_the_log_reads_the_same_and_goes_on() {
    let (dir, tasks) = fixture("0ce9695-fjall");
    let store: Arc<dyn Store> = Arc::new(FjallStore::open(dir.path()).unwrap());
    reads_as_the_older_release_answered(store, &tasks).await;
}
