//! The request and response type of each operation, and the push-notification config. The
//! operations themselves are declared in [`crate::operation`].

use crate::ids::{ContextId, TaskId};
use crate::message::{Message, Metadata};
use crate::serde_util::{
    empty_as_none, int32, is_false, null_as_default, opt_int32, opt_int64, opt_int64_string,
};
use crate::task::{Task, TaskState};
use crate::time::Timestamp;
use serde::{Deserialize, Serialize};

/// The default `ListTasks` page size.
pub const DEFAULT_PAGE_SIZE: i32 = 50;
/// The largest `ListTasks` page size, and the largest `ListTaskPushNotificationConfigs` one.
pub const MAX_PAGE_SIZE: i32 = 100;
/// The `ListTaskPushNotificationConfigs` page size when the request sets none: the largest,
/// which is also the server's default number of configs a task may have, so a client that does
/// not page gets them all unless the server allows more.
pub const DEFAULT_PUSH_CONFIG_PAGE_SIZE: i32 = MAX_PAGE_SIZE;

/// `SendMessage` / `SendStreamingMessage` parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SendMessageRequest {
    /// Tenant routing value.
    #[serde(
        default,
        deserialize_with = "empty_as_none",
        skip_serializing_if = "Option::is_none"
    )]
    pub tenant: Option<String>,
    /// The message. REQUIRED.
    pub message: Message,
    /// How to handle the request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configuration: Option<SendMessageConfiguration>,
    /// Extension data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

impl SendMessageRequest {
    /// A request sending `message` with default configuration (blocking).
    pub fn new(message: Message) -> Self {
        Self {
            tenant: None,
            message,
            configuration: None,
            metadata: None,
        }
    }

    /// Returns as soon as the task exists instead of waiting for it to finish.
    #[must_use]
    pub fn with_return_immediately(mut self, on: bool) -> Self {
        self.configuration
            .get_or_insert_with(Default::default)
            .return_immediately = on;
        self
    }

    /// A2A 1.1 optimistic concurrency: continue the task only if its generation is still
    /// `generation` (else `TaskGenerationMismatchError`, -32010 / 409 / ABORTED).
    #[must_use]
    pub fn with_if_generation_match(mut self, generation: i64) -> Self {
        self.configuration
            .get_or_insert_with(Default::default)
            .if_generation_match = Some(generation);
        self
    }

    /// Limits the history in the returned task.
    #[must_use]
    pub fn with_history_length(mut self, n: i32) -> Self {
        self.configuration
            .get_or_insert_with(Default::default)
            .history_length = Some(n);
        self
    }

    /// Sets the tenant.
    #[must_use]
    pub fn with_tenant(mut self, tenant: impl Into<String>) -> Self {
        self.tenant = Some(tenant.into());
        self
    }

    /// Whether the client asked not to wait for the task to finish.
    pub fn return_immediately(&self) -> bool {
        self.configuration
            .as_ref()
            .is_some_and(|c| c.return_immediately)
    }

    /// The requested history length.
    pub fn history_length(&self) -> Option<i32> {
        self.configuration.as_ref().and_then(|c| c.history_length)
    }
}

/// Options of a `SendMessage` request.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SendMessageConfiguration {
    /// Media types the client can consume.
    #[serde(
        default,
        alias = "accepted_output_modes",
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub accepted_output_modes: Vec<String>,
    /// A webhook to register for the new task.
    #[serde(
        default,
        alias = "task_push_notification_config",
        skip_serializing_if = "Option::is_none"
    )]
    pub task_push_notification_config: Option<TaskPushNotificationConfig>,
    /// At most this many recent messages in the returned task's history (0: none).
    #[serde(
        default,
        alias = "history_length",
        deserialize_with = "opt_int32",
        skip_serializing_if = "Option::is_none"
    )]
    pub history_length: Option<i32>,
    /// Return as soon as the task exists (default: wait for a terminal or interrupted state).
    #[serde(
        default,
        alias = "return_immediately",
        skip_serializing_if = "is_false"
    )]
    pub return_immediately: bool,
    /// A2A 1.1 optimistic concurrency: continue the task only if its generation is still this
    /// one, else `TaskGenerationMismatchError`. Ignored when the message creates a task.
    #[serde(
        default,
        alias = "if_generation_match",
        deserialize_with = "opt_int64",
        serialize_with = "opt_int64_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub if_generation_match: Option<i64>,
}

