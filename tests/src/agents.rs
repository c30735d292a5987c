//! Test agents. Each does one thing; [`Kitchen`] dispatches on the first word of the message so
//! that one server can produce tasks in every state.

use a2a_core::{
    AgentCard, AgentSkill, Artifact, Error, ErrorKind, Message, Part, TaskState, TaskStatus,
};
use a2a_server::demo::DemoAgent;
use a2a_server::{Agent, RequestContext, TaskEvents};
use serde_json::{Map, json};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Mutex, mpsc};

/// The card the test servers serve unless a test sets another.
pub fn test_card() -> AgentCard {
    AgentCard::builder("e2e test agent", "Agents for the end-to-end tests.")
        .version("9.9.9")
        .provider("a2a-e2e", "https://example.net/a2a-e2e")
        .skill(
            AgentSkill::new("echo", "Echo", "Echoes the message parts as an artifact.")
                .with_tags(["test"])
                // Echo takes parts of any type (the card's default stays text/plain).
                .with_input_modes(["*/*"]),
        )
        .build()
}

/// How long the slow agents work unless canceled (no test waits for this).
pub const SLOW: Duration = Duration::from_secs(60);

/// Echoes the message's parts, unchanged, as an artifact named `echo`, then completes. The
/// artifact metadata records the caller's tenant and activated extensions, when any.
#[derive(Clone, Copy, Debug, Default)]
pub struct Echo;

impl Agent for Echo {
    async fn execute(&self, cx: RequestContext, events: TaskEvents) -> Result<(), Error> {
        let mut artifact = Artifact::new(cx.message.parts.clone()).with_name("echo");
        let mut meta = Map::new();
        if let Some(t) = &cx.scope.tenant {
            meta.insert("tenant".into(), json!(t));
        }
        if !cx.extensions.is_empty() {
            meta.insert("extensions".into(), json!(cx.extensions));
        }
        if !meta.is_empty() {
            artifact.metadata = Some(meta);
        }
        events.artifact(artifact).await?;
        events.complete(None).await
    }
}

/// Panics: at once when the text contains `early` (before any task exists), otherwise after
/// reporting WORKING.
#[derive(Clone, Copy, Debug, Default)]
pub struct Panicker;

impl Agent for Panicker {
    async fn execute(&self, cx: RequestContext, events: TaskEvents) -> Result<(), Error> {
        if cx.message.text().contains("early") {
            panic!("boom before any event");
        }
        events.working("about to panic").await?;
        panic!("boom");
    }
}

/// Reports WORKING, then returns an error.
#[derive(Clone, Copy, Debug, Default)]
pub struct Failing;

impl Agent for Failing {
    async fn execute(&self, _cx: RequestContext, events: TaskEvents) -> Result<(), Error> {
        events.working("trying").await?;
        Err(Error::new(ErrorKind::Internal, "database unreachable"))
    }
}

/// Emits the artifact `report` in three chunks (`Part one. `, `Part two. `, `Part three.`), a
/// whole artifact `summary`, then completes with the message `done`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Chunker;

/// The artifact id of [`Chunker`]'s chunked artifact.
pub const REPORT_ID: &str = "report-1";

impl Agent for Chunker {
    async fn execute(&self, _cx: RequestContext, events: TaskEvents) -> Result<(), Error> {
        events.working("writing the report").await?;
        let chunk = |text: &str| Artifact::text("report", text).with_id(REPORT_ID);
        events
            .artifact_chunk(chunk("Part one. "), false, false)
            .await?;
        events
            .artifact_chunk(chunk("Part two. "), true, false)
            .await?;
        events
            .artifact_chunk(chunk("Part three."), true, true)
            .await?;
        events
            .artifact(Artifact::text("summary", "three parts").with_id("summary-1"))
            .await?;
        events.complete(Some(Message::agent_text("done"))).await
    }
}

/// Works for [`SLOW`] unless canceled. With `cancelable: false` it refuses CancelTask (the
/// trait's default).
#[derive(Clone, Copy, Debug)]
pub struct Slow {
    /// Whether CancelTask is accepted.
    pub cancelable: bool,
}

