//! A long-running agent: it writes a document over several seconds, reporting progress with
//! status messages and streaming the text as artifact chunks; cancelable part way.

use a2a_core::{AgentCard, AgentSkill, Artifact, ArtifactId, Error, Message};
use a2a_server::{Agent, RequestContext, TaskEvents};
use std::time::Duration;

/// Writes a five-section document, streaming it.
#[derive(Debug, Clone, Copy)]
pub struct Writer;

const SECTIONS: [&str; 5] = [
    "Introduction",
    "Background",
    "Analysis",
    "Outlook",
    "Conclusion",
];

impl Agent for Writer {
    async fn execute(&self, cx: RequestContext, events: TaskEvents) -> Result<(), Error> {
        let topic = cx.message.text();
        let id = ArtifactId::random();
        for (i, section) in SECTIONS.iter().enumerate() {
            events
                .working(format!(
                    "writing section {} of {}: {section}",
                    i + 1,
                    SECTIONS.len()
                ))
                .await?;
            let chunk = format!(
                "## {section}\n\nSome thoughts on {topic}, part {}.\n\n",
                i + 1
            );
            let artifact = Artifact::text("document", chunk).with_id(id.clone());
            events
                .artifact_chunk(artifact, i > 0, i + 1 == SECTIONS.len())
                .await?;
            tokio::select! {
                () = tokio::time::sleep(Duration::from_millis(800)) => {}
                // Canceled: the server marks the task CANCELED; just stop.
                () = cx.cancel.cancelled() => return Ok(()),
            }
        }
        events
            .complete(Some(Message::agent_text("Document ready.")))
            .await
    }

    async fn cancel(&self, _cx: RequestContext, _events: TaskEvents) -> Result<(), Error> {
        Ok(()) // accept; `execute` sees `cx.cancel` and stops
    }
}

impl Writer {
    /// The agent's card.
    pub fn card() -> AgentCard {
        AgentCard::builder("Writer", "Writes a document, streaming it as it goes")
            .output_modes(["text/markdown"])
            .skill(
                AgentSkill::new(
                    "write",
                    "Write a document",
                    "Writes a five-section document on a topic",
                )
                .with_tags(["writing", "streaming", "long-running"]),
            )
            .build()
    }
}
