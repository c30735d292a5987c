//! The operations on existing tasks: `GetTask`, `ListTasks`, `CancelTask`, `SubscribeToTask`
//! (and resumed streams).

use super::{CallContext, EventStream, RequestHandler, TaskReply, with_history};
use crate::agent::RequestContext;
use crate::store::ListQuery;
use a2a_core::{
    CancelTaskRequest, Error, ErrorKind, GetTaskRequest, ListTasksRequest, ListTasksResponse,
    SubscribeToTaskRequest, Task, TaskId, Validate,
};
use std::sync::Arc;

impl RequestHandler {
    /// The task's events after `cursor` from its log, then live ones (if it is not finished):
    /// from this process's execution of the task if it runs one, else through the bus.
    async fn stream_from(
        &self,
        cx: &CallContext,
        id: &TaskId,
        cursor: u64,
    ) -> Result<EventStream, Error> {
        // Taken before the task is read: nothing written after the read goes unheard.
        let watch = self.rt.watch(id);
        if watch.runs_here_for(&cx.scope) {
            self.ready().await?;
        } else if self.load(cx, id).await?.task.status.state.is_terminal() {
            return Ok(self.rt.replay(id, cursor));
        }
        Ok(watch.after(&self.rt, cursor))
    }

    /// `GetTask`: the task as stored (with at most `historyLength` messages of history). A 1.1
    /// call gets its generation, and with `currentGeneration` is a long poll (`long_poll.rs`).
    pub async fn get_task(
        &self,
        cx: &CallContext,
        req: GetTaskRequest,
    ) -> Result<TaskReply, Error> {
        req.validate()?;
        if !cx.generations() {
            // 1.0 (and 0.3): no generations, so no long poll either.
            let stored = self.load(cx, &req.id).await?;
            let cache = Some(&self.serialized);
            let store = &*self.rt.store;
            return Ok(TaskReply::stored(store, stored, req.history_length, cache));
        }
        let stored = match req.current_generation {
            // Validated: not negative.
            Some(after) => {
                let after = u64::try_from(after).unwrap_or_default();
                self.load_past(cx, &req.id, after).await?
            }
            None => self.load(cx, &req.id).await?,
        };
        let version = stored.version;
        let store = &*self.rt.store;
        Ok(TaskReply::stored(store, stored, req.history_length, None).with_generation(version))
    }

    /// `ListTasks`: newest status first, cursor paging.
    pub async fn list_tasks(
        &self,
        cx: &CallContext,
        req: ListTasksRequest,
    ) -> Result<ListTasksResponse, Error> {
        req.validate()?;
        self.ready().await?;
        let query = ListQuery {
            scope: cx.scope.clone(),
            context_id: req.context_id.clone(),
            status: req.status.clone(),
            status_timestamp_after: req.status_timestamp_after,
            page_size: usize::try_from(req.effective_page_size()).unwrap_or(50),
            page_token: req.page_token.clone(),
        };
        let page = self.rt.list(&query).await?;
        let include_artifacts = req.include_artifacts == Some(true);
        let tasks: Vec<Task> = page
            .tasks
            .into_iter()
            .map(|t| {
                let mut task = Arc::unwrap_or_clone(with_history(t.task, req.history_length));
                if !include_artifacts {
                    task.artifacts.clear();
                }
                if cx.generations() {
                    task.generation = i64::try_from(t.version).unwrap_or(i64::MAX);
                }
                task
            })
            .collect();
        Ok(ListTasksResponse {
            page_size: i32::try_from(tasks.len()).unwrap_or(i32::MAX),
            tasks,
            next_page_token: page.next_page_token.unwrap_or_default(),
            total_size: i32::try_from(page.total_size).unwrap_or(i32::MAX),
        })
    }

    /// `CancelTask`: asks the agent, stops the execution, returns the task (normally CANCELED).
    pub async fn cancel_task(
        &self,
        cx: &CallContext,
        req: CancelTaskRequest,
    ) -> Result<Task, Error> {
        req.validate()?;
        let stored = self.load(cx, &req.id).await?;
        let state = &stored.task.status.state;
        if state.is_terminal() {
            return Err(Error::new(
                ErrorKind::TaskNotCancelable,
                format!("Task {} is already {state}", req.id),
            )
            .with_metadata("taskId", req.id.as_str()));
        }
        let extensions = self.check_extensions(cx)?;
        let rcx = RequestContext::for_task(Task::clone(&stored.task), None)
            .with_scope(cx.scope.clone())
            .with_service_params(cx.service_params.clone(), extensions);
        let canceled = self.rt.cancel(stored, rcx).await?;
        let mut task = Arc::unwrap_or_clone(canceled.task);
        if cx.generations() {
            task.generation = i64::try_from(canceled.version).unwrap_or(i64::MAX);
        }
        Ok(task)
    }

    /// `SubscribeToTask`: the current task first, then its events. With
    /// [`CallContext::last_event_id`] (`Last-Event-ID`), instead exactly the events after that
    /// sequence number, from the durable log, then live ones; this works for finished tasks too
    /// (up to their terminal event) and across server restarts.
    pub async fn subscribe_to_task(
        &self,
        cx: &CallContext,
        req: SubscribeToTaskRequest,
    ) -> Result<EventStream, Error> {
        req.validate()?;
        self.check_streaming()?;
        if let Some(after) = cx.last_event_id {
            let events = self.stream_from(cx, &req.id, after).await?;
            return Ok(super::for_call(cx, events));
        }
        // Taken before the task is read: nothing written after the read goes unheard.
        let watch = self.rt.watch(&req.id);
        let stored = self.load(cx, &req.id).await?;
        if stored.task.status.state.is_terminal() {
            return Err(Error::new(
                ErrorKind::UnsupportedOperation,
                format!(
                    "Task {} is {}: there is nothing to subscribe to",
                    req.id, stored.task.status.state
                ),
            )
            .with_metadata("taskId", req.id.as_str()));
        }
        Ok(super::for_call(cx, watch.opened_with(&self.rt, stored)))
    }
}
