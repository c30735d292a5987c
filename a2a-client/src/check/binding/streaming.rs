//! The streaming group: SendStreamingMessage's framing, first event, order and end, and
//! SubscribeToTask of a finished task.

use super::tasks::{message, state_of};
use super::{Target, expect_refused_stream, skip};
use crate::check::Verdict;
use crate::check::card::verdict;
use crate::check::catalog::*;
use crate::check::wire::{LINGER, Wire, clip, ends_stream};
use a2a_core::{ErrorKind, Method};
use serde_json::{Value, json};

pub(super) async fn streaming(t: &Target<'_>, declared: bool) {
    let params = json!({"message": message("stream", None)});
    if !declared {
        let streamed = t.stream(Method::SendStreamingMessage, params).await;
        let kind = ErrorKind::UnsupportedOperation;
        expect_refused_stream(t, STREAM_UNSUPPORTED, &streamed, kind);
        return;
    }
    let streamed = t.stream(Method::SendStreamingMessage, params).await;
    let ex = Some(&streamed.exchange);
    let rest = [
        STREAM_FRAMING,
        STREAM_FIRST,
        STREAM_ORDER,
        STREAM_CLOSES,
        STREAM_SUBSCRIBE_TERMINAL,
    ];
    if let Some(fault) = &streamed.opened {
        let detail = format!("refused: {}", fault.describe());
        t.record(STREAM_OPENS, Verdict::Fail, detail, ex);
        skip(t, &rest, "the stream did not open");
        return;
    }
    let opened = match t.wire {
        Wire::Grpc(..) => streamed.broken.is_none() || !streamed.events.is_empty(),
        _ => streamed.media_type == "text/event-stream",
    };
    let detail = match &streamed.broken {
        Some(b) if streamed.events.is_empty() => b.clone(),
        _ => format!("Content-Type is {:?}", streamed.media_type),
    };
    t.record(STREAM_OPENS, verdict(opened), detail, ex);
    if !opened {
        skip(t, &rest, "the stream did not open");
        return;
    }

    let bad: Vec<&str> = streamed
        .events
        .iter()
        .filter_map(|e| e.as_ref().err())
        .map(String::as_str)
        .collect();
    let detail = if streamed.events.is_empty() {
        "no events".to_owned()
    } else {
        bad.join("; ")
    };
    let framed = bad.is_empty() && !streamed.events.is_empty();
    t.record(STREAM_FRAMING, verdict(framed), detail, ex);

    let events: Vec<&Value> = streamed
        .events
        .iter()
        .filter_map(|e| e.as_ref().ok())
        .collect();
    let first = events.first();
    let first_ok = first.is_some_and(|e| e.get("task").is_some() || e.get("message").is_some());
    let shown = first.map_or("missing".to_owned(), |e| clip(&e.to_string(), 120));
    t.record(
        STREAM_FIRST,
        verdict(first_ok),
        format!("the first event is {shown}"),
        ex,
    );

    // Order: one task, its state forward only (a repeated state is a progress update, or the
    // final snapshot a stream may end with).
    let task = first.and_then(|e| e.get("task"));
    let mut problems = Vec::new();
    let mut state = task.and_then(state_of);
    if let Some(task) = task {
        for e in events.iter().skip(1) {
            let (ids, next) = if let Some(s) = e.get("statusUpdate") {
                (Some(s), state_of(s))
            } else if let Some(a) = e.get("artifactUpdate") {
                (Some(a), None)
            } else if let Some(snapshot) = e.get("task") {
                (Some(snapshot), state_of(snapshot))
            } else {
                problems.push("a message after the task's first event".to_owned());
                (None, None)
            };
            // A snapshot names its task `id`; updates name it `taskId`.
            if let Some(ids) = ids {
                let id = ids.get("taskId").unwrap_or(&ids["id"]);
                if *id != task["id"] || ids["contextId"] != task["contextId"] {
                    problems.push(format!(
                        "an event of task {id} / context {} in the stream of {} / {}",
                        ids["contextId"], task["id"], task["contextId"]
                    ));
                }
            }
            if let Some(next) = next {
                if let Some(previous) = &state
                    && *previous != next
                    && !previous.can_transition_to(&next)
                {
                    problems.push(format!("{previous} went back to {next}"));
                }
                state = Some(next);
            }
        }
    }
    if first_ok {
        let ok = verdict(problems.is_empty());
        t.record(STREAM_ORDER, ok, problems.join("; "), ex);
    } else {
        t.record(STREAM_ORDER, Verdict::Skip, "no task to follow", None);
    }

    let ended = events.last().is_some_and(|e| ends_stream(e));
    let (closes, detail) = match (ended, streamed.closed) {
        (true, true) => (Verdict::Pass, String::new()),
        (true, false) => (
            Verdict::Fail,
            format!("the stream stayed open {LINGER:?} after its last state"),
        ),
        (false, true) => (
            Verdict::Fail,
            "the stream closed before a terminal or interrupted state".to_owned(),
        ),
        // Still working when the checker stopped following: nothing to conclude.
        (false, false) => (
            Verdict::Skip,
            "no terminal or interrupted state arrived while the checker followed the stream"
                .to_owned(),
        ),
    };
    t.record(STREAM_CLOSES, closes, detail, ex);

    match (task, state) {
        (Some(task), Some(s)) if s.is_terminal() => {
            let id = task["id"].as_str().unwrap_or_default();
            let streamed = t.stream(Method::SubscribeToTask, json!({"id": id})).await;
            let kind = ErrorKind::UnsupportedOperation;
            expect_refused_stream(t, STREAM_SUBSCRIBE_TERMINAL, &streamed, kind);
        }
        _ => t.record(
            STREAM_SUBSCRIBE_TERMINAL,
            Verdict::Skip,
            "the streamed task did not finish",
            None,
        ),
    }
}
