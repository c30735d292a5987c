//! The generations group (A2A 1.1, §3.2.7 of the specification's `dev-1.1` text), over an
//! interface the card declares with protocol version 1.1, every request sent with
//! `A2A-Version: 1.1`: a task's `generation` is there, streams number their task events one by
//! one, a long-poll GetTask (`currentGeneration`) is answered at once when the task is past it
//! and held until the task changes when it is not, and a wrong `ifGenerationMatch` is refused.
//!
//! The long-poll hold needs a task that goes on changing after SendMessage returned: the
//! checker sends [`Options::long_task`](crate::check::Options::long_task) (or its own message)
//! with `returnImmediately`, and follows the task with long polls until it ends.

use super::tasks::{message, state_of};
use super::{Target, skip};
use crate::check::Verdict;
use crate::check::card::verdict;
use crate::check::catalog::*;
use crate::check::wire::{Answer, Call, Exchange, clip};
use a2a_core::{ErrorKind, Method};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// Every request of the group speaks 1.1.
const V11: Call<'static> = Call {
    version: Some("1.1"),
    credentials: true,
};

/// A poll answered sooner than this with the generation it was asked to wait past was not
/// held (a server MAY answer early on a time-out of its own, but not one this short).
const NOT_HELD: Duration = Duration::from_secs(1);

/// A poll answered with a newer generation after at least this long was held until the change.
const HELD: Duration = Duration::from_millis(50);

/// At most this many long polls follow one task.
const MAX_POLLS: usize = 40;

/// A task's (or event's) `generation`: an `int64`, which ProtoJSON writes as a decimal string
/// (a number is read too). `Err` says what is wrong with it.
fn generation(v: &Value) -> Result<i64, String> {
    let g = match &v["generation"] {
        Value::Null => return Err("no `generation`".to_owned()),
        Value::String(s) => s.parse::<i64>().map_err(|_| format!("generation {s:?}"))?,
        Value::Number(n) => n.as_i64().ok_or_else(|| format!("generation {n}"))?,
        other => return Err(format!("generation {other}")),
    };
    if g < 1 {
        // 0 is what a server that does not implement generations sends (§3.2.7).
        return Err(format!("generation {g} (a task's is 1 or more)"));
    }
    Ok(g)
}

fn finished(task: &Value) -> bool {
    state_of(task).is_some_and(|s| s.ends_stream())
}

/// The generations group; `streaming` is the card's capability, `long_task` the text of a
/// message that keeps the agent working.
pub(super) async fn generations(t: &Target<'_>, streaming: bool, long_task: Option<&str>) {
    let params = json!({"message": message("generations", None)});
    let answer = t.call_with(Method::SendMessage, params, V11).await;
    let task = match &answer.result {
        Ok(v) => v.get("task").cloned(),
        Err(f) => {
            let detail = format!("SendMessage with A2A-Version 1.1 failed: {}", f.describe());
            t.record(GEN_PRESENT, Verdict::Fail, detail, Some(&answer.exchange));
            return skip(t, &GENERATIONS[1..], "SendMessage failed");
        }
    };
    let Some(task) = task else {
        let why = "the agent answered with a Message, not a task";
        return skip(t, GENERATIONS, why);
    };
    let id = task["id"].as_str().unwrap_or_default().to_owned();
    let Some(at) = present(t, &answer, &task, &id).await else {
        return skip(t, &GENERATIONS[1..], "no task generation to work from");
    };
    if streaming {
        gap_free(t).await;
    } else {
        let why = "the card does not declare streaming";
        t.record(GEN_GAP_FREE, Verdict::Skip, why, None);
    }
    poll_past(t, &id, at).await;
    // The long task, still going: the mismatch is checked on it (a message to an ended task
    // may be refused before its generation is compared), then it is followed by long polls.
    let running = start_long_task(t, long_task).await;
    match &running {
        Ok((task, at)) => mismatch(t, task, *at).await,
        Err(_) => mismatch(t, &task, at).await,
    }
    match running {
        Ok((task, at)) => poll_holds(t, &task, at).await,
        Err(why) => t.record(GEN_POLL_HOLDS, Verdict::Skip, why, None),
    }
}

/// `generations.present`: the sent task's generation, and GetTask's (never less). Returns the
/// latest.
async fn present(t: &Target<'_>, sent: &Answer, task: &Value, id: &str) -> Option<i64> {
    let first = match generation(task) {
        Ok(g) => g,
        Err(e) => {
            let detail = format!("SendMessage's task: {e}");
            t.record(GEN_PRESENT, Verdict::Fail, detail, Some(&sent.exchange));
            return None;
        }
    };
    let answer = t.call_with(Method::GetTask, json!({"id": id}), V11).await;
    let got = match &answer.result {
        Ok(v) => generation(v),
        Err(f) => Err(format!("GetTask failed: {}", f.describe())),
    };
    let (ok, detail, latest) = match got {
        Ok(g) if g >= first => (true, String::new(), Some(g)),
        Ok(g) => (
            false,
            format!("SendMessage gave generation {first}, then GetTask {g}"),
            None,
        ),
        Err(e) => (false, format!("GetTask's task: {e}"), None),
    };
    t.record(GEN_PRESENT, verdict(ok), detail, Some(&answer.exchange));
    latest
}

