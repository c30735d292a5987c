//! The demo agent the `a2a-server` binary serves: what a newcomer first talks to.
//!
//! - any text → a task that completes with one text artifact `echo: <text>`;
//! - `countdown N` → N progress status messages and N artifact chunks about 100 ms apart, then
//!   COMPLETED; cancelable while it runs;
//! - `greet` → INPUT_REQUIRED asking for a name; the answer (in the same task) completes it
//!   with `Hello, <name>!`.

use crate::{Agent, RequestContext, TaskEvents};
use a2a_core::{AgentCard, AgentSkill, Artifact, ArtifactId, Error, Message, TaskState};
use std::time::Duration;

/// The demo agent.
#[derive(Clone, Copy, Debug, Default)]
pub struct DemoAgent;

/// The largest accepted countdown.
pub const MAX_COUNTDOWN: u32 = 1000;

impl DemoAgent {
    /// The demo agent's card (interfaces are filled in by the server).
    pub fn card() -> AgentCard {
        AgentCard::builder(
            "a2a-rust demo agent",
            "Echoes text, counts down with streamed progress, and asks for your name.",
        )
        .version(env!("CARGO_PKG_VERSION"))
        .provider("a2a-rust", "https://github.com/a2a-rust/a2a")
        .skill(
            AgentSkill::new(
                "echo",
                "Echo",
                "Replies with an artifact holding your text.",
            )
            .with_tags(["echo", "test"])
            .with_examples(["hello"])
            // Text attachments and data parts are accepted (and only the text echoed).
            .with_input_modes(["text/*", "application/json"]),
        )
        .skill(
            AgentSkill::new(
                "countdown",
                "Countdown",
                "Streams N progress updates and N artifact chunks, 100 ms apart; cancelable.",
            )
            .with_tags(["streaming", "long-running"])
            .with_examples(["countdown 5"]),
        )
        .skill(
            AgentSkill::new("greet", "Greet", "Asks for your name, then greets you.")
                .with_tags(["multi-turn", "input-required"])
                .with_examples(["greet"]),
        )
        .build()
    }
}

impl Agent for DemoAgent {
    async fn execute(&self, cx: RequestContext, events: TaskEvents) -> Result<(), Error> {
        let text = cx.message.text();
        let text = text.trim();
        if let Some(task) = &cx.stored_task {
            // A follow-up: the only question the demo asks is "greet"'s.
            if task.history.iter().any(|m| m.text().trim() == "greet") {
                let name = if text.is_empty() { "stranger" } else { text };
                return events
                    .complete(Some(Message::agent_text(format!("Hello, {name}!"))))
                    .await;
            }
        }
        if text == "greet" {
            return events.input_required("What is your name?").await;
        }
        if let Some(n) = text.strip_prefix("countdown") {
            let n: u32 = match n.trim().parse() {
                Ok(n) if (1..=MAX_COUNTDOWN).contains(&n) => n,
                _ => {
                    return events
                        .reject(format!(
                            "countdown needs a number from 1 to {MAX_COUNTDOWN}"
                        ))
                        .await;
                }
            };
            let artifact_id = ArtifactId::random();
            for i in (1..=n).rev() {
                events.working(format!("{i}...")).await?;
                let chunk =
                    Artifact::text("countdown", format!("{i}\n")).with_id(artifact_id.clone());
                events.artifact_chunk(chunk, i != n, i == 1).await?;
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_millis(100)) => {}
                    () = cx.cancel.cancelled() => return Ok(()),
                }
            }
            return events.complete(Some(Message::agent_text("Liftoff!"))).await;
        }
        events
            .artifact(Artifact::text("echo", format!("echo: {text}")))
            .await?;
        events.complete(None).await
    }

    async fn cancel(&self, cx: RequestContext, events: TaskEvents) -> Result<(), Error> {
        let _ = cx;
        // Accept: the server stops the countdown through its token and marks the task canceled.
        let _ = (events, TaskState::Canceled);
        Ok(())
    }
}
