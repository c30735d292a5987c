//! The A2A operations, declared once.
//!
//! [`for_each_operation!`](crate::for_each_operation) holds the one list of operations: for
//! each, its name, the handler method that serves it, its request and response types, whether
//! it streams, its v0.3 name and codec, its protobuf messages and its HTTP+JSON routes.
//! Everything that used to be a `match` per binding comes from it: [`Method`] and its name
//! tables, one marker type per operation implementing [`Operation`], the [`Request`] impls, the
//! route table ([`http_json::ROUTES`](crate::http_json::ROUTES)), [`proto::messages`] and
//! [`v03::decode_params`](crate::v03::decode_params). Code generic over [`Operation`] then
//! serves or calls every operation, and [`Method::visit`] picks the operation of a method read
//! off the wire. Adding an operation is adding one entry to the table (and the handler method
//! it names).
//!
//! ```
//! use a2a_core::operation::{self, Operation, Visit};
//! use a2a_core::{Method, Request};
//!
//! // The operation of a request type, and what the table says about it.
//! assert_eq!(<a2a_core::CancelTaskRequest as Request>::METHOD, Method::CancelTask);
//! assert_eq!(operation::CancelTask::V03_NAME, Some("tasks/cancel"));
//! assert!(operation::SubscribeToTask::STREAMING);
//!
//! // From a method read off the wire to code generic over its operation.
//! struct RequestType;
//! impl Visit for RequestType {
//!     type Output = &'static str;
//!     fn visit<O: Operation>(self) -> &'static str {
//!         O::request_message().name
//!     }
//! }
//! assert_eq!(Method::GetTask.visit(RequestType), "lf.a2a.v1.GetTaskRequest");
//! ```
//!
//! [`proto::messages`]: crate::proto::messages

use crate::error::Error;
use crate::http_json::Route;
use crate::proto::MessageType;
use crate::validate::Validate;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// One A2A operation: a zero-sized marker type (`operation::GetTask`, …) carrying, as
/// associated items, everything a binding needs to serve or call it.
pub trait Operation: Copy + Default + std::fmt::Debug + Send + Sync + 'static {
    /// The operation's method.
    const METHOD: Method;
    /// The request (the params, the body, the protobuf request message).
    type Request: Serialize
        + DeserializeOwned
        + Validate
        + crate::HasTenant
        + Clone
        + Into<crate::v03::Params>
        + std::fmt::Debug
        + Send
        + Sync
        + 'static;
    /// The result of a unary call; for a streaming operation, one event.
    type Response: Serialize + DeserializeOwned + std::fmt::Debug + Send + 'static;
    /// Whether the result is a stream of events.
    const STREAMING: bool;
    /// The v0.3 JSON-RPC method name, if the operation existed in v0.3.
    const V03_NAME: Option<&'static str>;
    /// The HTTP+JSON routes, the one a client uses first.
    const ROUTES: &'static [Route];

    /// The protobuf request message.
    fn request_message() -> &'static MessageType;
    /// The protobuf response message (for a streaming operation, one event).
    fn response_message() -> &'static MessageType;
    /// Reads v0.3 `params` (`null` reads as `{}`) into the request.
    fn decode_v03_params(params: &Value) -> Result<Self::Request, Error>;
    /// Writes the request as v0.3 `params`.
    fn encode_v03_params(request: &Self::Request) -> Value;
    /// Writes a result (for a streaming operation, one event) the v0.3 way.
    fn encode_v03_result(response: &Self::Response) -> Value;
    /// Reads a v0.3 result (for a streaming operation, one event).
    fn decode_v03_result(result: &Value) -> Result<Self::Response, Error>;
}

/// Ties a request type to its operation (`SendMessageRequest` is the request of
/// `SendStreamingMessage` too; its operation here is `SendMessage`), for typed calls:
/// `client.call(&GetTaskRequest::new("t-1"))` returns a `Task`.
pub trait Request: Serialize + DeserializeOwned + Send + Sync + 'static {
    /// The operation this request calls.
    type Operation: Operation<Request = Self, Response = Self::Response>;
    /// The operation's method.
    const METHOD: Method;
    /// The result of a unary call; for streaming methods, one event.
    type Response: Serialize + DeserializeOwned + Send + 'static;
}