/// `GetTask` parameters.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetTaskRequest {
    /// Tenant routing value.
    #[serde(
        default,
        deserialize_with = "empty_as_none",
        skip_serializing_if = "Option::is_none"
    )]
    pub tenant: Option<String>,
    /// The task id. REQUIRED.
    #[serde(default, deserialize_with = "null_as_default")]
    pub id: TaskId,
    /// At most this many recent history messages (0: none).
    #[serde(
        default,
        alias = "history_length",
        deserialize_with = "opt_int32",
        skip_serializing_if = "Option::is_none"
    )]
    pub history_length: Option<i32>,
    /// A2A 1.1 long poll: answer once the task's generation is past this one (or the server's
    /// wait is over). Unset: answer at once.
    #[serde(
        default,
        alias = "current_generation",
        deserialize_with = "opt_int64",
        serialize_with = "opt_int64_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub current_generation: Option<i64>,
}

impl GetTaskRequest {
    /// A request for the task `id`.
    pub fn new(id: impl Into<TaskId>) -> Self {
        Self {
            id: id.into(),
            ..Self::default()
        }
    }

    /// Long-polls (A2A 1.1): the answer waits until the task's generation is past `generation`.
    #[must_use]
    pub fn with_current_generation(mut self, generation: i64) -> Self {
        self.current_generation = Some(generation);
        self
    }
}

/// `ListTasks` parameters (all filters optional).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTasksRequest {
    /// Tenant routing value.
    #[serde(
        default,
        deserialize_with = "empty_as_none",
        skip_serializing_if = "Option::is_none"
    )]
    pub tenant: Option<String>,
    /// Only tasks of this context.
    #[serde(
        default,
        alias = "context_id",
        deserialize_with = "empty_as_none",
        skip_serializing_if = "Option::is_none"
    )]
    pub context_id: Option<ContextId>,
    /// Only tasks in this state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<TaskState>,
    /// Page size, 1..=100 (default 50).
    #[serde(
        default,
        alias = "page_size",
        deserialize_with = "opt_int32",
        skip_serializing_if = "Option::is_none"
    )]
    pub page_size: Option<i32>,
    /// The `nextPageToken` of the previous page.
    #[serde(
        default,
        alias = "page_token",
        deserialize_with = "empty_as_none",
        skip_serializing_if = "Option::is_none"
    )]
    pub page_token: Option<String>,
    /// At most this many recent history messages per task (0: none).
    #[serde(
        default,
        alias = "history_length",
        deserialize_with = "opt_int32",
        skip_serializing_if = "Option::is_none"
    )]
    pub history_length: Option<i32>,
    /// Only tasks whose status timestamp is at or after this time.
    #[serde(
        default,
        alias = "status_timestamp_after",
        skip_serializing_if = "Option::is_none"
    )]
    pub status_timestamp_after: Option<Timestamp>,
    /// Include artifacts (default: the `artifacts` key is absent).
    #[serde(
        default,
        alias = "include_artifacts",
        skip_serializing_if = "Option::is_none"
    )]
    pub include_artifacts: Option<bool>,
}

impl ListTasksRequest {
    /// The effective page size (the default when unset).
    pub fn effective_page_size(&self) -> i32 {
        self.page_size.unwrap_or(DEFAULT_PAGE_SIZE)
    }
}

