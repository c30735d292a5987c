//! What a call answers: the spec's error table ([`Kind`]), errors as a client sees them
//! ([`ApiError`]), and raw answers ([`Reply`]) with the binding's envelope checks.

use crate::Binding;
use reqwest::header::HeaderMap;
use serde_json::{Value, json};

/// The errors of the spec's tables (digest §4.1, §4.2), with the values a peer must see. This
/// is written from the spec, independently of the server's own table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// -32700.
    ParseError,
    /// -32600.
    InvalidRequest,
    /// -32601.
    MethodNotFound,
    /// -32602.
    InvalidParams,
    /// -32603.
    Internal,
    /// -32001.
    TaskNotFound,
    /// -32002.
    TaskNotCancelable,
    /// -32003.
    PushNotificationNotSupported,
    /// -32004.
    UnsupportedOperation,
    /// -32005.
    ContentTypeNotSupported,
    /// -32006.
    InvalidAgentResponse,
    /// -32007.
    ExtendedAgentCardNotConfigured,
    /// -32008.
    ExtensionSupportRequired,
    /// -32009.
    VersionNotSupported,
    /// -32010 (A2A 1.1).
    TaskGenerationMismatch,
}

impl Kind {
    /// `(JSON-RPC code, HTTP status, gRPC status name, ErrorInfo reason)` per the spec (v1.0.1
    /// HTTP mapping; SDK-conventional reasons for the standard JSON-RPC errors).
    pub fn spec(self) -> (i64, u16, &'static str, &'static str) {
        match self {
            Kind::ParseError => (-32700, 400, "INVALID_ARGUMENT", "PARSE_ERROR"),
            Kind::InvalidRequest => (-32600, 400, "INVALID_ARGUMENT", "INVALID_REQUEST"),
            // The spec gives no gRPC status for it; gRPC's own is UNIMPLEMENTED.
            Kind::MethodNotFound => (-32601, 404, "UNIMPLEMENTED", "METHOD_NOT_FOUND"),
            Kind::InvalidParams => (-32602, 400, "INVALID_ARGUMENT", "INVALID_PARAMS"),
            Kind::Internal => (-32603, 500, "INTERNAL", "INTERNAL_ERROR"),
            Kind::TaskNotFound => (-32001, 404, "NOT_FOUND", "TASK_NOT_FOUND"),
            Kind::TaskNotCancelable => (-32002, 400, "FAILED_PRECONDITION", "TASK_NOT_CANCELABLE"),
            Kind::PushNotificationNotSupported => (
                -32003,
                400,
                "FAILED_PRECONDITION",
                "PUSH_NOTIFICATION_NOT_SUPPORTED",
            ),
            Kind::UnsupportedOperation => {
                (-32004, 400, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION")
            }
            Kind::ContentTypeNotSupported => (
                -32005,
                400,
                "INVALID_ARGUMENT",
                "CONTENT_TYPE_NOT_SUPPORTED",
            ),
            Kind::InvalidAgentResponse => (-32006, 500, "INTERNAL", "INVALID_AGENT_RESPONSE"),
            Kind::ExtendedAgentCardNotConfigured => (
                -32007,
                400,
                "FAILED_PRECONDITION",
                "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
            ),
            Kind::ExtensionSupportRequired => (
                -32008,
                400,
                "FAILED_PRECONDITION",
                "EXTENSION_SUPPORT_REQUIRED",
            ),
            Kind::VersionNotSupported => {
                (-32009, 400, "FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED")
            }
            // dev-1.1 (#1810), §5.4: 409 Conflict / ABORTED.
            Kind::TaskGenerationMismatch => (-32010, 409, "ABORTED", "TASK_GENERATION_MISMATCH"),
        }
    }
}

/// An error as a client sees it in either binding.
#[derive(Clone, Debug)]
pub struct ApiError {
    /// The binding that answered.
    pub binding: Binding,
    /// The HTTP status (200 for JSON-RPC and gRPC errors).
    pub http_status: u16,
    /// The JSON-RPC `error.code` (JSON-RPC only).
    pub code: Option<i64>,
    /// The gRPC status name: REST's `error.status`, gRPC's `grpc-status` (not for JSON-RPC).
    pub grpc_status: Option<String>,
    /// The human-readable message.
    pub message: String,
    /// `data` (JSON-RPC), `details` (REST) or the `google.rpc.Status` details (gRPC).
    pub details: Vec<Value>,
    /// The whole response body (boxed, like the headers, to keep `Result`s small).
    pub body: Box<Value>,
    /// The response headers.
    pub headers: Box<HeaderMap>,
}

impl ApiError {
    /// The `google.rpc.ErrorInfo` detail, if any.
    pub fn error_info(&self) -> Option<&Value> {
        self.details.iter().find(|d| {
            d.get("@type").and_then(Value::as_str)
                == Some("type.googleapis.com/google.rpc.ErrorInfo")
        })
    }

    /// The ErrorInfo reason, if any.
    pub fn reason(&self) -> Option<&str> {
        self.error_info()?.get("reason")?.as_str()
    }

