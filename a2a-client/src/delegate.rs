//! [`Client::delegate`]: hand a message to an agent and follow it to the end.

use crate::Error;
use crate::client::{Client, EventStream};
use a2a_core::{
    Message, SendMessageRequest, SendMessageResponse, StreamResponse, Task, TaskState, TaskStatus,
};
use futures::StreamExt as _;
use std::time::Duration;

/// How [`Client::delegate`] follows the task.
#[derive(Clone, Debug)]
#[must_use]
pub struct DelegateOptions {
    deadline: Option<Duration>,
    poll_interval: Duration,
    max_poll_interval: Duration,
    force_polling: bool,
}

impl Default for DelegateOptions {
    fn default() -> Self {
        Self {
            deadline: None,
            poll_interval: Duration::from_millis(250),
            max_poll_interval: Duration::from_secs(5),
            force_polling: false,
        }
    }
}

impl DelegateOptions {
    /// Give up (with [`Error::Timeout`]) after this long.
    pub fn deadline(mut self, deadline: Duration) -> Self {
        self.deadline = Some(deadline);
        self
    }

    /// The first polling interval (doubled after each unchanged poll, up to `max`).
    pub fn poll_interval(mut self, first: Duration, max: Duration) -> Self {
        self.poll_interval = first;
        self.max_poll_interval = max.max(first);
        self
    }

    /// Poll even if the agent can stream.
    pub fn force_polling(mut self, on: bool) -> Self {
        self.force_polling = on;
        self
    }
}

/// Folds stream events into the task as the client sees it, with [`Task::apply`]: the task as
/// the server stores it (status replaced, with its message added to the history; artifact
/// chunks merged; agent messages added to the history). An update that arrives before any task
/// snapshot (some servers skip it when continuing a task) starts the task from its ids. An
/// event of another task (or a message that names none) leaves the task as it is.
fn fold(task: &mut Option<Task>, event: &StreamResponse) {
    if task.is_none() {
        let (id, context) = match event {
            StreamResponse::Task(t) => {
                *task = Some(t.clone());
                return;
            }
            StreamResponse::StatusUpdate(s) => (&s.task_id, &s.context_id),
            StreamResponse::ArtifactUpdate(a) => (&a.task_id, &a.context_id),
            StreamResponse::Message(_) => return,
        };
        let status = TaskStatus::new(TaskState::Working);
        *task = Some(Task::new(id.clone(), context.clone(), status));
    }
    if let Some(t) = task {
        // An event of another task is refused, and leaves this one unchanged.
        let _ = t.apply(event);
    }
}

impl Client {
    /// Progress of a delegation as a stream: the agent's events when it streams, otherwise
    /// a task snapshot each time polling sees a change. Ends at a terminal or interrupted state
    /// (or after a message reply).
    pub async fn delegate_stream(
        &self,
        message: Message,
        options: &DelegateOptions,
    ) -> Result<EventStream, Error> {
        let request = SendMessageRequest::new(message);
        if self.supports_streaming() && !options.force_polling {
            return self.send_streaming_message(&request).await;
        }
        let first = self
            .send_message(&request.with_return_immediately(true))
            .await?;
        let client = self.clone();
        let options = options.clone();
        Ok(async_stream::stream! {
            let task = match first {
                SendMessageResponse::Message(m) => {
                    yield Ok(StreamResponse::Message(m));
                    return;
                }
                SendMessageResponse::Task(t) => t,
            };
            let mut last = task.clone();
            yield Ok(StreamResponse::Task(task));
            let mut interval = options.poll_interval;
            while !last.status.state.ends_stream() {
                // A 1.1 agent holds a long poll until the task changes: no interval then, but
                // for an answer that came back unchanged at once (the agent's cap on held
                // polls), which backs off as interval polling does.
                let long_poll = client.speaks_generations() && last.generation > 0;
                let asked = tokio::time::Instant::now();
                if !long_poll {
                    tokio::time::sleep(interval).await;
                }
                let read = if long_poll {
                    client.wait_for_change(last.id.clone(), last.generation).await
                } else {
                    client.get_task(last.id.clone()).await
                };
                match read {
                    Ok(t) if t != last => {
                        interval = options.poll_interval;
                        last = t.clone();
                        yield Ok(StreamResponse::Task(t));
                    }
                    Ok(_) if long_poll && asked.elapsed() >= options.poll_interval => {}
                    Ok(_) => {
                        if long_poll {
                            tokio::time::sleep(interval).await;
                        }
                        interval = (interval * 2).min(options.max_poll_interval);
                    }
                    // A long poll that outlasted this client's call timeout: ask again.
                    Err(Error::Timeout(_)) if long_poll => {}
                    Err(e) => {
                        yield Err(e);
                        return;
                    }
                }
            }
        }
        .boxed())
    }

