//! Every check `a2a check` runs: its id, group, level and the spec section it tests. Sections
//! are those of the A2A v1.0 specification (`docs/specification.md` of a2aproject/A2A); those
//! marked `(1.1)` are of the 1.1 text (the same file on its `dev-1.1` branch), which the
//! generations group tests over the interfaces a card declares with protocol version 1.1.

use super::{Check, Group, Level};

const fn check(
    id: &'static str,
    group: Group,
    level: Level,
    section: &'static str,
    title: &'static str,
) -> Check {
    Check {
        id,
        group,
        level,
        section,
        title,
    }
}

use Group::{Auth, Card, Errors, Generations, Interfaces, Push, Streaming, Tasks};
use Level::{May, Must, Should};

pub(super) const CARD_FETCH: Check = check(
    "card.fetch",
    Card,
    Must,
    "8.2",
    "the card is served at /.well-known/agent-card.json as a JSON object",
);
pub(super) const CARD_MEDIA_TYPE: Check = check(
    "card.media-type",
    Card,
    Should,
    "14.3",
    "the card is served as application/json",
);
pub(super) const CARD_REQUIRED: Check = check(
    "card.required",
    Card,
    Must,
    "4.4.1",
    "every REQUIRED field of the card and its skills, interfaces and provider is there",
);
pub(super) const CARD_MODEL: Check = check(
    "card.model",
    Card,
    Must,
    "4.4",
    "the card reads as the v1.0 model: types, enum values, absolute URLs, declared schemes",
);
pub(super) const CARD_V1: Check = check(
    "card.v1-interface",
    Card,
    Must,
    "8.3.1",
    "at least one interface declares protocolVersion 1.0",
);
pub(super) const CARD_CACHE_CONTROL: Check = check(
    "card.cache-control",
    Card,
    Should,
    "8.6.1",
    "the card comes with Cache-Control: max-age",
);
pub(super) const CARD_ETAG: Check = check(
    "card.etag",
    Card,
    Should,
    "8.6.1",
    "the card comes with an ETag",
);
pub(super) const CARD_CONDITIONAL: Check = check(
    "card.conditional",
    Card,
    Should,
    "8.6",
    "If-None-Match with the card's ETag is answered 304 Not Modified",
);
pub(super) const CARD_LEGACY_PATH: Check = check(
    "card.legacy-path",
    Card,
    May,
    "A.1",
    "the card is also served at the pre-0.3 path /.well-known/agent.json",
);
pub(super) const CARD_V03_SHAPE: Check = check(
    "card.v03-shape",
    Card,
    Should,
    "3.6.2",
    "a card that declares a v0.3 interface is served in the v0.3 shape to A2A-Version: 0.3",
);

pub(super) const IFACE_ANSWERS: Check = check(
    "interface.answers",
    Interfaces,
    Must,
    "5.1",
    "the interface answers an A2A request in its binding",
);
pub(super) const IFACE_MEDIA_TYPE: Check = check(
    "interface.media-type",
    Interfaces,
    Must,
    "9.1, 11.1",
    "answers carry the binding's content type (application/json; application/a2a+json or application/json)",
);

pub(super) const ERR_PARSE: Check = check(
    "errors.malformed-json",
    Errors,
    Must,
    "9.5, 11.6",
    "a body that is not JSON (not protobuf) is refused: -32700 with id null / HTTP 400 / INVALID_ARGUMENT",
);
pub(super) const ERR_INVALID_REQUEST: Check = check(
    "errors.invalid-request",
    Errors,
    Must,
    "9.5",
    "a request with \"jsonrpc\": \"1.0\" is answered -32600",
);
pub(super) const ERR_UNKNOWN_METHOD: Check = check(
    "errors.unknown-method",
    Errors,
    Must,
    "9.5, 10.6",
    "an unknown method is answered -32601 (gRPC UNIMPLEMENTED)",
);
pub(super) const ERR_INVALID_PARAMS: Check = check(
    "errors.invalid-params",
    Errors,
    Must,
    "3.3.2, 5.4",
    "SendMessage without a message is answered invalid params (-32602 / HTTP 400 / INVALID_ARGUMENT)",
);
pub(super) const ERR_GET_UNKNOWN: Check = check(
    "errors.get-unknown-task",
    Errors,
    Must,
    "3.1.3, 5.4",
    "GetTask of an unknown id is answered TaskNotFound",
);
pub(super) const ERR_CANCEL_UNKNOWN: Check = check(
    "errors.cancel-unknown-task",
    Errors,
    Must,
    "3.1.5, 5.4",
    "CancelTask of an unknown id is answered TaskNotFound",
);
pub(super) const ERR_SUBSCRIBE_UNKNOWN: Check = check(
    "errors.subscribe-unknown-task",
    Errors,
    Must,
    "3.1.6, 5.4",
    "SubscribeToTask of an unknown id is answered TaskNotFound, not a stream",
);
pub(super) const ERR_VERSION: Check = check(
    "errors.unsupported-version",
    Errors,
    Must,
    "3.6.2, 5.4",
    "A2A-Version: 99.0 is answered VersionNotSupported",
);
pub(super) const ERR_PAGE_SIZE: Check = check(
    "errors.page-size",
    Errors,
    Should,
    "3.1.4, 6.5",
    "ListTasks with pageSize 101 is refused as invalid params (or capped at 100)",
);
pub(super) const ERR_PAGE_TOKEN: Check = check(
    "errors.page-token",
    Errors,
    Should,
    "3.1.4, 6.5",
    "ListTasks with a page token the agent never issued is answered invalid params",
);
pub(super) const ERR_HISTORY_NEGATIVE: Check = check(
    "errors.history-length",
    Errors,
    Should,
    "3.2.4, 6.5",
    "GetTask with historyLength -1 is answered invalid params",
);
pub(super) const ERR_ERROR_INFO: Check = check(
    "errors.error-info",
    Errors,
    Must,
    "9.5, 10.6, 11.6",
    "A2A errors carry a google.rpc.ErrorInfo with the spec's reason and domain a2a-protocol.org (SHOULD over JSON-RPC)",
);
pub(super) const ERR_SHAPE: Check = check(
    "errors.shape",
    Errors,
    Must,
    "9.5, 11.6",
    "errors have the binding's form: JSON-RPC error objects with HTTP 200 and the request id; google.rpc.Status bodies whose code is the HTTP status",
);