impl Agent for Slow {
    async fn execute(&self, cx: RequestContext, events: TaskEvents) -> Result<(), Error> {
        events.working("working slowly").await?;
        tokio::select! {
            () = tokio::time::sleep(SLOW) => events.complete(None).await,
            () = cx.cancel.cancelled() => Ok(()),
        }
    }

    async fn cancel(&self, _cx: RequestContext, _events: TaskEvents) -> Result<(), Error> {
        if self.cancelable {
            Ok(())
        } else {
            Err(Error::new(
                ErrorKind::TaskNotCancelable,
                "this work cannot be interrupted",
            ))
        }
    }
}

/// Answers with a single message `reply: <text>` and no task.
#[derive(Clone, Copy, Debug, Default)]
pub struct Replier;

impl Agent for Replier {
    async fn execute(&self, cx: RequestContext, events: TaskEvents) -> Result<(), Error> {
        events
            .reply(Message::agent_text(format!("reply: {}", cx.message.text())))
            .await
    }
}

/// What [`Illegal`] tried, and what it got back.
pub type Attempt = (&'static str, Result<(), Error>);

/// Tries illegal changes around a legal run and records what each returned: SUBMITTED after
/// WORKING, an empty artifact, a message reply once a task exists, then (after COMPLETED)
/// WORKING, an artifact and a message. With the text `hold` it instead works until canceled,
/// and its `cancel` tries SUBMITTED (illegal) and returns that error.
#[derive(Clone, Debug)]
pub struct Illegal {
    tx: mpsc::UnboundedSender<Attempt>,
}

impl Illegal {
    /// The agent and the receiver of its attempts.
    pub fn new() -> (Self, mpsc::UnboundedReceiver<Attempt>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (Self { tx }, rx)
    }

    fn record(&self, what: &'static str, outcome: Result<(), Error>) {
        let _ = self.tx.send((what, outcome));
    }
}

impl Agent for Illegal {
    async fn execute(&self, cx: RequestContext, events: TaskEvents) -> Result<(), Error> {
        if cx.message.text() == "hold" {
            events.working("holding").await?;
            tokio::select! {
                () = tokio::time::sleep(SLOW) => {}
                () = cx.cancel.cancelled() => {}
            }
            return Ok(());
        }
        events.working("step 1").await?;
        self.record(
            "submitted after working",
            events.status(TaskStatus::new(TaskState::Submitted)).await,
        );
        self.record(
            "empty artifact",
            events.artifact(Artifact::new(Vec::<Part>::new())).await,
        );
        self.record(
            "reply after the task exists",
            events.reply(Message::agent_text("late reply")).await,
        );
        events.complete(None).await?;
        self.record("working after completed", events.working("again").await);
        self.record(
            "artifact after completed",
            events.artifact(Artifact::text("late", "late")).await,
        );
        self.record(
            "message after completed",
            events.message(Message::agent_text("late")).await,
        );
        Ok(())
    }

    async fn cancel(&self, _cx: RequestContext, events: TaskEvents) -> Result<(), Error> {
        let outcome = events.status(TaskStatus::new(TaskState::Submitted)).await;
        self.record("submitted on cancel", outcome.clone());
        outcome
    }
}

/// One step of a [`Gated`] agent, released by the test.
#[derive(Clone, Debug)]
pub enum Step {
    /// WORKING with a progress message.
    Working(String),
    /// An artifact chunk.
    Artifact {
        /// The artifact id.
        id: String,
        /// The text of its one part.
        text: String,
        /// Append to the artifact with the same id.
        append: bool,
        /// The last chunk.
        last: bool,
    },
    /// An agent message in the task.
    Message(String),
    /// INPUT_REQUIRED with a question (ends this execution).
    InputRequired(String),
    /// COMPLETED (ends the execution).
    Complete,
    /// FAILED (ends the execution).
    Fail(String),
}

/// Reports WORKING (`started`), then performs the steps the test releases through its
/// [`Gate`], one at a time; stops quietly when canceled. Lets a test decide exactly when each
/// event happens, without timers.
#[derive(Clone, Debug)]
pub struct Gated {
    steps: Arc<Mutex<mpsc::UnboundedReceiver<Step>>>,
}

/// Releases the steps of a [`Gated`] agent.
#[derive(Clone, Debug)]
pub struct Gate {
    tx: mpsc::UnboundedSender<Step>,
}

impl Gate {
    /// Releases one step.
    pub fn step(&self, step: Step) {
        self.tx.send(step).expect("the gated agent is alive");
    }

    /// Releases an artifact chunk.
    pub fn chunk(&self, id: &str, text: &str, append: bool, last: bool) {
        self.step(Step::Artifact {
            id: id.into(),
            text: text.into(),
            append,
            last,
        });
    }
}

impl Gated {
    /// The agent and its gate.
    pub fn new() -> (Self, Gate) {
        let (tx, rx) = mpsc::unbounded_channel();
        (
            Self {
                steps: Arc::new(Mutex::new(rx)),
            },
            Gate { tx },
        )
    }
}

impl Agent for Gated {
    async fn execute(&self, cx: RequestContext, events: TaskEvents) -> Result<(), Error> {
        events.working("started").await?;
        let mut steps = self.steps.lock().await;
        loop {
            let step = tokio::select! {
                s = steps.recv() => s,
                () = cx.cancel.cancelled() => return Ok(()),
            };
            match step {
                None => return events.fail("the gate closed").await,
                Some(Step::Working(t)) => events.working(t).await?,
                Some(Step::Artifact {
                    id,
                    text,
                    append,
                    last,
                }) => {
                    events
                        .artifact_chunk(Artifact::text("gated", text).with_id(id), append, last)
                        .await?
                }
                Some(Step::Message(t)) => events.message(Message::agent_text(t)).await?,
                Some(Step::InputRequired(q)) => return events.input_required(q).await,
                Some(Step::Complete) => return events.complete(None).await,
                Some(Step::Fail(why)) => return events.fail(why).await,
            }
        }
    }

    async fn cancel(&self, _cx: RequestContext, _events: TaskEvents) -> Result<(), Error> {
        Ok(())
    }
}

/// Dispatches on the first word of the message:
///
/// | text | behaviour |
/// |---|---|
/// | `panic …` | [`Panicker`] |
/// | `fail …` | [`Failing`] |
/// | `chunks` | [`Chunker`] |
/// | `slow` | [`Slow`] (cancelable) |
/// | `stubborn` | [`Slow`] that refuses cancel |
/// | `reply …` | [`Replier`] |
/// | `reject` | REJECTED with a reason |
/// | `noop` | returns without doing anything |
/// | `unfinished` | WORKING, then returns |
/// | `greet`, `countdown N`, and every follow-up message | [`DemoAgent`] |
/// | anything else | [`Echo`] |
#[derive(Clone, Copy, Debug, Default)]
pub struct Kitchen;

fn first_word(m: &Message) -> String {
    m.text().split_whitespace().next().unwrap_or("").to_owned()
}

impl Agent for Kitchen {
    async fn execute(&self, cx: RequestContext, events: TaskEvents) -> Result<(), Error> {
        if cx.stored_task.is_some() {
            return DemoAgent.execute(cx, events).await;
        }
        match first_word(&cx.message).as_str() {
            "panic" => Panicker.execute(cx, events).await,
            "fail" => Failing.execute(cx, events).await,
            "chunks" => Chunker.execute(cx, events).await,
            "slow" => Slow { cancelable: true }.execute(cx, events).await,
            "stubborn" => Slow { cancelable: false }.execute(cx, events).await,
            "reply" => Replier.execute(cx, events).await,
            "reject" => events.reject("I will not do that").await,
            "noop" => Ok(()),
            "unfinished" => events.working("started, then forgot").await,
            "greet" | "countdown" => DemoAgent.execute(cx, events).await,
            _ => Echo.execute(cx, events).await,
        }
    }

    async fn cancel(&self, cx: RequestContext, events: TaskEvents) -> Result<(), Error> {
        let first = cx
            .stored_task
            .as_ref()
            .and_then(|t| t.history.first())
            .map(first_word)
            .unwrap_or_default();
        if first == "stubborn" {
            Slow { cancelable: false }.cancel(cx, events).await
        } else {
            Ok(())
        }
    }
}
