//! The one error table of A2A (JSON-RPC code, HTTP status, gRPC status, ErrorInfo reason), and
//! the wire error that peers see.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::fmt;

/// The `domain` of every A2A `google.rpc.ErrorInfo`.
pub const ERROR_DOMAIN: &str = "a2a-protocol.org";
/// The `@type` of a `google.rpc.ErrorInfo` detail.
pub const ERROR_INFO_TYPE: &str = "type.googleapis.com/google.rpc.ErrorInfo";
/// The `@type` of a `google.rpc.BadRequest` detail.
pub const BAD_REQUEST_TYPE: &str = "type.googleapis.com/google.rpc.BadRequest";

/// Every kind of error A2A defines, plus the JSON-RPC standard errors and the few HTTP-level
/// conditions a server reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The body is not JSON (-32700).
    ParseError,
    /// Not a valid JSON-RPC request (-32600).
    InvalidRequest,
    /// Unknown method (-32601).
    MethodNotFound,
    /// The parameters are invalid (-32602).
    InvalidParams,
    /// The server failed (-32603).
    Internal,
    /// No such task, or not visible to the caller (-32001).
    TaskNotFound,
    /// The task cannot be canceled (-32002).
    TaskNotCancelable,
    /// Push notifications are not supported (-32003).
    PushNotificationNotSupported,
    /// The operation is not supported (-32004).
    UnsupportedOperation,
    /// A media type is not supported (-32005).
    ContentTypeNotSupported,
    /// The agent produced an invalid response (-32006).
    InvalidAgentResponse,
    /// The extended agent card is declared but not configured (-32007).
    ExtendedAgentCardNotConfigured,
    /// A required extension was not requested (-32008).
    ExtensionSupportRequired,
    /// The requested protocol version is not supported (-32009).
    VersionNotSupported,
    /// A2A 1.1: the task's generation is not the `ifGenerationMatch` of the message (-32010).
    TaskGenerationMismatch,
    /// The caller is not authenticated (HTTP 401).
    Unauthenticated,
    /// The caller may not do this (HTTP 403).
    PermissionDenied,
    /// The request body is larger than the server accepts (HTTP 413).
    PayloadTooLarge,
}

/// One row of the error table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ErrorCodes {
    /// The JSON-RPC `error.code`.
    pub json_rpc: i32,
    /// The HTTP status of the HTTP+JSON binding (spec v1.0.1 mapping).
    pub http: u16,
    /// The gRPC status name.
    pub grpc: &'static str,
    /// The `google.rpc.ErrorInfo` reason.
    pub reason: &'static str,
    /// The default human-readable message.
    pub message: &'static str,
}

impl ErrorKind {
    /// Every kind.
    pub const ALL: [ErrorKind; 18] = [
        ErrorKind::ParseError,
        ErrorKind::InvalidRequest,
        ErrorKind::MethodNotFound,
        ErrorKind::InvalidParams,
        ErrorKind::Internal,
        ErrorKind::TaskNotFound,
        ErrorKind::TaskNotCancelable,
        ErrorKind::PushNotificationNotSupported,
        ErrorKind::UnsupportedOperation,
        ErrorKind::ContentTypeNotSupported,
        ErrorKind::InvalidAgentResponse,
        ErrorKind::ExtendedAgentCardNotConfigured,
        ErrorKind::ExtensionSupportRequired,
        ErrorKind::VersionNotSupported,
        ErrorKind::TaskGenerationMismatch,
        ErrorKind::Unauthenticated,
        ErrorKind::PermissionDenied,
        ErrorKind::PayloadTooLarge,
    ];

