//! Reading a request from a body: a one-pass parse of the common, well-formed case, and a
//! classifying parse for everything else (the JSON-RPC error it deserves).

use super::{Id, Request, Response, Version};
use crate::error::{Error, ErrorKind};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_json::value::RawValue;

impl Request<Box<RawValue>> {
    /// Reads a request from a body, classifying failures as JSON-RPC requires: a body that is not
    /// JSON → `-32700` with a `null` id; JSON that is not a valid request (batch, wrong
    /// `jsonrpc`, missing `method`, an id that is not a string/number/null, non-object params)
    /// → `-32600`, echoing the id when it could be read. Absent and `null` params read as none.
    ///
    /// ```
    /// use a2a_core::jsonrpc::{Id, RawRequest};
    /// use a2a_core::GetTaskRequest;
    ///
    /// let req = RawRequest::parse(br#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t-1"}}"#).unwrap();
    /// assert_eq!(req.params_as::<GetTaskRequest>().unwrap().id.as_str(), "t-1");
    ///
    /// let refused = RawRequest::parse(br#"{"jsonrpc":"1.0","id":2,"method":"GetTask"}"#).unwrap_err();
    /// assert_eq!(refused.id, Id::from(2));
    /// assert_eq!(refused.into_result().unwrap_err().code, -32600);
    /// ```
    pub fn parse(body: &[u8]) -> Result<Self, Box<Response<Value>>> {
        match Self::parse_well_formed(body) {
            Some(request) => Ok(request),
            None => Self::classify(body),
        }
    }

    /// The common case in one pass: a well-formed request read straight into its fields, with
    /// no JSON tree for the envelope or the params. Anything else (not JSON, a batch, a wrong
    /// `jsonrpc`, an id or params of the wrong type, duplicate members, a body serde_json
    /// checks less strictly this way, see [`needs_generic_parse`]) gives `None`, for
    /// [`classify`](Self::classify), which accepts exactly the requests this accepts, with the
    /// same result.
    fn parse_well_formed(body: &[u8]) -> Option<Self> {
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
        let text = strict_enough(body)?;
        // An object only: serde's derived struct also reads an array, as its fields in order.
        if !text
            .trim_start_matches([' ', '\t', '\n', '\r'])
            .starts_with('{')
        {
            return None;
        }
        let wire: Wire<'_> = serde_json::from_str(text).ok()?;
        if wire.jsonrpc.as_deref() != Some("2.0")
            || wire
                .params
                .as_ref()
                .is_some_and(|p| !p.get().starts_with('{'))
        {
            return None;
        }
        let id = match &wire.id {
            None => Id::Null,
            Some(v) => Id::from_value(v)?,
        };
        Some(Request {
            jsonrpc: Version,
            id,
            method: wire.method?,
            params: wire.params,
        })
    }

