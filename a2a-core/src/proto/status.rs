//! Errors on the gRPC binding: the `grpc-status` code and a `google.rpc.Status` (carried in
//! the `grpc-status-details-bin` trailer) whose details are the error's ErrorInfo and
//! BadRequest, from and into the one error table.

use super::schema::{self, MessageType};
use super::wire::{self, Raw};
use super::{ProtoError, decode, encode_into};
use crate::{ERROR_INFO_TYPE, Error, ErrorKind};
use serde_json::{Map, Value};

/// The gRPC status codes by number (`OK` is 0).
pub const GRPC_CODE_NAMES: [&str; 17] = [
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
];

/// The number of a gRPC status name (`UNKNOWN`, 2, for a name that is none).
pub fn grpc_code(name: &str) -> i32 {
    GRPC_CODE_NAMES
        .iter()
        .position(|n| *n == name)
        .map_or(2, |i| i as i32)
}

/// The detail types this crate reads and writes, by `@type`.
fn detail_type(type_url: &str) -> Option<&'static MessageType> {
    match type_url {
        ERROR_INFO_TYPE => Some(&schema::ERROR_INFO),
        crate::BAD_REQUEST_TYPE => Some(&schema::BAD_REQUEST),
        _ => None,
    }
}

impl Error {
    /// The gRPC status code (the error table's name, as a number).
    pub fn grpc_code(&self) -> i32 {
        grpc_code(self.kind().unwrap_or(ErrorKind::Internal).grpc_status())
    }

    /// The `google.rpc.Status` of this error, encoded: code, message, and each detail as a
    /// `google.protobuf.Any` (ErrorInfo, BadRequest, and any other detail that came with its
    /// encoded `value`).
    pub fn to_grpc_status(&self) -> Vec<u8> {
        let mut buf = Vec::with_capacity(128 + self.message.len());
        let code = self.grpc_code();
        if code != 0 {
            wire::key(&mut buf, 1, wire::VARINT);
            wire::varint(&mut buf, code as u64);
        }
        if !self.message.is_empty() {
            wire::bytes(&mut buf, 2, self.message.as_bytes());
        }
        for detail in &self.details {
            let Some(object) = detail.as_object() else {
                continue;
            };
            let Some(type_url) = object.get("@type").and_then(Value::as_str) else {
                continue;
            };
            let mut value = Vec::new();
            let encoded = match detail_type(type_url) {
                Some(ty) => {
                    let mut fields = object.clone();
                    fields.remove("@type");
                    encode_into(&fields, ty, &mut value).is_ok()
                }
                // A detail of another type is passed on if it kept its encoded form.
                None => object
                    .get("value")
                    .and_then(Value::as_str)
                    .and_then(|v| crate::message::decode_base64(v).ok())
                    .map(|bytes| value = bytes)
                    .is_some(),
            };
            if encoded {
                let any = wire::begin_len(&mut buf, 3);
                wire::bytes(&mut buf, 1, type_url.as_bytes());
                wire::bytes(&mut buf, 2, &value);
                wire::end_len(&mut buf, any);
            }
        }
        buf
    }

    /// Reads a gRPC error: its status code and message, and the `google.rpc.Status` of the
    /// `grpc-status-details-bin` trailer if there is one (empty if not). The kind comes from
    /// the ErrorInfo reason, else from the status code.
    pub fn from_grpc_status(code: i32, message: &str, details: &[u8]) -> Self {
        let mut error = Self {
            code: ErrorKind::Internal.json_rpc_code(),
            message: message.to_owned(),
            details: status_details(details).unwrap_or_default(),
        };
        let kind = error
            .reason()
            .and_then(ErrorKind::from_reason)
            .or_else(|| kind_of_code(code));
        if let Some(kind) = kind {
            error.code = kind.json_rpc_code();
            // A kind inferred from the code is recorded as an ErrorInfo, as for HTTP statuses.
            if error.error_info().is_none() {
                error
                    .details
                    .insert(0, Error::from_kind(kind).details.remove(0));
            }
        }
        error
    }
}

/// The kind a status code means when no ErrorInfo says.
fn kind_of_code(code: i32) -> Option<ErrorKind> {
    Some(match GRPC_CODE_NAMES.get(usize::try_from(code).ok()?)? {
        &"INVALID_ARGUMENT" => ErrorKind::InvalidParams,
        &"NOT_FOUND" => ErrorKind::TaskNotFound,
        &"UNIMPLEMENTED" => ErrorKind::MethodNotFound,
        &"UNAUTHENTICATED" => ErrorKind::Unauthenticated,
        &"PERMISSION_DENIED" => ErrorKind::PermissionDenied,
        &"RESOURCE_EXHAUSTED" => ErrorKind::PayloadTooLarge,
        &"INTERNAL" | &"UNKNOWN" | &"DATA_LOSS" => ErrorKind::Internal,
        _ => return None,
    })
}

/// The details of an encoded `google.rpc.Status` (a `grpc-status-details-bin`), as ProtoJSON
/// `Any` objects: ErrorInfo and BadRequest with their fields, others as `{"@type", "value"}`
/// with the value in base64.
pub fn status_details(mut status: &[u8]) -> Result<Vec<Value>, ProtoError> {
    let mut details = Vec::new();
    while !status.is_empty() {
        let (3, Raw::Len(mut any)) = wire::next_field(&mut status)? else {
            continue;
        };
        let (mut type_url, mut value) = ("", &[][..]);
        while !any.is_empty() {
            match wire::next_field(&mut any)? {
                (1, Raw::Len(t)) => {
                    type_url = std::str::from_utf8(t)
                        .map_err(|_| ProtoError::new("Any.type_url is not UTF-8"))?;
                }
                (2, Raw::Len(v)) => value = v,
                _ => {}
            }
        }
        let mut object = match detail_type(type_url) {
            Some(ty) => decode::<Map<String, Value>>(value, ty)?,
            None => {
                let mut m = Map::new();
                m.insert(
                    "value".into(),
                    Value::String(crate::message::encode_base64(value)),
                );
                m
            }
        };
        object.insert("@type".into(), Value::String(type_url.to_owned()));
        details.push(Value::Object(object));
    }
    Ok(details)
}
