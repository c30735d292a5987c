//! RFC 8785, the JSON Canonicalization Scheme (JCS): the bytes an agent card's signature
//! covers. Object members sorted by their names' UTF-16 code units, no whitespace, strings
//! with only `"`, `\` and control characters escaped (the short forms where JSON has one,
//! `\u00xx` otherwise), numbers as ECMAScript prints an IEEE 754 double.

use serde_json::Value;
use std::io::Write as _;

/// The canonical form of `value`.
///
/// Integers beyond ±2^53 are written as the double they round to, as JCS requires (a signer
/// that needs exact big integers puts them in strings).
pub fn to_vec(value: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    write(value, &mut out);
    out
}

/// The canonical form of `value`, as a string.
pub fn to_string(value: &Value) -> String {
    String::from_utf8(to_vec(value)).expect("canonical JSON is UTF-8")
}

fn write(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Number(n) => number(n, out),
        // serde_json escapes exactly what JCS escapes, the same way: `\"`, `\\`, `\b`, `\f`,
        // `\n`, `\r`, `\t`, and the other control characters as lowercase `\u00xx`.
        Value::String(s) => {
            serde_json::to_writer(&mut *out, s).expect("writing a string to memory");
        }
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write(item, out);
            }
            out.push(b']');
        }
        Value::Object(members) => {
            let mut names: Vec<&String> = members.keys().collect();
            names.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
            out.push(b'{');
            for (i, name) in names.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                serde_json::to_writer(&mut *out, name).expect("writing a string to memory");
                out.push(b':');
                write(&members[name], out);
            }
            out.push(b'}');
        }
    }
}

fn number(n: &serde_json::Number, out: &mut Vec<u8>) {
    const EXACT: u64 = 1 << 53;
    if let Some(i) = n.as_i64().filter(|i| i.unsigned_abs() <= EXACT) {
        let _ = write!(out, "{i}");
    } else if let Some(u) = n.as_u64().filter(|u| *u <= EXACT) {
        let _ = write!(out, "{u}");
    } else {
        let f = n.as_f64().unwrap_or(f64::NAN);
        if f == 0.0 {
            // ECMAScript prints -0 as 0.
            out.push(b'0');
        } else {
            out.extend_from_slice(ryu_js::Buffer::new().format(f).as_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn members_are_sorted_by_utf16_code_units_and_whitespace_dropped() {
        // RFC 8785 §3.2.3's example: "\u20ac" (U+20AC) sorts before "\ud83d\ude00" (U+1F600,
        // a surrogate pair starting 0xD83D) and after "\r" and "1"; code points would put
        // U+1F600 after U+FB33, UTF-16 puts it before.
        let v: Value = serde_json::from_str(
            r#"{"\u20ac": "Euro Sign", "\r": "Carriage Return", "\ufb33": "Hebrew Letter Dalet With Dagesh", "1": "One", "\ud83d\ude00": "Emoji: Grinning Face", "\u0080": "Control", "\u00f6": "Latin Small Letter O With Diaeresis"}"#,
        )
        .expect("JSON");
        assert_eq!(
            to_string(&v),
            "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u{80}\":\"Control\",\"\u{f6}\":\"Latin Small Letter O With Diaeresis\",\"\u{20ac}\":\"Euro Sign\",\"\u{1f600}\":\"Emoji: Grinning Face\",\"\u{fb33}\":\"Hebrew Letter Dalet With Dagesh\"}"
        );
        assert_eq!(
            to_string(&json!({"b": [1, {"d": true, "c": null}], "a": "x"})),
            r#"{"a":"x","b":[1,{"c":null,"d":true}]}"#
        );
    }

    #[test]
    fn strings_escape_only_what_json_must() {
        let v = json!("\u{20ac}$\u{f}\nA'B\"\\\\\"/\u{7f}\u{2028}");
        assert_eq!(
            to_string(&v),
            "\"\u{20ac}$\\u000f\\nA'B\\\"\\\\\\\\\\\"/\u{7f}\u{2028}\""
        );
    }

    #[test]
    fn numbers_print_as_ecmascript_does() {
        // RFC 8785 appendix B, through serde_json's parser.
        for (input, expected) in [
            ("0", "0"),
            ("-0.0", "0"),
            ("1", "1"),
            ("-1", "-1"),
            ("1.0", "1"),
            ("100", "100"),
            ("1e21", "1e+21"),
            ("1e20", "100000000000000000000"),
            ("123456789012345680000", "123456789012345680000"),
            ("4.50", "4.5"),
            ("2e-3", "0.002"),
            ("1e-7", "1e-7"),
            ("0.000001", "0.000001"),
            ("9007199254740992", "9007199254740992"),
            ("9007199254740993", "9007199254740992"),
            ("-9007199254740993", "-9007199254740992"),
            ("295147905179352830000", "295147905179352830000"),
            ("5e-324", "5e-324"),
            ("1.7976931348623157e308", "1.7976931348623157e+308"),
            ("333333333.3333333", "333333333.3333333"),
        ] {
            let v: Value = serde_json::from_str(input).expect("a number");
            assert_eq!(to_string(&v), expected, "{input}");
        }
    }

    #[test]
    fn the_rfc_example_canonicalizes_to_the_rfc_bytes() {
        // RFC 8785 §3.2.2.
        let v: Value = serde_json::from_str(
            r#"{
              "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
              "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
              "literals": [null, true, false]
            }"#,
        )
        .expect("JSON");
        assert_eq!(
            to_string(&v),
            "{\"literals\":[null,true,false],\"numbers\":[333333333.3333333,1e+30,4.5,0.002,1e-27],\"string\":\"\u{20ac}$\\u000f\\nA'B\\\"\\\\\\\\\\\"/\"}"
        );
    }
}