    /// Asserts that this is exactly `kind` as the spec renders it in this binding: JSON-RPC
    /// code with HTTP 200, HTTP status with the gRPC status name, or the gRPC status; and in
    /// each, an ErrorInfo with the reason and domain `a2a-protocol.org` as the first detail.
    #[track_caller]
    pub fn assert_kind(&self, kind: Kind) -> &Self {
        let (code, http, grpc, reason) = kind.spec();
        let first = self.details.first().unwrap_or_else(|| {
            panic!("{kind:?}: the error has no details (ErrorInfo expected): {self:#?}")
        });
        assert_eq!(
            first["@type"], "type.googleapis.com/google.rpc.ErrorInfo",
            "{kind:?}: the first detail must be an ErrorInfo: {:#}",
            self.body
        );
        assert_eq!(
            first["reason"], reason,
            "{kind:?}: reason in {:#}",
            self.body
        );
        assert_eq!(
            first["domain"], "a2a-protocol.org",
            "{kind:?}: domain in {:#}",
            self.body
        );
        match self.binding {
            Binding::JsonRpc => {
                assert_eq!(self.http_status, 200, "JSON-RPC errors use HTTP 200");
                assert_eq!(self.code, Some(code), "{kind:?}: code in {:#}", self.body);
            }
            Binding::Rest => {
                assert_eq!(
                    self.http_status, http,
                    "{kind:?}: HTTP status of {:#}",
                    self.body
                );
                assert_eq!(self.grpc_status.as_deref(), Some(grpc), "{kind:?}: status");
            }
            Binding::Grpc => {
                assert_eq!(
                    self.grpc_status.as_deref(),
                    Some(grpc),
                    "{kind:?}: grpc-status of {:#}",
                    self.body
                );
            }
        }
        assert!(!self.message.is_empty(), "errors carry a message");
        self
    }

    /// Asserts an ErrorInfo metadata entry.
    #[track_caller]
    pub fn assert_metadata(&self, key: &str, value: &str) -> &Self {
        let info = self.error_info().expect("an ErrorInfo detail");
        assert_eq!(
            info["metadata"][key], value,
            "ErrorInfo metadata in {info:#}"
        );
        self
    }

    /// The `field` of the BadRequest field violations, if any.
    pub fn violated_fields(&self) -> Vec<String> {
        self.details
            .iter()
            .filter(|d| {
                d.get("@type").and_then(Value::as_str)
                    == Some("type.googleapis.com/google.rpc.BadRequest")
            })
            .flat_map(|d| d["fieldViolations"].as_array().cloned().unwrap_or_default())
            .filter_map(|v| v["field"].as_str().map(str::to_owned))
            .collect()
    }
}

/// A raw HTTP answer: status, headers, and the body as JSON (`Value::Null` when empty).
#[derive(Clone, Debug)]
pub struct Reply {
    /// Which binding was called.
    pub binding: Binding,
    /// The HTTP status.
    pub status: u16,
    /// The response headers.
    pub headers: HeaderMap,
    /// The body as JSON.
    pub body: Value,
    /// The JSON-RPC id sent (JSON-RPC only).
    pub rpc_id: Option<Value>,
    /// What a gRPC call answered (gRPC only: `body` is then the result or the error's JSON).
    pub grpc: Option<Box<Result<Value, ApiError>>>,
}

impl Reply {
    /// The `Content-Type` header (empty when absent).
    pub fn content_type(&self) -> &str {
        header_str(&self.headers, "content-type")
    }

    /// The result, or the error, after checking the binding's envelope rules.
    #[track_caller]
    pub fn outcome(self) -> Result<Value, ApiError> {
        match self.binding {
            Binding::JsonRpc => {
                assert!(
                    self.content_type().starts_with("application/json"),
                    "JSON-RPC answers are application/json, got {:?}",
                    self.content_type()
                );
                let obj = self.body.as_object().expect("a JSON-RPC response object");
                assert_eq!(obj.get("jsonrpc"), Some(&json!("2.0")), "{:#}", self.body);
                if let Some(id) = &self.rpc_id {
                    assert_eq!(obj.get("id"), Some(id), "the response echoes the id");
                }
                match (obj.get("result"), obj.get("error")) {
                    (Some(result), None) => {
                        assert_eq!(self.status, 200, "JSON-RPC results use HTTP 200");
                        Ok(result.clone())
                    }
                    (None, Some(error)) => Err(ApiError {
                        binding: Binding::JsonRpc,
                        http_status: self.status,
                        code: error["code"].as_i64(),
                        grpc_status: None,
                        message: error["message"].as_str().unwrap_or_default().to_owned(),
                        details: error["data"].as_array().cloned().unwrap_or_default(),
                        body: Box::new(self.body.clone()),
                        headers: Box::new(self.headers),
                    }),
                    _ => panic!("exactly one of result/error expected: {:#}", self.body),
                }
            }
            Binding::Rest => {
                assert!(
                    self.content_type().starts_with("application/a2a+json"),
                    "REST answers are application/a2a+json, got {:?} (status {})",
                    self.content_type(),
                    self.status
                );
                if self.status == 200 {
                    return Ok(self.body);
                }
                let error = self.body["error"]
                    .as_object()
                    .unwrap_or_else(|| panic!("a google.rpc.Status body: {:#}", self.body));
                assert_eq!(
                    error.get("code").and_then(Value::as_u64),
                    Some(u64::from(self.status)),
                    "error.code is the HTTP status: {:#}",
                    self.body
                );
                let details = error
                    .get("details")
                    .and_then(Value::as_array)
                    .unwrap_or_else(|| panic!("error.details is an array: {:#}", self.body))
                    .clone();
                Err(ApiError {
                    binding: Binding::Rest,
                    http_status: self.status,
                    code: None,
                    grpc_status: error.get("status").and_then(Value::as_str).map(Into::into),
                    message: error
                        .get("message")
                        .and_then(Value::as_str)
                        .expect("error.message is a string")
                        .to_owned(),
                    details,
                    body: Box::new(self.body.clone()),
                    headers: Box::new(self.headers),
                })
            }
            Binding::Grpc => *self.grpc.expect("a gRPC reply carries its outcome"),
        }
    }
}

/// A header as a string (empty when absent or not text).
pub fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> &'a str {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
}
