//! The JSON-RPC 2.0 envelope, shaped so that it cannot be built wrong: [`Version`] only reads and
//! writes `"2.0"`, and a [`Response`] holds either a result or an error, never both.

use crate::error::{Error, ErrorKind, ErrorObject};
use serde::de::{self, DeserializeOwned, Deserializer};
use serde::ser::SerializeStruct;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;
use std::fmt;

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

impl Request<Value> {
    /// Reads a request from a body, classifying failures as JSON-RPC requires: a body that is not
    /// JSON → `-32700` with a `null` id; JSON that is not a valid request (batch, wrong
    /// `jsonrpc`, missing `method`, an id that is not a string/number/null, non-object params)
    /// → `-32600`, echoing the id when it could be read.
    pub fn parse(body: &[u8]) -> Result<Self, Box<Response<Value>>> {
        if let Some(request) = Self::parse_well_formed(body) {
            return Ok(request);
        }
        let value: Value = serde_json::from_slice(body).map_err(|e| {
            Box::new(Response::error(
                Id::Null,
                Error::new(ErrorKind::ParseError, format!("Invalid JSON payload: {e}")),
            ))
        })?;
        Self::from_value(value)
    }

    /// The common case in one pass: a well-formed request read straight into its fields, with
    /// no intermediate JSON object for the envelope. Anything else (not JSON, a batch, a wrong
    /// `jsonrpc`, an id or params of the wrong type, duplicate members) gives `None`, and
    /// [`Request::parse`] classifies it through [`Request::from_value`], which accepts exactly
    /// the requests this accepts, with the same result.
    fn parse_well_formed(body: &[u8]) -> Option<Self> {
        #[derive(Deserialize)]
        struct Wire<'a> {
            #[serde(borrow)]
            jsonrpc: Option<std::borrow::Cow<'a, str>>,
            #[serde(default)]
            id: Option<Value>,
            method: Option<String>,
            #[serde(default)]
            params: Option<Value>,
        }
        let wire: Wire<'_> = serde_json::from_str(strict_enough(body)?).ok()?;
        if wire.jsonrpc.as_deref() != Some("2.0") {
            return None;
        }
        let id = match &wire.id {
            None => Id::Null,
            Some(v) => Id::from_value(v)?,
        };
        if wire.params.as_ref().is_some_and(|p| !p.is_object()) {
            return None;
        }
        Some(Request {
            jsonrpc: Version,
            id,
            method: wire.method?,
            params: wire.params,
        })
    }

    /// Like [`Request::parse`], from an already-parsed JSON value.
    pub fn from_value(value: Value) -> Result<Self, Box<Response<Value>>> {
        let invalid = |id: Id, why: &str| {
            Box::new(Response::error(
                id,
                Error::new(
                    ErrorKind::InvalidRequest,
                    format!("Invalid JSON-RPC request: {why}"),
                ),
            ))
        };
        let Value::Object(mut obj) = value else {
            return Err(invalid(
                Id::Null,
                "the body must be one JSON object (batches are not supported)",
            ));
        };
        let id = match obj.remove("id") {
            None => Id::Null,
            Some(v) => match Id::from_value(&v) {
                Some(id) => id,
                None => return Err(invalid(Id::Null, "`id` must be a string, a number or null")),
            },
        };
        if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return Err(invalid(id, "`jsonrpc` must be \"2.0\""));
        }
        let method = match obj.remove("method") {
            Some(Value::String(m)) => m,
            Some(_) => return Err(invalid(id, "`method` must be a string")),
            None => return Err(invalid(id, "`method` is missing")),
        };
        let params = match obj.remove("params") {
            None | Some(Value::Null) => None,
            Some(p @ Value::Object(_)) => Some(p),
            Some(_) => return Err(invalid(id, "`params` must be an object")),
        };
        Ok(Request {
            jsonrpc: Version,
            id,
            method,
            params,
        })
    }

    /// Deserializes the params into `P` (absent params read as `{}`); failures are `-32602`
    /// naming what is wrong.
    pub fn params_as<P: DeserializeOwned>(&self) -> Result<P, Error> {
        // Read from the borrowed value: no copy of the params tree.
        let empty;
        let params = match &self.params {
            Some(p) => p,
            None => {
                empty = Value::Object(Default::default());
                &empty
            }
        };
        crate::strict::from_value(params)
            .map_err(|e| Error::new(ErrorKind::InvalidParams, format!("Invalid parameters: {e}")))
    }
}