/// Code generic over an operation, run for the operation of a [`Method`] by
/// [`Method::visit`]: the one place a method read off the wire becomes a type.
pub trait Visit {
    /// What the visit returns.
    type Output;
    /// Runs for the operation `O`.
    fn visit<O: Operation>(self) -> Self::Output;
}

/// The table of operations. Expands `$callback! { … }` with one entry per operation:
///
/// ```text
/// /// docs
/// Name => handler_method(request: RequestType, response: ResponseType) {
///     streaming: bool,
///     request_of: bool,            // whether `RequestType`'s `Request` impl names this operation
///     v03: Some("v0.3/name") | None,
///     v03_codec: (decode_params, encode_params, encode_result, decode_result),  // in `v03`
///     proto: (REQUEST_MESSAGE, RESPONSE_MESSAGE),                              // in `proto::schema`
///     rest: [(HttpMethod, "/template", Rest), …],                              // in `http_json`
/// };
/// ```
///
/// Types are written `$crate::…`, so a callback in any crate can use them. `handler_method`
/// names the `a2a_server::RequestHandler` method (and, mostly, the client method) that serves
/// the operation, so a server can generate its dispatch from this table.
#[macro_export]
macro_rules! for_each_operation {
    ($callback:ident) => {
        $callback! {
            /// Send a message; get a task or a message back.
            SendMessage => send_message(request: $crate::SendMessageRequest, response: $crate::SendMessageResponse) {
                streaming: false,
                request_of: true,
                v03: Some("message/send"),
                v03_codec: (decode_send_params, encode_send_params, encode_send_response, decode_send_response),
                proto: (SEND_MESSAGE_REQUEST, SEND_MESSAGE_RESPONSE),
                rest: [(Post, "/message:send", Body)],
            };
            /// Send a message; get a stream of events back.
            SendStreamingMessage => send_streaming_message(request: $crate::SendMessageRequest, response: $crate::StreamResponse) {
                streaming: true,
                request_of: false,
                v03: Some("message/stream"),
                v03_codec: (decode_send_params, encode_send_params, encode_stream_event, decode_stream_event),
                proto: (SEND_MESSAGE_REQUEST, STREAM_RESPONSE),
                rest: [(Post, "/message:stream", Body)],
            };
            /// Get a task.
            GetTask => get_task(request: $crate::GetTaskRequest, response: $crate::Task) {
                streaming: false,
                request_of: true,
                v03: Some("tasks/get"),
                v03_codec: (decode_get_task_params, encode_get_task_params, encode_task, decode_task_result),
                proto: (GET_TASK_REQUEST, TASK),
                rest: [(Get, "/tasks/{id}", Query)],
            };
            /// List tasks.
            ListTasks => list_tasks(request: $crate::ListTasksRequest, response: $crate::ListTasksResponse) {
                streaming: false,
                request_of: true,
                v03: None,
                v03_codec: (decode_list_tasks_params, encode_list_tasks_params, encode_list_tasks_result, decode_list_tasks_result),
                proto: (LIST_TASKS_REQUEST, LIST_TASKS_RESPONSE),
                rest: [(Get, "/tasks", Query)],
            };
            /// Cancel a task.
            CancelTask => cancel_task(request: $crate::CancelTaskRequest, response: $crate::Task) {
                streaming: false,
                request_of: true,
                v03: Some("tasks/cancel"),
                v03_codec: (decode_cancel_params, encode_cancel_params, encode_task, decode_task_result),
                proto: (CANCEL_TASK_REQUEST, TASK),
                rest: [(Post, "/tasks/{id}:cancel", Body)],
            };
            /// Stream a task's updates.
            SubscribeToTask => subscribe_to_task(request: $crate::SubscribeToTaskRequest, response: $crate::StreamResponse) {
                streaming: true,
                request_of: true,
                v03: Some("tasks/resubscribe"),
                v03_codec: (decode_subscribe_params, encode_subscribe_params, encode_stream_event, decode_stream_event),
                proto: (SUBSCRIBE_TO_TASK_REQUEST, STREAM_RESPONSE),
                // `GET` in the proto, `POST` in the spec text: servers accept both.
                rest: [(Get, "/tasks/{id}:subscribe", None), (Post, "/tasks/{id}:subscribe", None)],
            };
            /// Register a webhook.
            CreateTaskPushNotificationConfig => create_push_config(request: $crate::TaskPushNotificationConfig, response: $crate::TaskPushNotificationConfig) {
                streaming: false,
                request_of: true,
                v03: Some("tasks/pushNotificationConfig/set"),
                v03_codec: (decode_set_push_config_params, encode_push_config, encode_push_config, decode_push_config_result),
                proto: (TASK_PUSH_NOTIFICATION_CONFIG, TASK_PUSH_NOTIFICATION_CONFIG),
                rest: [(Post, "/tasks/{taskId}/pushNotificationConfigs", Body)],
            };
            /// Get a webhook registration.
            GetTaskPushNotificationConfig => get_push_config(request: $crate::GetTaskPushNotificationConfigRequest, response: $crate::TaskPushNotificationConfig) {
                streaming: false,
                request_of: true,
                v03: Some("tasks/pushNotificationConfig/get"),
                v03_codec: (decode_get_push_config_params, encode_get_push_config_params, encode_push_config, decode_push_config_result),
                proto: (GET_TASK_PUSH_NOTIFICATION_CONFIG_REQUEST, TASK_PUSH_NOTIFICATION_CONFIG),
                rest: [(Get, "/tasks/{taskId}/pushNotificationConfigs/{id}", Query)],
            };
            /// List a task's webhook registrations.
            ListTaskPushNotificationConfigs => list_push_configs(request: $crate::ListTaskPushNotificationConfigsRequest, response: $crate::ListTaskPushNotificationConfigsResponse) {
                streaming: false,
                request_of: true,
                v03: Some("tasks/pushNotificationConfig/list"),
                v03_codec: (decode_list_push_configs_params, encode_list_push_configs_params, encode_push_config_list, decode_push_config_list),
                proto: (LIST_TASK_PUSH_NOTIFICATION_CONFIGS_REQUEST, LIST_TASK_PUSH_NOTIFICATION_CONFIGS_RESPONSE),
                rest: [(Get, "/tasks/{taskId}/pushNotificationConfigs", Query)],
            };
            /// Remove a webhook registration.
            DeleteTaskPushNotificationConfig => delete_push_config(request: $crate::DeleteTaskPushNotificationConfigRequest, response: $crate::Empty) {
                streaming: false,
                request_of: true,
                v03: Some("tasks/pushNotificationConfig/delete"),
                v03_codec: (decode_delete_push_config_params, encode_delete_push_config_params, encode_empty_result, decode_empty_result),
                proto: (DELETE_TASK_PUSH_NOTIFICATION_CONFIG_REQUEST, EMPTY),
                rest: [(Delete, "/tasks/{taskId}/pushNotificationConfigs/{id}", Query)],
            };
            /// Get the extended agent card.
            GetExtendedAgentCard => get_extended_agent_card(request: $crate::GetExtendedAgentCardRequest, response: $crate::AgentCard) {
                streaming: false,
                request_of: true,
                v03: Some("agent/getAuthenticatedExtendedCard"),
                v03_codec: (decode_card_params, encode_card_params, encode_card, decode_card),
                proto: (GET_EXTENDED_AGENT_CARD_REQUEST, AGENT_CARD),
                rest: [(Get, "/extendedAgentCard", Query)],
            };
        }
    };
}

