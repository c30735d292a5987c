//! The gRPC binding's wire format: protobuf encoding of every `lf.a2a.v1` message, from and to
//! the same serde types the JSON bindings use, and `google.rpc.Status` errors.
//!
//! There is no generated code. [`schema`] is the spec's `a2a.proto` written out as tables (field
//! numbers, ProtoJSON names, types, presence), and one serde `Serializer` and one `Deserializer`
//! walk them: [`encode`] writes any value whose serde form is ProtoJSON (a [`Task`](crate::Task),
//! a [`SendMessageRequest`](crate::SendMessageRequest), a `serde_json::Value`) as protobuf,
//! and [`decode`] reads protobuf as any such type. So the JSON and gRPC bindings share one
//! model and one set of validation rules, and JSON → protobuf → JSON is the identity (tested
//! on every JSON fixture).
//!
//! ```
//! use a2a_core::proto::{self, schema};
//! use a2a_core::{Message, SendMessageRequest};
//!
//! let request = SendMessageRequest::new(Message::user_text("hello"));
//! let bytes = proto::encode(&request, &schema::SEND_MESSAGE_REQUEST).unwrap();
//! let back: SendMessageRequest = proto::decode(&bytes, &schema::SEND_MESSAGE_REQUEST).unwrap();
//! assert_eq!(back, request);
//! ```
//!
//! Decoding follows protobuf and ProtoJSON: unknown fields are skipped; an unknown enum number
//! reads as the number (which our enums keep as `Unknown`); an absent REQUIRED string, number or
//! list reads as its default (`""`, `0`, `[]`), the way ProtoJSON writes it, so that validation
//! names the field. Malformed bytes, a field of the wrong wire type, invalid UTF-8 and nesting
//! deeper than 128 levels are errors, never panics.

#[cfg(feature = "tonic")]
mod codec;
mod de;
pub mod schema;
mod ser;
mod status;
mod wire;

#[cfg(feature = "tonic")]
pub use codec::BytesCodec;
pub use schema::MessageType;
pub use status::{GRPC_CODE_NAMES, grpc_code, status_details};

use crate::operation::{Operation, Visit};
use crate::{Error, ErrorKind, Method};
use serde::{Deserialize, Serialize};

/// The gRPC service: `lf.a2a.v1.A2AService`.
pub const SERVICE: &str = "lf.a2a.v1.A2AService";

/// Why a value could not be encoded, or bytes decoded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ProtoError {
    message: String,
}

impl ProtoError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }
}

impl serde::ser::Error for ProtoError {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        Self::new(msg.to_string())
    }
}

impl serde::de::Error for ProtoError {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        Self::new(msg.to_string())
    }
}

impl From<ProtoError> for Error {
    /// A request that does not decode: InvalidParams (gRPC `INVALID_ARGUMENT`).
    fn from(e: ProtoError) -> Self {
        Error::new(ErrorKind::InvalidParams, e.message)
    }
}

/// Encodes `value` as a `ty` message.
pub fn encode<T: Serialize + ?Sized>(
    value: &T,
    ty: &'static MessageType,
) -> Result<Vec<u8>, ProtoError> {
    let mut buf = Vec::with_capacity(256);
    ser::message(value, ty, &mut buf)?;
    Ok(buf)
}

/// Appends `value`, encoded as a `ty` message, to `buf` (left as it was on error).
pub fn encode_into<T: Serialize + ?Sized>(
    value: &T,
    ty: &'static MessageType,
    buf: &mut Vec<u8>,
) -> Result<(), ProtoError> {
    let len = buf.len();
    ser::message(value, ty, buf).inspect_err(|_| buf.truncate(len))
}

/// Decodes a `ty` message as `T`. An error names the message type first
/// (`lf.a2a.v1.SendMessageRequest: missing field `message``).
pub fn decode<'de, T: Deserialize<'de>>(
    bytes: &'de [u8],
    ty: &'static MessageType,
) -> Result<T, ProtoError> {
    de::message(bytes, ty).map_err(|e| ProtoError::new(format!("{}: {}", ty.name, e.message)))
}

/// The request and response messages of `method` (a streaming method's response is one event),
/// as the operation table says ([`Operation::request_message`]).
pub fn messages(method: Method) -> (&'static MessageType, &'static MessageType) {
    struct Messages;
    impl Visit for Messages {
        type Output = (&'static MessageType, &'static MessageType);
        fn visit<O: Operation>(self) -> Self::Output {
            (O::request_message(), O::response_message())
        }
    }
    method.visit(Messages)
}

/// The HTTP/2 path of `method`: `/lf.a2a.v1.A2AService/<Method>`.
pub fn path(method: Method) -> String {
    format!("/{SERVICE}/{}", method.name())
}

/// The method a gRPC path names, if it is one of ours.
pub fn method_of_path(path: &str) -> Option<Method> {
    let name = path
        .strip_prefix('/')?
        .strip_prefix(SERVICE)?
        .strip_prefix('/')?;
    Method::from_name(name)
}