/// `ListTasks` result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTasksResponse {
    /// The page of tasks. REQUIRED (may be empty).
    #[serde(default, deserialize_with = "null_as_default")]
    pub tasks: Vec<Task>,
    /// Token of the next page; `""` on the last page. REQUIRED (always emitted).
    #[serde(
        default,
        alias = "next_page_token",
        deserialize_with = "null_as_default"
    )]
    pub next_page_token: String,
    /// The number of tasks in this page. REQUIRED.
    #[serde(default, alias = "page_size", deserialize_with = "int32")]
    pub page_size: i32,
    /// The number of matching tasks across all pages. REQUIRED.
    #[serde(default, alias = "total_size", deserialize_with = "int32")]
    pub total_size: i32,
}

/// `CancelTask` parameters.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelTaskRequest {
    /// Tenant routing value.
    #[serde(
        default,
        deserialize_with = "empty_as_none",
        skip_serializing_if = "Option::is_none"
    )]
    pub tenant: Option<String>,
    /// The task id. REQUIRED.
    #[serde(default, deserialize_with = "null_as_default")]
    pub id: TaskId,
    /// Extension data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

impl CancelTaskRequest {
    /// A request to cancel task `id`.
    pub fn new(id: impl Into<TaskId>) -> Self {
        Self {
            id: id.into(),
            ..Self::default()
        }
    }
}

/// `SubscribeToTask` parameters.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscribeToTaskRequest {
    /// Tenant routing value.
    #[serde(
        default,
        deserialize_with = "empty_as_none",
        skip_serializing_if = "Option::is_none"
    )]
    pub tenant: Option<String>,
    /// The task id. REQUIRED.
    #[serde(default, deserialize_with = "null_as_default")]
    pub id: TaskId,
}

impl SubscribeToTaskRequest {
    /// A request to subscribe to task `id`.
    pub fn new(id: impl Into<TaskId>) -> Self {
        Self {
            id: id.into(),
            ..Self::default()
        }
    }
}

/// A webhook registration for a task's updates. Also the parameters of
/// `CreateTaskPushNotificationConfig` (there is no separate request type).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskPushNotificationConfig {
    /// Tenant routing value.
    #[serde(
        default,
        deserialize_with = "empty_as_none",
        skip_serializing_if = "Option::is_none"
    )]
    pub tenant: Option<String>,
    /// The config's id (assigned by the server when absent).
    #[serde(
        default,
        deserialize_with = "empty_as_none",
        skip_serializing_if = "Option::is_none"
    )]
    pub id: Option<String>,
    /// The task (empty when embedded in `SendMessageConfiguration`).
    #[serde(
        default,
        alias = "task_id",
        deserialize_with = "empty_as_none",
        skip_serializing_if = "Option::is_none"
    )]
    pub task_id: Option<TaskId>,
    /// The webhook URL. REQUIRED.
    #[serde(default, deserialize_with = "null_as_default")]
    pub url: String,
    /// An opaque token the receiver can check.
    #[serde(
        default,
        deserialize_with = "empty_as_none",
        skip_serializing_if = "Option::is_none"
    )]
    pub token: Option<String>,
    /// How the server authenticates to the webhook.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authentication: Option<AuthenticationInfo>,
}

/// Credentials the server sends to a webhook: `Authorization: <scheme> <credentials>`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuthenticationInfo {
    /// An HTTP authentication scheme (`Bearer`, `Basic`, …). REQUIRED.
    #[serde(default, deserialize_with = "null_as_default")]
    pub scheme: String,
    /// The credentials.
    #[serde(
        default,
        deserialize_with = "empty_as_none",
        skip_serializing_if = "Option::is_none"
    )]
    pub credentials: Option<String>,
}

/// `GetTaskPushNotificationConfig` parameters.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetTaskPushNotificationConfigRequest {
    /// Tenant routing value.
    #[serde(
        default,
        deserialize_with = "empty_as_none",
        skip_serializing_if = "Option::is_none"
    )]
    pub tenant: Option<String>,
    /// The task. REQUIRED.
    #[serde(default, alias = "task_id", deserialize_with = "null_as_default")]
    pub task_id: TaskId,
    /// The config id. REQUIRED.
    #[serde(default, deserialize_with = "null_as_default")]
    pub id: String,
}