    /// Sends `message` and follows the task (streaming when the agent can, polling otherwise)
    /// until it is terminal or interrupted, assembling chunked artifacts. Returns the task as
    /// it ended (or the agent's message, if it answered with one).
    pub async fn delegate(
        &self,
        message: Message,
        options: DelegateOptions,
    ) -> Result<SendMessageResponse, Error> {
        self.delegate_with(message, options, |_| {}).await
    }

    /// Like [`Self::delegate`], calling `on_event` with each event as it arrives.
    pub async fn delegate_with(
        &self,
        message: Message,
        options: DelegateOptions,
        on_event: impl FnMut(&StreamResponse) + Send,
    ) -> Result<SendMessageResponse, Error> {
        self.follow_delegation(message, options, None, on_event)
            .await
    }

    /// Sends and follows, folding events into `known` (the task being continued, if any).
    async fn follow_delegation(
        &self,
        message: Message,
        options: DelegateOptions,
        known: Option<Task>,
        mut on_event: impl FnMut(&StreamResponse) + Send,
    ) -> Result<SendMessageResponse, Error> {
        let continuing = known.is_some();
        let work = async {
            let mut events = self.delegate_stream(message, &options).await?;
            let mut task: Option<Task> = known;
            while let Some(event) = events.next().await {
                let event = event?;
                on_event(&event);
                // A 1.1 stream numbers the task's changes: a gap means events were missed, and
                // the task is read again instead of folding an incomplete stream.
                let seen = event.generation();
                if let Some(t) = task
                    .as_ref()
                    .filter(|t| t.generation > 0 && seen > t.generation + 1)
                    && let Ok(fresh) = self.get_task(t.id.clone()).await
                    && fresh.generation >= seen
                {
                    let before = t.status.clone();
                    let ends = fresh.status.state.ends_stream() && fresh.status != before;
                    task = Some(fresh);
                    if ends {
                        break;
                    }
                    continue;
                }
                if let (StreamResponse::Message(m), false) = (&event, continuing)
                    && m.task_id.is_none()
                    && task.is_none()
                {
                    return Ok(SendMessageResponse::Message(m.clone()));
                }
                let before = task.as_ref().map(|t| t.status.clone());
                fold(&mut task, &event);
                // A continued task starts out interrupted: only a new status can end it.
                let changed = task.as_ref().map(|t| &t.status) != before.as_ref();
                if task.as_ref().is_some_and(|t| t.status.state.ends_stream())
                    && (changed || !continuing)
                {
                    break;
                }
            }
            match task {
                Some(t) if t.status.state.ends_stream() => Ok(SendMessageResponse::Task(t)),
                Some(t) => Err(Error::StreamEnded(
                    format!("task {} stopped reporting while {}", t.id, t.status.state).into(),
                )),
                None => Err(Error::StreamEnded("the agent sent no task".into())),
            }
        };
        match options.deadline {
            Some(d) => tokio::time::timeout(d, work).await.unwrap_or_else(|_| {
                Err(Error::Timeout(
                    format!("the delegation took over {d:?}").into(),
                ))
            }),
            None => work.await,
        }
    }

    /// Answers an interrupted task (INPUT_REQUIRED, AUTH_REQUIRED) in the same task and context
    /// and follows it again.
    pub async fn reply(
        &self,
        task: &Task,
        answer: Message,
        options: DelegateOptions,
    ) -> Result<SendMessageResponse, Error> {
        let answer = answer
            .with_task_id(task.id.clone())
            .with_context_id(task.context_id.clone());
        self.follow_delegation(answer, options, Some(task.clone()), |_| {})
            .await
    }
}