pub(super) const TASK_SEND: Check = check(
    "tasks.send",
    Tasks,
    Must,
    "3.1.1, 9.4.1",
    "SendMessage with a text message returns {\"task\"} or {\"message\"} in the v1.0 model",
);
pub(super) const TASK_BLOCKING: Check = check(
    "tasks.blocking",
    Tasks,
    Must,
    "3.2.2",
    "a default (blocking) SendMessage returns the task in a terminal or interrupted state",
);
pub(super) const TASK_GET: Check = check(
    "tasks.get",
    Tasks,
    Must,
    "3.1.3",
    "GetTask returns the task SendMessage returned: same id and context, a state at or after it",
);
pub(super) const TASK_HISTORY: Check = check(
    "tasks.history-length",
    Tasks,
    Must,
    "3.2.4",
    "GetTask honours historyLength: 0 gives no history, 1 at most one message",
);
pub(super) const TASK_LIST: Check = check(
    "tasks.list",
    Tasks,
    Must,
    "3.1.4",
    "ListTasks by contextId finds the task, with tasks, nextPageToken, pageSize and totalSize",
);
pub(super) const TASK_LIST_ARTIFACTS: Check = check(
    "tasks.list-artifacts",
    Tasks,
    Should,
    "3.1.4",
    "ListTasks leaves artifacts out unless includeArtifacts is true",
);
pub(super) const TASK_PAGES: Check = check(
    "tasks.pagination",
    Tasks,
    Must,
    "3.1.4",
    "pages of one task each visit every task of a context once, newest first, ending with nextPageToken \"\"",
);
pub(super) const TASK_CANCEL_FINISHED: Check = check(
    "tasks.cancel-finished",
    Tasks,
    Must,
    "3.1.5, 5.4",
    "CancelTask of a finished task is answered TaskNotCancelable",
);

pub(super) const STREAM_UNSUPPORTED: Check = check(
    "streaming.not-declared",
    Streaming,
    Must,
    "3.3.4",
    "without capabilities.streaming, SendStreamingMessage is answered UnsupportedOperation",
);
pub(super) const STREAM_OPENS: Check = check(
    "streaming.opens",
    Streaming,
    Must,
    "3.1.2, 9.4.2, 11.7",
    "SendStreamingMessage is answered with a text/event-stream (an HTTP/2 stream over gRPC)",
);
pub(super) const STREAM_FRAMING: Check = check(
    "streaming.framing",
    Streaming,
    Must,
    "9.4.2, 11.7",
    "every event is one StreamResponse (over JSON-RPC, a response carrying the request's id)",
);
pub(super) const STREAM_FIRST: Check = check(
    "streaming.first-event",
    Streaming,
    Must,
    "3.1.2",
    "the first event is a task or a message",
);
pub(super) const STREAM_ORDER: Check = check(
    "streaming.lifecycle",
    Streaming,
    Must,
    "3.1.2, 4.1.3",
    "events belong to the stream's task and its state never goes backwards",
);
pub(super) const STREAM_CLOSES: Check = check(
    "streaming.closes",
    Streaming,
    Must,
    "3.1.2, 11.7",
    "the stream closes after a message or a terminal or interrupted state",
);
pub(super) const STREAM_SUBSCRIBE_TERMINAL: Check = check(
    "streaming.subscribe-finished",
    Streaming,
    Must,
    "3.1.6",
    "SubscribeToTask of a finished task is answered UnsupportedOperation, not a stream",
);