    /// The error table: the only place that maps a kind to its codes.
    pub const fn codes(self) -> ErrorCodes {
        const fn row(
            json_rpc: i32,
            http: u16,
            grpc: &'static str,
            reason: &'static str,
            message: &'static str,
        ) -> ErrorCodes {
            ErrorCodes {
                json_rpc,
                http,
                grpc,
                reason,
                message,
            }
        }
        use ErrorKind::*;
        match self {
            ParseError => row(
                -32700,
                400,
                "INVALID_ARGUMENT",
                "PARSE_ERROR",
                "Invalid JSON payload",
            ),
            InvalidRequest => row(
                -32600,
                400,
                "INVALID_ARGUMENT",
                "INVALID_REQUEST",
                "Request payload validation error",
            ),
            // gRPC's own status for a method a server does not have (what every gRPC
            // framework answers), also in the HTTP+JSON body's `status`.
            MethodNotFound => row(
                -32601,
                404,
                "UNIMPLEMENTED",
                "METHOD_NOT_FOUND",
                "Method not found",
            ),
            InvalidParams => row(
                -32602,
                400,
                "INVALID_ARGUMENT",
                "INVALID_PARAMS",
                "Invalid parameters",
            ),
            Internal => row(-32603, 500, "INTERNAL", "INTERNAL_ERROR", "Internal error"),
            TaskNotFound => row(-32001, 404, "NOT_FOUND", "TASK_NOT_FOUND", "Task not found"),
            TaskNotCancelable => row(
                -32002,
                400,
                "FAILED_PRECONDITION",
                "TASK_NOT_CANCELABLE",
                "Task cannot be canceled",
            ),
            PushNotificationNotSupported => row(
                -32003,
                400,
                "FAILED_PRECONDITION",
                "PUSH_NOTIFICATION_NOT_SUPPORTED",
                "Push notifications are not supported",
            ),
            UnsupportedOperation => row(
                -32004,
                400,
                "FAILED_PRECONDITION",
                "UNSUPPORTED_OPERATION",
                "This operation is not supported",
            ),
            ContentTypeNotSupported => row(
                -32005,
                400,
                "INVALID_ARGUMENT",
                "CONTENT_TYPE_NOT_SUPPORTED",
                "Incompatible content types",
            ),
            InvalidAgentResponse => row(
                -32006,
                500,
                "INTERNAL",
                "INVALID_AGENT_RESPONSE",
                "Invalid agent response",
            ),
            ExtendedAgentCardNotConfigured => row(
                -32007,
                400,
                "FAILED_PRECONDITION",
                "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
                "Extended agent card is not configured",
            ),
            ExtensionSupportRequired => row(
                -32008,
                400,
                "FAILED_PRECONDITION",
                "EXTENSION_SUPPORT_REQUIRED",
                "A required extension was not requested",
            ),
            VersionNotSupported => row(
                -32009,
                400,
                "FAILED_PRECONDITION",
                "VERSION_NOT_SUPPORTED",
                "Protocol version not supported",
            ),
            TaskGenerationMismatch => row(
                -32010,
                409,
                "ABORTED",
                "TASK_GENERATION_MISMATCH",
                "Task generation mismatch",
            ),
            // The spec gives no JSON-RPC code to 401/403; these are this crate's, at the top of
            // JSON-RPC's server-error range, away from the codes A2A adds from -32001 on.
            Unauthenticated => row(
                -32098,
                401,
                "UNAUTHENTICATED",
                "UNAUTHENTICATED",
                "Authentication required",
            ),
            PermissionDenied => row(
                -32099,
                403,
                "PERMISSION_DENIED",
                "UNAUTHORIZED",
                "Permission denied",
            ),
            PayloadTooLarge => row(
                -32600,
                413,
                "RESOURCE_EXHAUSTED",
                "PAYLOAD_TOO_LARGE",
                "Request body too large",
            ),
        }
    }

    /// The JSON-RPC code.
    pub const fn json_rpc_code(self) -> i32 {
        self.codes().json_rpc
    }

    /// The HTTP status.
    pub const fn http_status(self) -> u16 {
        self.codes().http
    }

    /// The gRPC status name.
    pub const fn grpc_status(self) -> &'static str {
        self.codes().grpc
    }

    /// The ErrorInfo reason.
    pub const fn reason(self) -> &'static str {
        self.codes().reason
    }

    /// The kind of a JSON-RPC code. `-32600` reads as [`ErrorKind::InvalidRequest`].
    pub fn from_json_rpc_code(code: i32) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.json_rpc_code() == code)
    }

    /// The kind of an ErrorInfo reason. Also reads `UNSUPPORTED_CONTENT_TYPE` (a2a-rs).
    pub fn from_reason(reason: &str) -> Option<Self> {
        if reason == "UNSUPPORTED_CONTENT_TYPE" {
            return Some(ErrorKind::ContentTypeNotSupported);
        }
        Self::ALL.into_iter().find(|k| k.reason() == reason)
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.reason())
    }
}

/// An error as a peer sees it: a JSON-RPC code, a message, and typed details
/// (`google.rpc.ErrorInfo`, `google.rpc.BadRequest`, …).
#[derive(Clone, Debug, PartialEq)]
pub struct Error {
    /// The JSON-RPC code.
    pub code: i32,
    /// A human-readable message.
    pub message: String,
    /// ProtoJSON `Any` objects, each with an `@type`.
    pub details: Vec<Value>,
}

