//! [`Execution`]: an execution of the agent that its caller may drive before letting it go.

use std::sync::{Mutex, PoisonError};

/// An execution of the agent that no task runs yet. Whoever holds it may drive it: a blocking
/// `SendMessage` polls it while it waits for the task to settle, which spares a task spawn and a
/// wake-up of the waiting request per task, and an agent that finishes at once finishes there.
/// Dropped (or [detached](Execution::detach)) unfinished, it goes on as a task of its own, so
/// that an execution always outlives the request that started it: a client that hangs up, a
/// `returnImmediately`, or a stream that returns after the first event lose nothing.
///
/// The mutex is never locked, only reached through `&mut` (`get_mut`): it makes the holder's
/// future `Sync`, as the HTTP stack requires, for an agent future that need not be.
#[must_use = "dropped, the execution goes on in the background: say so with `detach`"]
pub(crate) struct Execution(Mutex<Option<Run>>);

type Run = std::pin::Pin<Box<dyn Future<Output = ()> + Send>>;

impl Execution {
    pub(super) fn new(run: impl Future<Output = ()> + Send + 'static) -> Self {
        Self(Mutex::new(Some(Box::pin(run))))
    }

    /// Lets the execution go on in the background.
    pub(crate) fn detach(self) {}

    fn run(&mut self) -> &mut Option<Run> {
        self.0.get_mut().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits for `waiting`, driving the execution meanwhile (polled first, so that what it
    /// writes is there when `waiting` looks). What is left of it runs on when it is dropped.
    pub(crate) async fn drive<T>(&mut self, waiting: impl Future<Output = T>) -> T {
        let mut waiting = std::pin::pin!(waiting);
        std::future::poll_fn(|cx| {
            let run = self.run();
            if run.as_mut().is_some_and(|r| r.as_mut().poll(cx).is_ready()) {
                *run = None;
            }
            waiting.as_mut().poll(cx)
        })
        .await
    }
}

impl Drop for Execution {
    fn drop(&mut self) {
        if let Some(run) = self.run().take() {
            // With no runtime left the server is gone: the task stays as last stored, and the
            // next start hands it to the agent's `resume` hook (an orphan).
            if let Ok(rt) = tokio::runtime::Handle::try_current() {
                rt.spawn(run);
            }
        }
    }
}
