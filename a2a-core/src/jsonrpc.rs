//! The JSON-RPC 2.0 envelope, shaped so that it cannot be built wrong: [`Version`] only reads and
//! writes `"2.0"`, and a [`Response`] holds either a result or an error, never both.

use crate::error::{Error, ErrorObject};
use serde::de::{self, DeserializeOwned, Deserializer};
use serde::ser::SerializeStruct;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;
use std::fmt;

mod raw;

/// The `jsonrpc` member: always `"2.0"`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Version;

impl Serialize for Version {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str("2.0")
    }
}

impl<'de> Deserialize<'de> for Version {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        if v.as_str() == Some("2.0") {
            Ok(Version)
        } else {
            Err(de::Error::custom(format!(
                "`jsonrpc` must be \"2.0\", got {v}"
            )))
        }
    }
}

/// A request id: a string, a number, or `null`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum Id {
    /// A number id.
    Number(serde_json::Number),
    /// A string id.
    String(String),
    /// `null` (used in error responses to requests whose id could not be read).
    #[default]
    Null,
}

impl Id {
    /// Reads an id from a JSON value; objects, arrays and booleans are not ids.
    pub fn from_value(v: &Value) -> Option<Id> {
        match v {
            Value::Null => Some(Id::Null),
            Value::Number(n) => Some(Id::Number(n.clone())),
            Value::String(s) => Some(Id::String(s.clone())),
            _ => None,
        }
    }
}

impl From<i64> for Id {
    fn from(n: i64) -> Self {
        Id::Number(n.into())
    }
}

impl From<&str> for Id {
    fn from(s: &str) -> Self {
        Id::String(s.to_owned())
    }
}

impl From<String> for Id {
    fn from(s: String) -> Self {
        Id::String(s)
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Id::Number(n) => write!(f, "{n}"),
            Id::String(s) => write!(f, "{s:?}"),
            Id::Null => f.write_str("null"),
        }
    }
}

impl Serialize for Id {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Id::Number(n) => n.serialize(s),
            Id::String(v) => s.serialize_str(v),
            Id::Null => s.serialize_unit(),
        }
    }
}

impl<'de> Deserialize<'de> for Id {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        Id::from_value(&v)
            .ok_or_else(|| de::Error::custom("a JSON-RPC id must be a string, a number or null"))
    }
}

/// A JSON-RPC request.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
// Without this bound, serde's `default` on `params` would demand `P: Default`, and a
// `Request<SendMessageRequest>` could not be deserialized.
#[serde(bound(deserialize = "P: Deserialize<'de>"))]
pub struct Request<P = Value> {
    /// Always `"2.0"`.
    pub jsonrpc: Version,
    /// The id the response will echo.
    #[serde(default)]
    pub id: Id,
    /// The method name.
    pub method: String,
    /// The parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<P>,
}

impl<P> Request<P> {
    /// A request.
    pub fn new(id: impl Into<Id>, method: impl Into<String>, params: P) -> Self {
        Self {
            jsonrpc: Version,
            id: id.into(),
            method: method.into(),
            params: Some(params),
        }
    }
}

/// A request as [`RawRequest::parse`] reads it: the params kept as their raw JSON text, read
/// once, straight into their type, by [`params_as`](RawRequest::params_as) (no JSON tree is built
/// for them), or as a JSON value by [`params_value`](RawRequest::params_value) for code that
/// inspects them generically.
pub type RawRequest = Request<Box<RawValue>>;

/// A response's payload: a result or an error.
#[derive(Clone, Debug, PartialEq)]
pub enum Payload<T> {
    /// `"result": …`
    Result(T),
    /// `"error": {…}`
    Error(ErrorObject),
}

/// A JSON-RPC response.
#[derive(Clone, Debug, PartialEq)]
pub struct Response<T = Value> {
    /// Always `"2.0"`.
    pub jsonrpc: Version,
    /// The id of the request.
    pub id: Id,
    /// The result or the error.
    pub payload: Payload<T>,
}

impl<T> Response<T> {
    /// A success response.
    pub fn result(id: Id, result: T) -> Self {
        Self {
            jsonrpc: Version,
            id,
            payload: Payload::Result(result),
        }
    }

    /// An error response.
    pub fn error(id: Id, error: Error) -> Self {
        Self {
            jsonrpc: Version,
            id,
            payload: Payload::Error(error.to_json_rpc()),
        }
    }

    /// The result, or the error as an [`Error`].
    pub fn into_result(self) -> Result<T, Error> {
        match self.payload {
            Payload::Result(r) => Ok(r),
            Payload::Error(e) => Err(Error::from_json_rpc(e)),
        }
    }
}

impl<T: Serialize> Serialize for Response<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Response", 3)?;
        st.serialize_field("jsonrpc", &self.jsonrpc)?;
        st.serialize_field("id", &self.id)?;
        match &self.payload {
            Payload::Result(r) => st.serialize_field("result", r)?,
            Payload::Error(e) => st.serialize_field("error", e)?,
        }
        st.end()
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Response<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Wire {
            jsonrpc: Version,
            #[serde(default)]
            id: Id,
            #[serde(default, deserialize_with = "crate::serde_util::present")]
            result: Option<Value>,
            #[serde(default)]
            error: Option<ErrorObject>,
        }
        let w = Wire::deserialize(d)?;
        let payload = match (w.result, w.error) {
            (_, Some(e)) => Payload::Error(e),
            (Some(r), None) => {
                Payload::Result(serde_json::from_value(r).map_err(de::Error::custom)?)
            }
            (None, None) => {
                return Err(de::Error::custom(
                    "a JSON-RPC response needs `result` or `error`",
                ));
            }
        };
        Ok(Response {
            jsonrpc: w.jsonrpc,
            id: w.id,
            payload,
        })
    }
}