impl Request<Box<RawValue>> {
    /// Like [`Request::parse`] (same acceptance, same errors), but keeps the params as their
    /// raw JSON text, read once, straight into their type, by
    /// [`params_as`](Request::<Box<RawValue>>::params_as): no JSON tree is built for them. This
    /// is what a server wants; [`Request::parse`] suits code that inspects params generically.
    pub fn parse_raw(body: &[u8]) -> Result<Self, Box<Response<Value>>> {
        #[derive(Deserialize)]
        struct Wire<'a> {
            #[serde(borrow)]
            jsonrpc: Option<std::borrow::Cow<'a, str>>,
            #[serde(default)]
            id: Option<Value>,
            method: Option<String>,
            #[serde(default)]
            params: Option<Box<RawValue>>,
        }
        let fast = strict_enough(body)
            .and_then(|text| serde_json::from_str::<Wire<'_>>(text).ok())
            .filter(|w| w.jsonrpc.as_deref() == Some("2.0"))
            .filter(|w| w.params.as_ref().is_none_or(|p| p.get().starts_with('{')))
            .and_then(|w| {
                let id = match &w.id {
                    None => Id::Null,
                    Some(v) => Id::from_value(v)?,
                };
                Some(Request {
                    jsonrpc: Version,
                    id,
                    method: w.method?,
                    params: w.params,
                })
            });
        if let Some(request) = fast {
            return Ok(request);
        }
        // Anything unusual is classified (or accepted, e.g. with duplicate members) by the
        // generic parse, then its params are turned back into text.
        let request = Request::parse(body)?;
        let params = match &request.params {
            Some(p) => Some(serde_json::value::to_raw_value(p).map_err(|e| {
                Box::new(Response::error(
                    request.id.clone(),
                    Error::new(ErrorKind::Internal, format!("params: {e}")),
                ))
            })?),
            None => None,
        };
        Ok(Request {
            jsonrpc: Version,
            id: request.id,
            method: request.method,
            params,
        })
    }

    /// Deserializes the params into `P` (absent params read as `{}`); failures are `-32602`
    /// naming what is wrong (a member given twice is one of them).
    pub fn params_as<P: DeserializeOwned>(&self) -> Result<P, Error> {
        let text = self.params.as_deref().map_or("{}", RawValue::get);
        crate::strict::from_str(text)
            .map_err(|e| Error::new(ErrorKind::InvalidParams, format!("Invalid parameters: {e}")))
    }

    /// The params as a JSON value (`null` when absent), for code that inspects them generically.
    pub fn params_value(&self) -> Value {
        self.params
            .as_deref()
            .and_then(|p| serde_json::from_str(p.get()).ok())
            .unwrap_or(Value::Null)
    }
}

/// The body as text, if the one-pass parses may read it: they accept exactly what the generic
/// parse accepts only if it is UTF-8 and [`needs_generic_parse`] says no.
fn strict_enough(body: &[u8]) -> Option<&str> {
    std::str::from_utf8(body)
        .ok()
        .filter(|text| !needs_generic_parse(text))
}

