//! A multi-turn agent: it books a trip and asks for the date when the request lacks one
//! (INPUT_REQUIRED); the caller answers in the same task and the booking completes.

use a2a_core::{AgentCard, AgentSkill, Artifact, Error, Message, Role};
use a2a_server::{Agent, RequestContext, TaskEvents};

/// Books trips; asks for a missing date.
#[derive(Debug, Clone, Copy)]
pub struct TripBooker;

/// The first word that looks like a date (YYYY-MM-DD).
fn find_date(text: &str) -> Option<&str> {
    text.split_whitespace().find(|w| {
        let b = w.as_bytes();
        b.len() == 10
            && b[4] == b'-'
            && b[7] == b'-'
            && w.chars().filter(char::is_ascii_digit).count() == 8
    })
}

impl Agent for TripBooker {
    async fn execute(&self, cx: RequestContext, events: TaskEvents) -> Result<(), Error> {
        // The destination is in the first user message; the date may come in any of them.
        let history = cx
            .stored_task
            .as_ref()
            .map(|t| t.history.clone())
            .unwrap_or_default();
        let user_texts: Vec<String> = history
            .iter()
            .chain(std::iter::once(&cx.message))
            .filter(|m| m.role == Role::User)
            .map(Message::text)
            .collect();
        let request = user_texts.first().cloned().unwrap_or_default();
        let destination = request
            .split_once(" to ")
            .map(|(_, d)| d.split_whitespace().next().unwrap_or(d).to_owned())
            .unwrap_or_else(|| "somewhere nice".to_owned());
        let Some(date) = user_texts
            .iter()
            .find_map(|t| find_date(t).map(str::to_owned))
        else {
            return events
                .input_required(format!(
                    "On which date do you want to go to {destination}? (YYYY-MM-DD)"
                ))
                .await;
        };
        events
            .working(format!("booking {destination} on {date}"))
            .await?;
        events
            .artifact(Artifact::text(
                "booking",
                format!(
                    "Booked: trip to {destination} on {date}. Confirmation BK-{}",
                    &cx.task_id.as_str()[..8]
                ),
            ))
            .await?;
        events
            .complete(Some(Message::agent_text("Have a good trip!")))
            .await
    }
}

impl TripBooker {
    /// The agent's card.
    pub fn card() -> AgentCard {
        AgentCard::builder("Trip booker", "Books trips; asks for what is missing")
            .skill(
                AgentSkill::new(
                    "book-trip",
                    "Book a trip",
                    "Books a trip to a destination on a date",
                )
                .with_tags(["travel", "booking"])
                .with_examples(["book a trip to Lisbon on 2026-12-24"]),
            )
            .build()
    }
}