/// `generations.gap-free`: a 1.1 stream's task events, numbered one by one. A `message` event
/// between two may take a number too (it is not a task mutation in §3.2.7, but a server may
/// count it as a change of the task); no other gap is allowed, and no repeat.
async fn gap_free(t: &Target<'_>) {
    let params = json!({"message": message("generations, streamed", None)});
    let streamed = t
        .stream_with(Method::SendStreamingMessage, params, V11)
        .await;
    if let Some(fault) = &streamed.opened {
        let detail = format!("the stream was refused: {}", fault.describe());
        let ex = Some(&streamed.exchange);
        return t.record(GEN_GAP_FREE, Verdict::Fail, detail, ex);
    }
    let mut problems = Vec::new();
    let (mut last, mut messages, mut id) = (None::<i64>, 0, None);
    for (n, event) in streamed.events.iter().enumerate() {
        let Ok(event) = event else { continue };
        if event.get("message").is_some() {
            messages += 1;
            continue;
        }
        let Some(payload) = ["task", "statusUpdate", "artifactUpdate"]
            .iter()
            .find_map(|k| event.get(*k))
        else {
            continue;
        };
        id = id.or_else(|| {
            (payload.get("taskId").or_else(|| payload.get("id")))
                .and_then(Value::as_str)
                .map(str::to_owned)
        });
        let g = match generation(payload) {
            Ok(g) => g,
            Err(e) => {
                problems.push(format!("event {}: {e}", n + 1));
                continue;
            }
        };
        if let Some(prev) = last
            && !(prev + 1..=prev + 1 + messages).contains(&g)
        {
            problems.push(format!("event {}: generation {g} after {prev}", n + 1));
        }
        last = Some(g);
        messages = 0;
    }
    let Some(last) = last else {
        let detail = match problems.first() {
            Some(p) => p.clone(),
            None => "no task event in the stream".to_owned(),
        };
        return t.record(
            GEN_GAP_FREE,
            Verdict::Fail,
            detail,
            Some(&streamed.exchange),
        );
    };
    let mut exchange = streamed.exchange;
    if let Some(id) = id.filter(|_| problems.is_empty()) {
        let answer = t.call_with(Method::GetTask, json!({"id": id}), V11).await;
        match answer.result.as_ref().map(generation) {
            Ok(Ok(g)) if g == last => {}
            Ok(Ok(g)) => problems.push(format!(
                "the stream's last event is at generation {last}, GetTask then gives {g}"
            )),
            Ok(Err(e)) => problems.push(format!("GetTask's task: {e}")),
            Err(f) => problems.push(format!("GetTask failed: {}", f.describe())),
        }
        if !problems.is_empty() {
            exchange = answer.exchange;
        }
    }
    let ok = problems.is_empty();
    t.record(
        GEN_GAP_FREE,
        verdict(ok),
        problems.join("; "),
        Some(&exchange),
    );
}

/// A GetTask long poll of `id` past `at`, timed.
async fn poll(t: &Target<'_>, id: &str, at: i64) -> (Answer, Duration) {
    let params = json!({"id": id, "currentGeneration": at.to_string()});
    let started = Instant::now();
    let answer = t.call_with(Method::GetTask, params, V11).await;
    (answer, started.elapsed())
}

/// `generations.poll-past`: a poll the task is already past is answered at once.
async fn poll_past(t: &Target<'_>, id: &str, at: i64) {
    let (answer, took) = poll(t, id, at - 1).await;
    let detail = match answer.result.as_ref().map(generation) {
        Err(f) => Some(format!("GetTask failed: {}", f.describe())),
        Ok(Err(e)) => Some(format!("the task: {e}")),
        Ok(Ok(g)) if g < at => Some(format!("generation {g}, below the {at} seen before")),
        Ok(Ok(_)) if took >= NOT_HELD => Some(format!(
            "answered after {took:.1?} for currentGeneration {}, which the task (at {at}) is past",
            at - 1
        )),
        Ok(Ok(_)) => None,
    };
    let ok = detail.is_none();
    let detail = detail.unwrap_or_default();
    t.record(GEN_POLL_PAST, verdict(ok), detail, Some(&answer.exchange));
}