/// Whether a body must take the generic parse to be classified as it would. serde_json checks
/// what it does not build a value of (raw params, members it ignores) less strictly than what it
/// parses: it does not pair up `\uD800`-style surrogate escapes, does not check that numbers fit
/// an `f64`, has no nesting limit (and, from bytes, does not check UTF-8). A body with such an
/// escape, a number with an exponent or more than 18 digits, or nesting deeper than 100 takes
/// the generic parse, which refuses what serde_json cannot parse with -32700. (All found by the
/// fuzz suites: the one-pass parses accepted such bodies, and their params then failed with
/// -32602, or the body was answered as if it were JSON.)
fn needs_generic_parse(json: &str) -> bool {
    const DEEP: usize = 100;
    let b = json.as_bytes();
    let (mut depth, mut digits, mut in_string, mut i) = (0usize, 0usize, false, 0);
    while i < b.len() {
        let c = b[i];
        if !in_string && c.is_ascii_digit() {
            digits += 1;
            if digits > 18 {
                return true;
            }
        } else {
            if !in_string && matches!(c, b'e' | b'E') && digits > 0 {
                return true;
            }
            if c != b'.' {
                digits = 0;
            }
        }
        match (in_string, c) {
            (true, b'\\') => {
                let surrogate = b.get(i + 1) == Some(&b'u')
                    && b.get(i + 2).is_some_and(|c| c.eq_ignore_ascii_case(&b'd'))
                    && b.get(i + 3).is_some_and(
                        |c| matches!(c.to_ascii_lowercase(), b'8'..=b'9' | b'a'..=b'f'),
                    );
                if surrogate {
                    return true;
                }
                i += 1;
            }
            (true, b'"') | (false, b'"') => in_string = !in_string,
            (false, b'[' | b'{') => {
                depth += 1;
                if depth > DEEP {
                    return true;
                }
            }
            (false, b']' | b'}') => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    false
}

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

#[cfg(test)]
mod tests {
    use super::*;

    /// The one-pass parse and the classifying parse agree on every request.
    #[test]
    fn the_fast_parse_agrees_with_the_classifying_parse() {
        let bodies: [&[u8]; 17] = [
            br#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t"}}"#,
            b"{ \"params\" :\n {\"id\": \"t\"} , \"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"GetTask\"}",
            br#"{"jsonrpc":"2.0","id":"a","method":"GetTask","params":null}"#,
            br#"{"jsonrpc":"2.0","id":null,"method":"GetTask"}"#,
            br#"{"jsonrpc":"2.0","method":"GetTask","extra":[1,2]}"#,
            br#"{"jsonrpc":"2.0","id":1.5,"method":"m","params":{}}"#,
            br#"{"jsonrpc":"2.0","id":{},"method":"m"}"#,
            br#"{"jsonrpc":"2.0","id":true,"method":"m"}"#,
            br#"{"jsonrpc":"1.0","id":1,"method":"m"}"#,
            br#"{"jsonrpc":2.0,"id":1,"method":"m"}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":7}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"m","params":[1]}"#,
            br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}"#,
            br#"[{"jsonrpc":"2.0","id":1,"method":"m"}]"#,
            br#"{"jsonrpc":"2.0","id":1,"#,
            // A lone surrogate escape in the params (the fuzz suite's first finding).
            br#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":"\ud8009"}}"#,
            // A surrogate pair is fine.
            br#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":"\uD83D\uDE00"}}"#,
        ];
        for body in bodies {
            let slow = serde_json::from_slice::<Value>(body)
                .ok()
                .map(Request::from_value);
            let parsed = Request::parse(body);
            match (slow, parsed) {
                (Some(Ok(a)), Ok(b)) => assert_eq!(a, b),
                (Some(Err(a)), Err(b)) => assert_eq!(a, b),
                (None, Err(_)) => {}
                (a, b) => panic!("{}: {a:?} vs {b:?}", String::from_utf8_lossy(body)),
            }
            if let Some(fast) = Request::parse_well_formed(body) {
                assert_eq!(Ok(fast), Request::parse(body).map_err(|_| ()));
            }
            // The raw-params parse accepts and rejects the same requests, with the same
            // params.
            match (Request::parse(body), Request::parse_raw(body)) {
                (Ok(a), Ok(b)) => {
                    assert_eq!((a.id, a.method), (b.id.clone(), b.method.clone()));
                    assert_eq!(a.params.unwrap_or(Value::Null), b.params_value());
                }
                (Err(a), Err(b)) => assert_eq!(a, b),
                (a, b) => panic!("{}: {a:?} vs {b:?}", String::from_utf8_lossy(body)),
            }
        }
    }

    /// Found by the fuzz suite: bodies serde_json parses as raw values but not as JSON values.
    #[test]
    fn the_raw_parse_refuses_what_the_generic_parse_refuses() {
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{{"a":{}1{}}}}}"#,
            "[".repeat(200),
            "]".repeat(200)
        );
        let lone_surrogate = r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":"\ud800x"}}"#;
        let huge = r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":-1e400}}"#;
        let long = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{{"a":1{}}}}}"#,
            "0".repeat(400)
        );
        let ignored_huge = r#"{"jsonrpc":"2.0","id":1,"method":"m","x":1e400,"params":{}}"#;
        let bodies: [&[u8]; 6] = [
            deep.as_bytes(),
            lone_surrogate.as_bytes(),
            huge.as_bytes(),
            long.as_bytes(),
            ignored_huge.as_bytes(),
            // Not UTF-8, in a member that is ignored.
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"x\":\"\xff\"}",
        ];
        for body in bodies {
            let generic = Request::parse(body).unwrap_err();
            assert_eq!(Request::parse_raw(body).unwrap_err(), generic);
            let Payload::Error(e) = &generic.payload else {
                panic!("an error")
            };
            assert_eq!(e.code, -32700);
        }
        // Escaped quotes and backslashes, a surrogate pair and brackets in strings are fine.
        let fine = r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":"\\ud800 \" [[[ \uD83D\uDE00","b":[1e3,true,false,12345678901234567890.5]}}"#;
        let r = Request::parse_raw(fine.as_bytes()).unwrap();
        assert_eq!(r.params_value()["a"], "\\ud800 \" [[[ 😀");
        assert_eq!(r.params_value()["b"][0], 1000.0);
    }

    #[test]
    fn raw_params_read_into_their_type() {
        #[derive(Debug, Deserialize, PartialEq)]
        struct P {
            id: String,
        }
        let r = Request::parse_raw(br#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"id":"t"}}"#)
            .unwrap();
        assert_eq!(r.params_as::<P>().unwrap(), P { id: "t".into() });
        let none = Request::parse_raw(br#"{"jsonrpc":"2.0","id":1,"method":"m"}"#).unwrap();
        let e = none.params_as::<P>().unwrap_err();
        assert_eq!(e.code, -32602);
        assert!(e.message.contains("id"), "{}", e.message);
    }
}