impl Error {
    /// An error of `kind` with a message; carries an ErrorInfo detail with the kind's reason.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            code: kind.json_rpc_code(),
            message: message.into(),
            details: vec![json!({
                "@type": ERROR_INFO_TYPE,
                "reason": kind.reason(),
                "domain": ERROR_DOMAIN,
            })],
        }
    }

    /// An error of `kind` with the kind's default message.
    pub fn from_kind(kind: ErrorKind) -> Self {
        Self::new(kind, kind.codes().message)
    }

    /// Invalid params, naming the field: `Error::invalid_params("message.parts", "must not be empty")`.
    /// Carries a `google.rpc.BadRequest` field violation besides the ErrorInfo.
    pub fn invalid_params(field: &str, description: impl Into<String>) -> Self {
        let description = description.into();
        let mut e = Self::new(ErrorKind::InvalidParams, format!("{field}: {description}"));
        e.details.push(json!({
            "@type": BAD_REQUEST_TYPE,
            "fieldViolations": [{"field": field, "description": description}],
        }));
        e
    }

    /// TaskNotFound for `id`, with `taskId` in the ErrorInfo metadata.
    pub fn task_not_found(id: &str) -> Self {
        Self::new(ErrorKind::TaskNotFound, format!("Task {id} not found"))
            .with_metadata("taskId", id)
    }

    /// Adds a key to the ErrorInfo metadata (values are strings, as in `map<string,string>`).
    #[must_use]
    pub fn with_metadata(mut self, key: &str, value: impl Into<String>) -> Self {
        if let Some(info) = self
            .details
            .iter_mut()
            .find(|d| d.get("@type").and_then(Value::as_str) == Some(ERROR_INFO_TYPE))
            .and_then(Value::as_object_mut)
        {
            let meta = info
                .entry("metadata")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Some(meta) = meta.as_object_mut() {
                meta.insert(key.to_owned(), Value::String(value.into()));
            }
        }
        self
    }

    /// The kind, from the ErrorInfo reason if present, else from the code.
    pub fn kind(&self) -> Option<ErrorKind> {
        self.reason()
            .and_then(ErrorKind::from_reason)
            .or_else(|| ErrorKind::from_json_rpc_code(self.code))
    }

    /// Whether the error is of `kind`.
    pub fn is(&self, kind: ErrorKind) -> bool {
        self.kind() == Some(kind)
    }

    /// The ErrorInfo reason, if a detail carries one.
    pub fn reason(&self) -> Option<&str> {
        self.error_info()
            .and_then(|i| i.get("reason"))
            .and_then(Value::as_str)
    }

    /// The ErrorInfo detail, if any.
    pub fn error_info(&self) -> Option<&Map<String, Value>> {
        self.details
            .iter()
            .filter_map(Value::as_object)
            .find(|d| d.get("@type").and_then(Value::as_str) == Some(ERROR_INFO_TYPE))
    }

    /// The HTTP status for the HTTP+JSON binding.
    pub fn http_status(&self) -> u16 {
        self.kind().map_or(500, ErrorKind::http_status)
    }

    /// The JSON-RPC `error` object: `{"code", "message", "data": [details]}`.
    pub fn to_json_rpc(&self) -> ErrorObject {
        ErrorObject {
            code: self.code,
            message: self.message.clone(),
            data: (!self.details.is_empty()).then(|| Value::Array(self.details.clone())),
        }
    }

    /// The HTTP+JSON error body (`google.rpc.Status` in its HTTP form):
    /// `{"error": {"code": <http>, "status": <grpc name>, "message", "details"}}`.
    pub fn to_status_body(&self) -> Value {
        let kind = self.kind().unwrap_or(ErrorKind::Internal);
        json!({"error": {
            "code": kind.http_status(),
            "status": kind.grpc_status(),
            "message": self.message,
            "details": self.details,
        }})
    }

    /// Reads a JSON-RPC `error` object (a non-array `data` is kept as one detail).
    pub fn from_json_rpc(obj: ErrorObject) -> Self {
        let details = match obj.data {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => items,
            Some(other) => vec![other],
        };
        Self {
            code: obj.code,
            message: obj.message,
            details,
        }
    }

    /// Reads an HTTP+JSON error body (`{"error": {...}}`); `None` if it is not one.
    pub fn from_status_body(body: &Value) -> Option<Self> {
        let status = body.get("error")?.as_object()?;
        let message = status
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let details = status
            .get("details")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let mut e = Self {
            code: ErrorKind::Internal.json_rpc_code(),
            message,
            details,
        };
        let kind = e.reason().and_then(ErrorKind::from_reason).or_else(|| {
            let http = status.get("code").and_then(Value::as_u64)?;
            match http {
                400 => Some(ErrorKind::InvalidParams),
                401 => Some(ErrorKind::Unauthenticated),
                403 => Some(ErrorKind::PermissionDenied),
                404 => Some(ErrorKind::TaskNotFound),
                409 => Some(ErrorKind::TaskGenerationMismatch),
                413 => Some(ErrorKind::PayloadTooLarge),
                _ => None,
            }
        });
        if let Some(kind) = kind {
            e.code = kind.json_rpc_code();
            // A kind inferred from the HTTP status is recorded as an ErrorInfo, so that `kind()`
            // reports it even when its JSON-RPC code is shared (413 and 400 both map to -32600).
            if e.error_info().is_none() {
                e.details
                    .insert(0, Error::from_kind(kind).details.remove(0));
            }
        }
        Some(e)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind() {
            Some(kind) => write!(f, "{kind} ({}): {}", self.code, self.message),
            None => write!(f, "error {}: {}", self.code, self.message),
        }
    }
}

impl std::error::Error for Error {}

impl From<ErrorKind> for Error {
    fn from(kind: ErrorKind) -> Self {
        Self::from_kind(kind)
    }
}

/// The JSON-RPC 2.0 `error` member.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// The code.
    pub code: i32,
    /// The message.
    #[serde(default)]
    pub message: String,
    /// Details; for A2A errors an array of ProtoJSON `Any` objects.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl From<ErrorObject> for Error {
    fn from(obj: ErrorObject) -> Self {
        Error::from_json_rpc(obj)
    }
}

impl From<&Error> for ErrorObject {
    fn from(e: &Error) -> Self {
        e.to_json_rpc()
    }
}