/// A task that is still going when SendMessage (`returnImmediately`) returns, and its
/// generation; `Err` says why there is none.
async fn start_long_task(t: &Target<'_>, text: Option<&str>) -> Result<(Value, i64), String> {
    let mut m = message("long poll", None);
    if let Some(text) = text {
        m["parts"] = json!([{"text": text}]);
    }
    let params = json!({"message": m, "configuration": {"returnImmediately": true}});
    let answer = t.call_with(Method::SendMessage, params, V11).await;
    let task = match &answer.result {
        Ok(v) => v.get("task").cloned(),
        Err(f) => return Err(format!("SendMessage failed: {}", f.describe())),
    };
    let task = task.ok_or("the agent answered with a Message, not a task")?;
    if finished(&task) {
        return Err(format!(
            "the task was {} when SendMessage returned, with nothing left to wait for: \
             name a message that keeps the agent working (--long-task TEXT; the inspector's \"long task\" field)",
            task["status"]["state"]
        ));
    }
    let at = generation(&task).map_err(|e| format!("the task: {e}"))?;
    Ok((task, at))
}

/// `generations.mismatch`: a message to `task` requiring a generation it is not at.
async fn mismatch(t: &Target<'_>, task: &Value, at: i64) {
    let mut m = message("generations, a stale answer", task["contextId"].as_str());
    m["taskId"] = task["id"].clone();
    let wrong = at + 1_000_000;
    let config = json!({"ifGenerationMatch": wrong.to_string()});
    let params = json!({"message": m, "configuration": config});
    let answer = t.call_with(Method::SendMessage, params, V11).await;
    let refused_otherwise = answer
        .result
        .as_ref()
        .err()
        .is_some_and(|f| !t.matches(f, ErrorKind::TaskGenerationMismatch));
    if finished(task) && refused_otherwise {
        // An ended task takes no message, whatever its generation: which refusal comes first
        // is not the spec's to say.
        let fault = answer.result.as_ref().err().map(|f| f.describe());
        let why = format!(
            "the ended task was refused with {} before its generation was compared: \
             name a message that keeps the agent working (--long-task TEXT; the inspector's \"long task\" field)",
            fault.unwrap_or_default()
        );
        return t.record(GEN_MISMATCH, Verdict::Skip, why, None);
    }
    t.expect_error(GEN_MISMATCH, &answer, ErrorKind::TaskGenerationMismatch);
}

/// `generations.poll-holds`: `task` (at `at`, still going) followed by long polls until it
/// ends. Any poll answered within [`NOT_HELD`] with the generation it asked to wait past fails;
/// a pass needs one answered with a newer generation after [`HELD`] or more.
async fn poll_holds(t: &Target<'_>, task: &Value, mut at: i64) {
    let id = task["id"].as_str().unwrap_or_default();
    let mut held: Option<(Duration, i64, Exchange)> = None;
    for _ in 0..MAX_POLLS {
        let (answer, took) = poll(t, id, at).await;
        let latest = match &answer.result {
            Ok(v) => v,
            Err(f) if f.http == 0 && f.grpc.is_none() => {
                // No answer within the checker's time-out: held, without a change to see.
                let why = format!(
                    "no answer within {:?} (held, but the task did not change meanwhile)",
                    t.run.probe.timeout
                );
                return t.record(GEN_POLL_HOLDS, Verdict::Skip, why, Some(&answer.exchange));
            }
            Err(f) => {
                let detail = format!("GetTask failed: {}", f.describe());
                let ex = Some(&answer.exchange);
                return t.record(GEN_POLL_HOLDS, Verdict::Fail, detail, ex);
            }
        };
        let g = match generation(latest) {
            Ok(g) => g,
            Err(e) => {
                let detail = format!("the task: {e}");
                let ex = Some(&answer.exchange);
                return t.record(GEN_POLL_HOLDS, Verdict::Fail, detail, ex);
            }
        };
        if g <= at && took < NOT_HELD && !finished(latest) {
            let detail = format!(
                "currentGeneration {at} was answered after {took:.1?} with generation {g}, the \
                 task {}: not held until it changed",
                latest["status"]["state"]
            );
            let ex = Some(&answer.exchange);
            return t.record(GEN_POLL_HOLDS, Verdict::Fail, detail, ex);
        }
        if g > at && took >= HELD && held.is_none() {
            held = Some((took, g, answer.exchange.clone()));
        }
        at = at.max(g);
        if finished(latest) {
            break;
        }
    }
    match held {
        Some((took, g, exchange)) => t.record(
            GEN_POLL_HOLDS,
            Verdict::Pass,
            format!("held {took:.1?}, then answered with generation {g}"),
            Some(&exchange),
        ),
        None => t.record(
            GEN_POLL_HOLDS,
            Verdict::Skip,
            clip(
                "the task had always changed by the time a poll arrived: no hold was seen",
                200,
            ),
            None,
        ),
    }
}
