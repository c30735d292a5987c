//! A retried message: a send of a message the engine has a claim for. The retry is answered
//! as the first send was: it joins the first send's run when that runs here, and otherwise
//! follows the first send's task (or returns its message reply) until it settles.

use super::Engine;
use super::follow::{self, Source};
use super::send::Run;
use crate::handler::{EventStream, StreamEvent};
use crate::store::{MessageClaim, Scope};
use a2a_core::{Error, ErrorKind, Message, StreamResponse, TaskId};
use futures::StreamExt as _;
use std::sync::Arc;

/// A retried message: the claim its first send left.
#[derive(Debug)]
pub(crate) struct Retry {
    /// What the first send was used for.
    pub(crate) claim: MessageClaim,
    pub(super) key: String,
}

impl Engine {
    /// The run of a retried message's first send, if it runs in this process for callers of
    /// `scope`: the retry waits on it as the first send does.
    pub(crate) fn join(&self, retry: &Retry, scope: &Scope) -> Option<Run> {
        let cell = self
            .live_cell(&retry.claim.task_id)
            .filter(|c| c.scope == *scope)?;
        Some(Run::joined(cell))
    }

    /// Waits for a retried message's first send to settle when it ran elsewhere (or ended):
    /// follows the task's log until it ends or pauses (until it exists, with `immediately`).
    /// Returns the first send's message reply if it was answered with one. The claim is read
    /// again whenever nothing happened for a while: a first send answered with a message has
    /// no task events, and one the agent refused left no claim (an error then).
    pub(crate) async fn settle_retry(
        self: &Arc<Self>,
        retry: Retry,
        immediately: bool,
    ) -> Result<Option<Message>, Error> {
        const RECHECK: std::time::Duration = std::time::Duration::from_secs(2);
        let Retry { claim, key } = retry;
        let Some(claims) = &self.claims else {
            return Ok(None);
        };
        let id = claim.task_id.clone();
        let source = Source::Bus(self.bus.subscribe(&id));
        let mut stream = follow::follow(self, &id, None, 0, source);
        loop {
            match tokio::time::timeout(RECHECK, stream.next()).await {
                Ok(Some(_)) if immediately => return Ok(None),
                Ok(Some(_)) => {}
                Ok(None) => return Ok(None),
                Err(_) => match claims.claim_message(&key, claim.clone()).await? {
                    Some(MessageClaim { reply: Some(m), .. }) => return Ok(Some(m)),
                    Some(_) if self.never_written(&id).await? => {
                        // The first send's task waited unwritten (write-behind) when the
                        // server stopped, and its claim had become durable: nothing of it is
                        // left to answer with. The claim goes, so that the next try runs
                        // afresh.
                        claims.release_claim(&key).await?;
                        return Err(Error::new(
                            ErrorKind::UnsupportedOperation,
                            "The first send of this message was lost in a server restart before its task was written; send it again to retry",
                        ));
                    }
                    Some(_) => {}
                    None => {
                        // The claim was gone (the agent refused the first send), and this
                        // look took it: give it back, so that the next try runs afresh.
                        claims.release_claim(&key).await?;
                        return Err(Error::new(
                            ErrorKind::UnsupportedOperation,
                            "The first send of this message was refused; send it again to retry",
                        ));
                    }
                },
            }
        }
    }

    /// Whether a claimed message's task `id` was never written and never will be: on a store
    /// this process alone writes (write-behind), no execution of it runs here and the store
    /// has no such task.
    async fn never_written(&self, id: &TaskId) -> Result<bool, Error> {
        Ok(self.store.flushes()
            && self.live_cell(id).is_none()
            && self.store.get(id).await?.is_none())
    }

    /// The stream of a retried streaming send: the first send's reply, or its task's events
    /// from the start.
    pub(crate) fn replay_retry(self: &Arc<Self>, retry: Retry) -> EventStream {
        match retry.claim.reply {
            Some(m) => Box::pin(futures::stream::once(async move {
                StreamEvent {
                    seq: 0,
                    event: StreamResponse::Message(m),
                }
            })),
            None => self.watch(&retry.claim.task_id).after(self, 0),
        }
    }
}
