//! The `tck-*` behaviours: what the agent does with a message, keyed on the first word of its
//! first text part (for a message continuing a task, on the task's first message).

use super::instruction::Instruction;
use super::{client_parse, traversal};
use a2a_core::{Artifact, Error, Message, Part, TaskState, TaskStatus};
use a2a_server::{Agent, RequestContext, TaskEvents};
use std::time::Duration;

/// How long `tck-long-running` works: long enough for a client to poll it, subscribe to it
/// twice, hang up and subscribe again, or register a webhook, while it runs.
const LONG_RUNNING_STEPS: u32 = 8;
const LONG_RUNNING_STEP: Duration = Duration::from_millis(500);
/// How long `tck-cancel` waits for its cancellation before it gives up and completes.
const CANCEL_WAIT: Duration = Duration::from_secs(60);

/// A behaviour of the ITK contract.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Behaviour {
    CompleteTask,
    MessageResponse,
    LongRunning,
    MultiTurn,
    StreamBasic,
    StreamChunked,
    Cancel,
    TaskFailure,
    AuthRequired,
    ArtifactText,
    ArtifactData,
    ArtifactFile,
    ArtifactFileUrl,
    ClientParse,
    /// Any other message: completed with an echo.
    Echo,
}

impl Behaviour {
    /// The behaviours and their prefixes, as `acts/sut-behaviors.yaml` lists them.
    const PREFIXES: [(&'static str, Behaviour); 14] = [
        ("tck-complete-task", Behaviour::CompleteTask),
        ("tck-message-response", Behaviour::MessageResponse),
        ("tck-long-running", Behaviour::LongRunning),
        ("tck-multi-turn", Behaviour::MultiTurn),
        ("tck-stream-basic", Behaviour::StreamBasic),
        ("tck-stream-chunked", Behaviour::StreamChunked),
        ("tck-cancel", Behaviour::Cancel),
        ("tck-task-failure", Behaviour::TaskFailure),
        ("tck-auth-required", Behaviour::AuthRequired),
        ("tck-artifact-text", Behaviour::ArtifactText),
        ("tck-artifact-data", Behaviour::ArtifactData),
        ("tck-artifact-file-url", Behaviour::ArtifactFileUrl),
        ("tck-artifact-file", Behaviour::ArtifactFile),
        ("tck-client-parse", Behaviour::ClientParse),
    ];

    /// The behaviour `message` asks for: the first word of its first text part.
    fn of(message: &Message) -> Self {
        let first = message.parts.iter().find_map(Part::as_text).unwrap_or("");
        let word = first.split_whitespace().next().unwrap_or("");
        Self::PREFIXES
            .iter()
            .find(|(prefix, _)| *prefix == word)
            .map_or(Behaviour::Echo, |(_, b)| *b)
    }
}

/// The agent of the ITK contract: every `tck-*` behaviour of the conformance corpus.
#[derive(Clone, Copy, Debug, Default)]
pub struct TckAgent;

impl Agent for TckAgent {
    async fn execute(&self, cx: RequestContext, events: TaskEvents) -> Result<(), Error> {
        if let Some(task) = &cx.stored_task {
            // A message continuing an interrupted task: the task's first message said what
            // it is.
            let started = task.history.first().map_or(Behaviour::Echo, Behaviour::of);
            return continue_task(started, &cx, &events).await;
        }
        if let Some(instruction) = Instruction::of(&cx.message) {
            return follow(&instruction?, &cx, &events).await;
        }
        let text = cx.message.text();
        match Behaviour::of(&cx.message) {
            Behaviour::CompleteTask | Behaviour::Echo => {
                events
                    .artifact(Artifact::text("result", format!("done: {text}")))
                    .await?;
                events.complete(None).await
            }
            Behaviour::MessageResponse => {
                events
                    .reply(Message::agent_text(format!("message response to: {text}")))
                    .await
            }
            Behaviour::LongRunning => long_running(&cx, &events).await,
            // No status message: the task's history stays the user's turns, in order.
            Behaviour::MultiTurn => input_required(&events).await,
            Behaviour::StreamBasic => {
                events.working("generating").await?;
                events
                    .artifact(Artifact::text("stream", format!("streamed: {text}")))
                    .await?;
                events.complete(None).await
            }
            Behaviour::StreamChunked => {
                events.working("generating in chunks").await?;
                let artifact = a2a_core::ArtifactId::random();
                for (i, chunk) in ["first ", "second ", "third"].into_iter().enumerate() {
                    let piece = Artifact::new([Part::text(chunk)])
                        .with_id(artifact.clone())
                        .with_name("chunked");
                    events.artifact_chunk(piece, i > 0, i == 2).await?;
                }
                events.complete(None).await
            }
            Behaviour::Cancel => {
                events.working("waiting to be canceled").await?;
                tokio::select! {
                    () = cx.cancel.cancelled() => Ok(()),
                    () = tokio::time::sleep(CANCEL_WAIT) => events.complete(None).await,
                }
            }
            Behaviour::TaskFailure => {
                events.working("about to fail").await?;
                events
                    .fail("tck-task-failure: the task failed, as asked")
                    .await
            }
            Behaviour::AuthRequired => {
                events
                    .auth_required("tck-auth-required: authorize this agent to go on")
                    .await
            }
            Behaviour::ArtifactText => {
                events
                    .artifact(Artifact::text("text", "a text artifact"))
                    .await?;
                events.complete(None).await
            }
            Behaviour::ArtifactData => {
                let data = serde_json::json!({"kind": "structured", "values": [1, 2, 3]});
                events
                    .artifact(Artifact::new([Part::data(data)]).with_name("data"))
                    .await?;
                events.complete(None).await
            }
            Behaviour::ArtifactFile => {
                let file = Part::raw(b"%PDF-1.4 tck".to_vec())
                    .with_filename("document.pdf")
                    .with_media_type("application/pdf");
                events
                    .artifact(Artifact::new([file]).with_name("file"))
                    .await?;
                events.complete(None).await
            }
            Behaviour::ArtifactFileUrl => {
                let file = Part::url("https://example.com/document.pdf")
                    .with_filename("document.pdf")
                    .with_media_type("application/pdf");
                events
                    .artifact(Artifact::new([file]).with_name("file-url"))
                    .await?;
                events.complete(None).await
            }
            Behaviour::ClientParse => {
                let parsed = client_parse::answer(&cx.message)?;
                events
                    .artifact(Artifact::new([Part::data(parsed)]).with_name("parsed"))
                    .await?;
                events.complete(None).await
            }
        }
    }