pub(super) const PUSH_UNSUPPORTED: Check = check(
    "push.not-declared",
    Push,
    Must,
    "3.3.4, 3.1.7",
    "without capabilities.pushNotifications, push config calls are answered PushNotificationNotSupported",
);
pub(super) const PUSH_ROUND_TRIP: Check = check(
    "push.round-trip",
    Push,
    Must,
    "3.1.7-3.1.10",
    "a push config is created, read, listed and deleted (twice), and is gone after",
);
pub(super) const PUSH_UNKNOWN_TASK: Check = check(
    "push.unknown-task",
    Push,
    Must,
    "3.1.7, 5.4",
    "a push config for an unknown task is answered TaskNotFound",
);

pub(super) const GEN_PRESENT: Check = check(
    "generations.present",
    Generations,
    Must,
    "3.2.7 (1.1)",
    "on a 1.1 request, a task carries its generation (1 or more) and GetTask never gives less",
);
pub(super) const GEN_GAP_FREE: Check = check(
    "generations.gap-free",
    Generations,
    Must,
    "3.2.7 (1.1)",
    "on a 1.1 stream, each task event's generation is one more than the last (none repeated or skipped), and GetTask then gives the last",
);
pub(super) const GEN_POLL_PAST: Check = check(
    "generations.poll-past",
    Generations,
    Must,
    "3.2.7 (1.1)",
    "GetTask with a currentGeneration the task is past is answered at once, with the task's generation",
);
pub(super) const GEN_POLL_HOLDS: Check = check(
    "generations.poll-holds",
    Generations,
    Should,
    "3.2.7 (1.1)",
    "GetTask with the task's currentGeneration is held until the task changes, then answered with the new generation",
);
pub(super) const GEN_MISMATCH: Check = check(
    "generations.mismatch",
    Generations,
    Must,
    "3.2.2, 3.3.2, 5.4 (1.1)",
    "a message to a task with a wrong ifGenerationMatch is refused with TaskGenerationMismatchError",
);
pub(super) const AUTH_REQUIRED: Check = check(
    "auth.required",
    Auth,
    Must,
    "7.4",
    "a call without credentials is refused (HTTP 401 / gRPC UNAUTHENTICATED)",
);
pub(super) const AUTH_CHALLENGE: Check = check(
    "auth.challenge",
    Auth,
    Should,
    "7.4",
    "the refusal says how to authenticate (WWW-Authenticate)",
);

/// Every check, in the order they run and are reported.
pub const ALL: &[Check] = &[
    CARD_FETCH,
    CARD_MEDIA_TYPE,
    CARD_REQUIRED,
    CARD_MODEL,
    CARD_V1,
    CARD_CACHE_CONTROL,
    CARD_ETAG,
    CARD_CONDITIONAL,
    CARD_LEGACY_PATH,
    CARD_V03_SHAPE,
    IFACE_ANSWERS,
    IFACE_MEDIA_TYPE,
    ERR_PARSE,
    ERR_INVALID_REQUEST,
    ERR_UNKNOWN_METHOD,
    ERR_INVALID_PARAMS,
    ERR_GET_UNKNOWN,
    ERR_CANCEL_UNKNOWN,
    ERR_SUBSCRIBE_UNKNOWN,
    ERR_VERSION,
    ERR_PAGE_SIZE,
    ERR_PAGE_TOKEN,
    ERR_HISTORY_NEGATIVE,
    ERR_ERROR_INFO,
    ERR_SHAPE,
    TASK_SEND,
    TASK_BLOCKING,
    TASK_GET,
    TASK_HISTORY,
    TASK_LIST,
    TASK_LIST_ARTIFACTS,
    TASK_PAGES,
    TASK_CANCEL_FINISHED,
    STREAM_UNSUPPORTED,
    STREAM_OPENS,
    STREAM_FRAMING,
    STREAM_FIRST,
    STREAM_ORDER,
    STREAM_CLOSES,
    STREAM_SUBSCRIBE_TERMINAL,
    PUSH_UNSUPPORTED,
    PUSH_ROUND_TRIP,
    PUSH_UNKNOWN_TASK,
    GEN_PRESENT,
    GEN_GAP_FREE,
    GEN_POLL_PAST,
    GEN_POLL_HOLDS,
    GEN_MISMATCH,
    AUTH_REQUIRED,
    AUTH_CHALLENGE,
];

/// The generations group, in the order it runs.
pub(super) const GENERATIONS: &[Check] = &[
    GEN_PRESENT,
    GEN_GAP_FREE,
    GEN_POLL_PAST,
    GEN_POLL_HOLDS,
    GEN_MISMATCH,
];