/// `DeleteTaskPushNotificationConfig` parameters.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeleteTaskPushNotificationConfigRequest {
    /// Tenant routing value.
    #[serde(
        default,
        deserialize_with = "empty_as_none",
        skip_serializing_if = "Option::is_none"
    )]
    pub tenant: Option<String>,
    /// The task. REQUIRED.
    #[serde(default, alias = "task_id", deserialize_with = "null_as_default")]
    pub task_id: TaskId,
    /// The config id. REQUIRED.
    #[serde(default, deserialize_with = "null_as_default")]
    pub id: String,
}

/// `ListTaskPushNotificationConfigs` parameters.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTaskPushNotificationConfigsRequest {
    /// Tenant routing value.
    #[serde(
        default,
        deserialize_with = "empty_as_none",
        skip_serializing_if = "Option::is_none"
    )]
    pub tenant: Option<String>,
    /// The task. REQUIRED.
    #[serde(default, alias = "task_id", deserialize_with = "null_as_default")]
    pub task_id: TaskId,
    /// Page size: 1 to [`MAX_PAGE_SIZE`], 0 for the default
    /// ([`DEFAULT_PUSH_CONFIG_PAGE_SIZE`]).
    #[serde(
        default,
        alias = "page_size",
        deserialize_with = "int32",
        skip_serializing_if = "is_zero"
    )]
    pub page_size: i32,
    /// The `nextPageToken` of the previous page.
    #[serde(
        default,
        alias = "page_token",
        deserialize_with = "empty_as_none",
        skip_serializing_if = "Option::is_none"
    )]
    pub page_token: Option<String>,
}

fn is_zero(n: &i32) -> bool {
    *n == 0
}

/// `ListTaskPushNotificationConfigs` result.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTaskPushNotificationConfigsResponse {
    /// The configs.
    #[serde(default, deserialize_with = "null_as_default")]
    pub configs: Vec<TaskPushNotificationConfig>,
    /// Token of the next page; `""` on the last page.
    #[serde(
        default,
        alias = "next_page_token",
        deserialize_with = "null_as_default"
    )]
    pub next_page_token: String,
}

/// `GetExtendedAgentCard` parameters.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GetExtendedAgentCardRequest {
    /// Tenant routing value.
    #[serde(
        default,
        deserialize_with = "empty_as_none",
        skip_serializing_if = "Option::is_none"
    )]
    pub tenant: Option<String>,
}

/// The result of `DeleteTaskPushNotificationConfig` (`google.protobuf.Empty`, `{}` on the wire).
/// `null` is accepted too (some SDKs send it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Empty {}

impl<'de> Deserialize<'de> for Empty {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Option::<serde::de::IgnoredAny>::deserialize(d).map(|_| Empty {})
    }
}

/// A request's `tenant` field, which every request has: a client fills it in from the
/// interface it calls, a server scopes the call to it.
pub trait HasTenant {
    /// The tenant routing value, if set.
    fn tenant(&self) -> Option<&str>;
    /// Sets the tenant routing value.
    fn set_tenant(&mut self, tenant: Option<String>);
}

macro_rules! has_tenant {
    ($($t:ty),+ $(,)?) => {
        $(impl HasTenant for $t {
            fn tenant(&self) -> Option<&str> {
                self.tenant.as_deref()
            }
            fn set_tenant(&mut self, tenant: Option<String>) {
                self.tenant = tenant;
            }
        })+
    };
}

has_tenant!(
    SendMessageRequest,
    GetTaskRequest,
    ListTasksRequest,
    CancelTaskRequest,
    SubscribeToTaskRequest,
    TaskPushNotificationConfig,
    GetTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigsRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
);