    async fn cancel(&self, _cx: RequestContext, _events: TaskEvents) -> Result<(), Error> {
        // Accepted: the server cancels the task and triggers the execution's token.
        Ok(())
    }
}

/// How often, and how many times, a held task reports that it is still working before it
/// completes on its own.
const HOLD_BEATS: u32 = 5;
const HOLD_BEAT: Duration = Duration::from_secs(2);

/// Follows an ITK traversal instruction: the answers, one per line, in the completed task's
/// status message; a held answer stays WORKING (marked `task-finished`) for a while, for a
/// client that resubscribes, then completes.
async fn follow(
    instruction: &Instruction,
    cx: &RequestContext,
    events: &TaskEvents,
) -> Result<(), Error> {
    events.status(TaskStatus::new(TaskState::Working)).await?;
    let answer = match traversal::run(instruction).await {
        Ok(texts) => texts.join("\n"),
        Err(e) => return events.fail(e.message).await,
    };
    if !instruction.holds() {
        return events.complete(Some(Message::agent_text(answer))).await;
    }
    let held = format!("{answer}\n{}", traversal::FINISHED);
    events
        .status(TaskStatus::new(TaskState::Working).with_message(Message::agent_text(&held)))
        .await?;
    for _ in 0..HOLD_BEATS {
        tokio::select! {
            () = cx.cancel.cancelled() => return Ok(()),
            () = tokio::time::sleep(HOLD_BEAT) => {}
        }
        events.status(TaskStatus::new(TaskState::Working)).await?;
    }
    events.complete(Some(Message::agent_text(held))).await
}

/// A follow-up message on a task the agent interrupted: a multi-turn conversation goes on
/// until the user says `done`; anything else waiting (for authorization) completes.
async fn continue_task(
    started: Behaviour,
    cx: &RequestContext,
    events: &TaskEvents,
) -> Result<(), Error> {
    if started == Behaviour::MultiTurn && !cx.message.text().trim().eq_ignore_ascii_case("done") {
        return input_required(events).await;
    }
    events
        .artifact(Artifact::text("result", "conversation complete"))
        .await?;
    events.complete(None).await
}

async fn input_required(events: &TaskEvents) -> Result<(), Error> {
    events
        .status(TaskStatus::new(TaskState::InputRequired))
        .await
}

/// Works for a few seconds, reporting each step as a status update, then completes (or stops
/// when canceled).
async fn long_running(cx: &RequestContext, events: &TaskEvents) -> Result<(), Error> {
    for step in 1..=LONG_RUNNING_STEPS {
        events
            .working(format!("step {step} of {LONG_RUNNING_STEPS}"))
            .await?;
        tokio::select! {
            () = cx.cancel.cancelled() => return Ok(()),
            () = tokio::time::sleep(LONG_RUNNING_STEP) => {}
        }
    }
    events
        .complete(Some(Message::agent_text("long-running work done")))
        .await
}

#[cfg(test)]
mod tests {
    use super::Behaviour;
    use a2a_core::Message;

    #[test]
    fn the_behaviour_is_the_first_word_of_the_first_text_part() {
        let of = |text: &str| Behaviour::of(&Message::user_text(text));
        assert_eq!(of("tck-artifact-file document"), Behaviour::ArtifactFile);
        assert_eq!(of("tck-artifact-file-url doc"), Behaviour::ArtifactFileUrl);
        assert_eq!(of("tck-multi-turn"), Behaviour::MultiTurn);
        assert_eq!(of("tck-complete-tasks"), Behaviour::Echo);
        assert_eq!(of("hello tck-cancel"), Behaviour::Echo);
    }
}
