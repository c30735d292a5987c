//! A task listing's query (its filters and page token) and the page it answers, the same for
//! every store.

use super::{Scope, StoreError, StoredTask, decode_page_token, encode_page_token};
use a2a_core::{ContextId, TaskState, Timestamp};

/// The filters and page of a task listing.
#[derive(Clone, Debug, Default)]
pub struct ListQuery {
    /// Only tasks of this scope.
    pub scope: Scope,
    /// Only tasks of this context.
    pub context_id: Option<ContextId>,
    /// Only tasks in this state.
    pub status: Option<TaskState>,
    /// Only tasks whose status timestamp is at or after this time.
    pub status_timestamp_after: Option<Timestamp>,
    /// How many tasks at most.
    pub page_size: usize,
    /// Continue after this token (from a previous [`ListPage`]).
    pub page_token: Option<String>,
}

impl ListPage {
    /// A page of `tasks`; `more` says whether matches follow (then the token points after the
    /// last task).
    pub fn new(tasks: Vec<StoredTask>, more: bool, total_size: usize) -> Self {
        let next_page_token = if more {
            tasks.last().map(encode_page_token)
        } else {
            None
        };
        Self {
            tasks,
            next_page_token,
            total_size,
        }
    }
}

impl ListQuery {
    /// The order key the page starts after (from the page token), if any.
    pub(crate) fn start_after(
        &self,
    ) -> Result<Option<(std::cmp::Reverse<i64>, String)>, StoreError> {
        self.page_token
            .as_deref()
            .map(decode_page_token)
            .transpose()
    }

    /// Whether `t` matches every filter.
    pub fn matches(&self, t: &StoredTask) -> bool {
        t.scope == self.scope
            && self
                .context_id
                .as_ref()
                .is_none_or(|c| *c == t.task.context_id)
            && self
                .status
                .as_ref()
                .is_none_or(|s| *s == t.task.status.state)
            && self
                .status_timestamp_after
                .is_none_or(|after| t.sort_millis() >= after.unix_millis())
    }
}

/// One page of a listing: newest status first.
#[derive(Clone, Debug, Default)]
pub struct ListPage {
    /// The tasks.
    pub tasks: Vec<StoredTask>,
    /// The token of the next page, `None` on the last page.
    pub next_page_token: Option<String>,
    /// How many tasks match the filters across all pages.
    pub total_size: usize,
}