    /// Reads any body through a JSON value, and refuses it with the error JSON-RPC requires, or
    /// accepts it (e.g. with duplicate members: the last one counts) and turns the params back
    /// into text.
    fn classify(body: &[u8]) -> Result<Self, Box<Response<Value>>> {
        let refuse = |id: Id, kind: ErrorKind, why: String| {
            Box::new(Response::error(id, Error::new(kind, why)))
        };
        let invalid = |id: Id, why: &str| {
            refuse(
                id,
                ErrorKind::InvalidRequest,
                format!("Invalid JSON-RPC request: {why}"),
            )
        };
        let value: Value = serde_json::from_slice(body).map_err(|e| {
            refuse(
                Id::Null,
                ErrorKind::ParseError,
                format!("Invalid JSON payload: {e}"),
            )
        })?;
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
            Some(p @ Value::Object(_)) => match serde_json::value::to_raw_value(&p) {
                Ok(raw) => Some(raw),
                Err(e) => return Err(refuse(id, ErrorKind::Internal, format!("params: {e}"))),
            },
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

/// The body as text, if the one-pass parse may read it: it accepts exactly what the classifying
/// parse accepts only if it is UTF-8 and [`needs_generic_parse`] says no.
fn strict_enough(body: &[u8]) -> Option<&str> {
    std::str::from_utf8(body)
        .ok()
        .filter(|text| !needs_generic_parse(text))
}

/// Whether `escaped` (what follows a backslash in a string) is a surrogate's `\uD800`–`\uDFFF`.
fn surrogate_escape(escaped: &[u8]) -> bool {
    match escaped {
        [b'u', d, x, ..] => {
            d.eq_ignore_ascii_case(&b'd')
                && matches!(x.to_ascii_lowercase(), b'8'..=b'9' | b'a'..=b'f')
        }
        _ => false,
    }
}

/// Whether a body must take the classifying parse (through a JSON value) to be classified as it
/// would. serde_json checks
/// what it does not build a value of (raw params, members it ignores) less strictly than what it
/// parses: it does not pair up `\uD800`-style surrogate escapes, does not check that numbers fit
/// an `f64`, has no nesting limit (and, from bytes, does not check UTF-8). A body with such an
/// escape, a number with an exponent or more than 18 digits, or nesting deeper than 100 takes
/// the classifying parse, which refuses what serde_json cannot parse with -32700. (All found by
/// the fuzz suites: the one-pass parse accepted such bodies, and their params then failed with
/// -32602, or the body was answered as if it were JSON.)
fn needs_generic_parse(json: &str) -> bool {
    const DEEP: usize = 100;
    let b = json.as_bytes();
    let (mut depth, mut digits, mut i) = (0usize, 0usize, 0);
    while i < b.len() {
        let c = b[i];
        i += 1;
        match c {
            b'0'..=b'9' => {
                digits += 1;
                if digits > 18 {
                    return true;
                }
                continue;
            }
            b'e' | b'E' if digits > 0 => return true,
            // A fraction's digits count with the integer's.
            b'.' => continue,
            b'[' | b'{' => {
                depth += 1;
                if depth > DEEP {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            // A string: only its escapes matter, and most of a request is strings, so it is
            // crossed from one quote or backslash to the next (memchr reads a word at a time).
            b'"' => loop {
                // (Past the end after a trailing backslash: the string is unterminated.)
                let rest = b.get(i..).unwrap_or_default();
                let Some(at) = memchr::memchr2(b'"', b'\\', rest) else {
                    return false;
                };
                i += at + 1;
                if b[i - 1] == b'"' {
                    break;
                }
                if surrogate_escape(b.get(i..).unwrap_or_default()) {
                    return true;
                }
                // The escaped character (a quote or a backslash ends nothing).
                i += 1;
            },
            _ => {}
        }
        digits = 0;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonrpc::{Payload, RawRequest};

    /// What the parser says of a body, comparable (raw params are not `PartialEq`).
    type Outcome = Result<(Id, String, Value), Box<Response<Value>>>;

    fn outcome(parsed: Result<RawRequest, Box<Response<Value>>>) -> Outcome {
        parsed.map(|r| {
            let params = r.params_value();
            (r.id, r.method, params)
        })
    }

    /// The one-pass parse is only a shortcut: where it answers, the classifying parse (which
    /// every body could take) answers the same, and the parser answers as the classifying
    /// parse does.
    #[test]
    fn the_one_pass_parse_agrees_with_the_classifying_parse() {
        let bodies: [&[u8]; 19] = [
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
            // An array of the members' values in order (found by the fuzz suite: serde's
            // derived struct reads a sequence as its fields).
            br#"["2.0","SendMessage","UNSPECIFIED"]"#,
            b" \n[\"2.0\", 1, \"m\", {}]",
            br#"{"jsonrpc":"2.0","id":1,"#,
            // A lone surrogate escape in the params (the fuzz suite's first finding).
            br#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":"\ud8009"}}"#,
            // A surrogate pair is fine.
            br#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":"\uD83D\uDE00"}}"#,
        ];
        let mut shortcuts = 0;
        for body in bodies {
            let shown = String::from_utf8_lossy(body);
            let classified = outcome(RawRequest::classify(body));
            if let Some(fast) = RawRequest::parse_well_formed(body) {
                shortcuts += 1;
                assert_eq!(outcome(Ok(fast)), classified, "{shown}");
            }
            assert_eq!(outcome(RawRequest::parse(body)), classified, "{shown}");
        }
        assert_eq!(shortcuts, 6, "the well-formed requests take the shortcut");
        // Duplicate members take the classifying parse: the last one counts.
        let dup = RawRequest::parse(br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}"#).unwrap();
        assert_eq!(dup.id, Id::from(2));
    }

    /// Found by the fuzz suite: bodies serde_json parses as raw values but not as JSON values.
    #[test]
    fn what_serde_json_cannot_parse_as_a_value_is_a_parse_error() {
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
            assert!(serde_json::from_slice::<Value>(body).is_err());
            let refused = RawRequest::parse(body).unwrap_err();
            assert_eq!(refused.id, Id::Null);
            let Payload::Error(e) = &refused.payload else {
                panic!("an error")
            };
            assert_eq!(e.code, -32700);
        }
        // Escaped quotes and backslashes, a surrogate pair and brackets in strings are fine.
        let fine = r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":"\\ud800 \" [[[ \uD83D\uDE00","b":[1e3,true,false,12345678901234567890.5]}}"#;
        let r = RawRequest::parse(fine.as_bytes()).unwrap();
        assert_eq!(r.params_value()["a"], "\\ud800 \" [[[ 😀");
        assert_eq!(r.params_value()["b"][0], 1000.0);
    }

    /// The scan one byte at a time, as it was before strings were crossed with memchr: the
    /// oracle for [`needs_generic_parse`].
    fn needs_generic_parse_bytewise(json: &str) -> bool {
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
                    if surrogate_escape(b.get(i + 1..).unwrap_or_default()) {
                        return true;
                    }
                    i += 1;
                }
                (_, b'"') => in_string = !in_string,
                (false, b'[' | b'{') => {
                    depth += 1;
                    if depth > 100 {
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

    #[test]
    fn the_prescan_agrees_with_the_bytewise_scan_on_edges() {
        let deep = format!("{}{}", "[".repeat(101), "]".repeat(101));
        let edges = [
            "",
            "\"",
            "\"\\",
            "\"a\\\"",
            r#"{"a":"\"}"#,
            r#"{"a":"\\"}"#,
            r#"{"a":"\uD800"}"#,
            r#"{"a":"\ud7ff"}"#,
            r#"{"a":"\\ud800"}"#,
            r#"{"a":"x\uDbff"}"#,
            r#"{"a":"\u"}"#,
            r#"{"a":"\ud"}"#,
            r#"{"a":1.5e3}"#,
            r#"{"a":"1e3"}"#,
            r#"{"a":12345678901234567.89}"#,
            r#"{"a":"1234567890123456789"}"#,
            r#"{"a":1234567890123456789}"#,
            r#"{"a":1"2e"}"#,
            r#"{"a":true,"e":1,"b":e1}"#,
            &deep,
            &deep[1..deep.len() - 1],
        ];
        for json in edges {
            assert_eq!(
                needs_generic_parse(json),
                needs_generic_parse_bytewise(json),
                "{json}"
            );
        }
    }

    proptest::proptest! {
        /// Any text from JSON's own characters: the prescan answers as the bytewise scan does.
        #[test]
        fn the_prescan_agrees_with_the_bytewise_scan(
            json in r#"[\[\]{}":,.eEuUdD0-9a-f\\ x]{0,300}"#,
            deep in 0usize..130,
        ) {
            let json = format!("{}{json}", "[".repeat(deep));
            proptest::prop_assert_eq!(
                needs_generic_parse(&json),
                needs_generic_parse_bytewise(&json),
                "{}", json
            );
        }
    }

    #[test]
    fn raw_params_read_into_their_type() {
        #[derive(Debug, Deserialize, PartialEq)]
        struct P {
            id: String,
        }
        let r = RawRequest::parse(br#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"id":"t"}}"#)
            .unwrap();
        assert_eq!(r.params_as::<P>().unwrap(), P { id: "t".into() });
        let none = RawRequest::parse(br#"{"jsonrpc":"2.0","id":1,"method":"m"}"#).unwrap();
        assert_eq!(none.params_value(), Value::Null);
        let e = none.params_as::<P>().unwrap_err();
        assert_eq!(e.code, -32602);
        assert!(e.message.contains("id"), "{}", e.message);
    }
}
