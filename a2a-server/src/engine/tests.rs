//! Cells of idle, finished and abandoned tasks are freed, whoever lets go of them last; a
//! send's future stays small.

use crate::{Agent, CallContext, RequestContext, SendReply, Server, TaskEvents};
use a2a_core::{Error, Message, SendMessageRequest, TaskState};
use std::time::Duration;

/// Asks a question (and lingers a moment); completes when answered.
struct Asker;

impl Agent for Asker {
    async fn execute(&self, cx: RequestContext, events: TaskEvents) -> Result<(), Error> {
        if cx.stored_task.is_some() {
            return events.complete(None).await;
        }
        events.input_required("which one?").await?;
        if cx.message.text() == "keep" {
            // A handle kept past the execution: its drop frees the cell.
            let kept = events.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(20)).await;
                drop(kept);
            });
            return Ok(());
        }
        // Still running when the caller has its answer: the execution's own wrap-up must
        // free the cell.
        tokio::time::sleep(Duration::from_millis(5)).await;
        Ok(())
    }
}

#[tokio::test]
async fn tasks_waiting_for_input_keep_no_cell() {
    let server = Server::builder(Asker).build().expect("server");
    let h = server.handler();
    let cx = CallContext::default();
    let mut asked = Vec::new();
    for i in 0..200 {
        let text = if i % 10 == 1 {
            "keep".to_owned()
        } else {
            format!("job {i}")
        };
        let req = SendMessageRequest::new(Message::user_text(text));
        let Ok(SendReply::Task(task)) = h.send_message(&cx, req).await else {
            panic!("a task");
        };
        assert_eq!(task.status.state, TaskState::InputRequired);
        asked.push(task.id.clone());
    }
    for id in asked.iter().step_by(2) {
        let answer = Message::user_text("this one").with_task_id(id.clone());
        let Ok(SendReply::Task(task)) = h.send_message(&cx, SendMessageRequest::new(answer)).await
        else {
            panic!("a task");
        };
        assert_eq!(task.status.state, TaskState::Completed);
    }
    // Each execution frees its cell as it wraps up, just after its last event.
    let freed = async {
        while !h.rt.cells.lock().expect("cells lock").is_empty() {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(10), freed)
        .await
        .expect("no cell is left for an idle or finished task");
}

/// Holders let go of a cell on several threads at once (the execution's wrap-up, the
/// caller, a duplicate of the send waiting on the same task, a reader), and some callers
/// vanish mid-request: whichever lets go last frees the cell.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_cell_is_freed_by_whoever_lets_go_last() {
    let server = Server::builder(Asker).build().expect("server");
    let h = server.handler();
    let mut calls = tokio::task::JoinSet::new();
    for i in 0..400 {
        let h = h.clone();
        calls.spawn(async move {
            let cx = CallContext::default();
            let message = Message::user_text(format!("job {i}"));
            let req = SendMessageRequest::new(message.clone());
            let send = h.send_message(&cx, req);
            if i % 4 == 3 {
                // A caller that vanishes mid-request.
                let _ = tokio::time::timeout(Duration::from_micros(50), send).await;
                return;
            }
            let (first, again) =
                tokio::join!(send, h.send_message(&cx, SendMessageRequest::new(message)));
            for reply in [first, again] {
                let Ok(SendReply::Task(task)) = reply else {
                    panic!("a task");
                };
                assert_eq!(task.status.state, TaskState::InputRequired);
                let read = h
                    .get_task(&cx, a2a_core::GetTaskRequest::new(task.id.clone()))
                    .await;
                assert!(read.is_ok(), "{read:?}");
            }
        });
    }
    while let Some(done) = calls.join_next().await {
        done.expect("no call panics");
    }
    let freed = async {
        while !h.rt.cells.lock().expect("cells lock").is_empty() {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    };
    let left = || h.rt.cells.lock().expect("cells lock").len();
    tokio::time::timeout(Duration::from_secs(10), freed)
        .await
        .unwrap_or_else(|_| panic!("{} cells left with nothing holding them", left()));
}

/// The last of several holders dropping theirs on different threads at the same moment,
/// or a reader that finds a cell as its last holder drops it: no cell stays behind, and
/// a cell found is never one already dropped.
#[test]
fn concurrent_drops_leave_no_cell_behind() {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let _entered = runtime.enter();
    let server = Server::builder(Asker).build().expect("server");
    let rt = server.handler().rt.clone();
    for _ in 0..2_000 {
        let cell = rt.cell_for_new(
            a2a_core::TaskId::random(),
            a2a_core::ContextId::random(),
            crate::store::Scope::default(),
            Message::user_text("x"),
            None,
        );
        let id = cell.id.clone();
        let holders = [cell.clone(), cell.clone(), cell];
        let start = std::sync::Barrier::new(4);
        std::thread::scope(|s| {
            for held in holders {
                let start = &start;
                s.spawn(move || {
                    start.wait();
                    drop(held);
                });
            }
            start.wait();
            if let Some(found) = rt.live_cell(&id) {
                assert_eq!(found.id, id);
            }
        });
    }
    assert_eq!(rt.cells.lock().expect("cells lock").len(), 0);
}

/// A `SendMessage`'s future, copied whole into a box on every request, holds the request once
/// and its common steps' futures: not a copy of the request at every level, nor the futures of
/// rare branches (a failed start's undo, a retry's webhook), which made it over 5 KiB.
#[tokio::test]
async fn a_sends_future_holds_the_request_once() {
    let server = Server::builder(Asker).build().expect("server");
    let h = server.handler();
    let cx = CallContext::default();
    let send = h.send_message(&cx, SendMessageRequest::new(Message::user_text("hi")));
    let size = std::mem::size_of_val(&send);
    assert!(size < 2048, "a send's future takes {size} bytes");
    drop(send);
}