/// The `Request` impl of an entry whose `request_of` is true.
macro_rules! request_impl {
    (true, $op:ident, $req:ty, $resp:ty) => {
        impl Request for $req {
            type Operation = $op;
            const METHOD: Method = Method::$op;
            type Response = $resp;
        }
    };
    (false, $op:ident, $req:ty, $resp:ty) => {};
}

/// Expands the table into `Method`, the marker types and their impls.
macro_rules! define_operations {
    ($(
        $(#[doc = $doc:literal])*
        $op:ident => $call:ident(request: $req:ty, response: $resp:ty) {
            streaming: $streaming:literal,
            request_of: $request_of:tt,
            v03: $v03:expr,
            v03_codec: ($dp:ident, $ep:ident, $er:ident, $dr:ident),
            proto: ($reqmsg:ident, $respmsg:ident),
            rest: [$(($http:ident, $template:literal, $rest:ident)),+ $(,)?],
        };
    )+) => {
        /// The A2A operations, by name.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum Method {
            $($(#[doc = $doc])* $op,)+
        }

        impl Method {
            /// Every method, in the table's order.
            pub const ALL: [Method; [$(Method::$op),+].len()] = [$(Method::$op),+];

            /// The v1.0 method name (JSON-RPC method, gRPC method).
            pub const fn name(self) -> &'static str {
                match self {
                    $(Method::$op => stringify!($op),)+
                }
            }

            /// The v0.3 JSON-RPC method name, if the operation existed in v0.3 (`ListTasks` did
            /// not).
            pub const fn v03_name(self) -> Option<&'static str> {
                match self {
                    $(Method::$op => $v03,)+
                }
            }

            /// Whether the result is a stream of events.
            pub const fn is_streaming(self) -> bool {
                match self {
                    $(Method::$op => $streaming,)+
                }
            }

            /// Runs `visitor` for this method's operation.
            pub fn visit<V: Visit>(self, visitor: V) -> V::Output {
                match self {
                    $(Method::$op => visitor.visit::<$op>(),)+
                }
            }
        }

        /// Every route of the HTTP+JSON binding, each operation's in the table's order.
        pub(crate) const ROUTES: [Route; [$($($template),+),+].len()] = [$($(Route {
            method: Method::$op,
            http_method: crate::http_json::HttpMethod::$http,
            template: $template,
            rest: crate::http_json::Rest::$rest,
        }),+),+];

        $(
            $(#[doc = $doc])*
            #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
            pub struct $op;

            impl Operation for $op {
                const METHOD: Method = Method::$op;
                type Request = $req;
                type Response = $resp;
                const STREAMING: bool = $streaming;
                const V03_NAME: Option<&'static str> = $v03;
                const ROUTES: &'static [Route] = &[$(Route {
                    method: Method::$op,
                    http_method: crate::http_json::HttpMethod::$http,
                    template: $template,
                    rest: crate::http_json::Rest::$rest,
                }),+];

                fn request_message() -> &'static MessageType {
                    &crate::proto::schema::$reqmsg
                }
                fn response_message() -> &'static MessageType {
                    &crate::proto::schema::$respmsg
                }
                fn decode_v03_params(params: &Value) -> Result<Self::Request, Error> {
                    crate::v03::$dp(params)
                }
                fn encode_v03_params(request: &Self::Request) -> Value {
                    crate::v03::$ep(request)
                }
                fn encode_v03_result(response: &Self::Response) -> Value {
                    crate::v03::$er(response)
                }
                fn decode_v03_result(result: &Value) -> Result<Self::Response, Error> {
                    crate::v03::$dr(result)
                }
            }

            request_impl!($request_of, $op, $req, $resp);
        )+
    };
}

crate::for_each_operation!(define_operations);

impl Method {
    /// Looks up a v1.0 method name.
    pub fn from_name(name: &str) -> Option<Method> {
        Method::ALL.into_iter().find(|m| m.name() == name)
    }

    /// Looks up a v0.3 method name.
    pub fn from_v03_name(name: &str) -> Option<Method> {
        Method::ALL.into_iter().find(|m| m.v03_name() == Some(name))
    }
}

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Check;
    impl Visit for Check {
        type Output = (Method, bool, Option<&'static str>);
        fn visit<O: Operation>(self) -> Self::Output {
            (O::METHOD, O::STREAMING, O::V03_NAME)
        }
    }

    #[test]
    fn every_method_visits_its_own_operation() {
        for m in Method::ALL {
            assert_eq!(m.visit(Check), (m, m.is_streaming(), m.v03_name()));
            assert_eq!(Method::from_name(m.name()), Some(m));
            if let Some(v03) = m.v03_name() {
                assert_eq!(Method::from_v03_name(v03), Some(m));
            }
        }
    }

    #[test]
    fn every_operation_routes_and_nothing_else() {
        for route in &ROUTES {
            struct Routes;
            impl Visit for Routes {
                type Output = &'static [Route];
                fn visit<O: Operation>(self) -> Self::Output {
                    O::ROUTES
                }
            }
            assert!(route.method.visit(Routes).contains(route));
        }
    }
}
