//! RFC 3339 timestamps in UTC, as ProtoJSON writes `google.protobuf.Timestamp`.

use chrono::{DateTime, Datelike, SecondsFormat, SubsecRound, Timelike, Utc};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::str::FromStr;

/// A point in time, serialized as RFC 3339 UTC with a `Z` suffix and millisecond precision
/// (`2026-02-03T09:15:27.412Z`). Parsing accepts 0–9 fractional digits and any offset, which is
/// converted to UTC.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(DateTime<Utc>);

impl Timestamp {
    /// The current time, truncated to milliseconds so that it survives a round trip exactly.
    pub fn now() -> Self {
        Self(Utc::now().trunc_subsecs(3))
    }

    /// Wraps a `chrono` time (kept at full precision; emitted with millisecond precision).
    pub fn from_datetime(t: DateTime<Utc>) -> Self {
        Self(t)
    }

    /// Milliseconds since the Unix epoch.
    pub fn from_unix_millis(ms: i64) -> Option<Self> {
        DateTime::from_timestamp_millis(ms).map(Self)
    }

    /// The time as milliseconds since the Unix epoch.
    pub fn unix_millis(self) -> i64 {
        self.0.timestamp_millis()
    }

    /// The underlying `chrono` value.
    pub fn as_datetime(self) -> DateTime<Utc> {
        self.0
    }
}

impl Timestamp {
    /// Writes the RFC 3339 form into `buf` without allocating (every task serializes its status
    /// time): `None` for what the fixed-width form cannot hold (a year outside 0–9999, a leap
    /// second), which chrono then formats.
    fn write_rfc3339(self, buf: &mut [u8; 24]) -> Option<&str> {
        // The naive UTC time: `DateTime`'s accessors add the (zero) offset again on every call.
        let t = self.0.naive_utc();
        let year = u32::try_from(t.year()).ok().filter(|y| *y <= 9999)?;
        let nanos = t.nanosecond();
        if nanos >= 1_000_000_000 {
            return None;
        }
        let mut put = |at: usize, value: u32, digits: u32| {
            for i in 0..digits {
                let d = (value / 10u32.pow(digits - 1 - i)) % 10;
                buf[at + i as usize] = b'0' + d as u8;
            }
        };
        put(0, year, 4);
        put(5, t.month(), 2);
        put(8, t.day(), 2);
        put(11, t.hour(), 2);
        put(14, t.minute(), 2);
        put(17, t.second(), 2);
        put(20, nanos / 1_000_000, 3);
        for (at, sep) in [
            (4, b'-'),
            (7, b'-'),
            (10, b'T'),
            (13, b':'),
            (16, b':'),
            (19, b'.'),
        ] {
            buf[at] = sep;
        }
        buf[23] = b'Z';
        std::str::from_utf8(buf).ok()
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.write_rfc3339(&mut [0; 24]) {
            Some(text) => f.write_str(text),
            None => f.write_str(&self.0.to_rfc3339_opts(SecondsFormat::Millis, true)),
        }
    }
}

/// The error of parsing a [`Timestamp`].
#[derive(Debug, Clone, thiserror::Error)]
#[error("invalid RFC 3339 timestamp {0:?}")]
pub struct TimestampError(String);

impl FromStr for Timestamp {
    type Err = TimestampError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        DateTime::parse_from_rfc3339(s)
            .map(|t| Self(t.with_timezone(&Utc)))
            .map_err(|_| TimestampError(s.to_owned()))
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.write_rfc3339(&mut [0; 24]) {
            Some(text) => s.serialize_str(text),
            None => s.collect_str(self),
        }
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chrono_form(t: Timestamp) -> String {
        t.as_datetime().to_rfc3339_opts(SecondsFormat::Millis, true)
    }

    #[test]
    fn the_fast_form_is_chronos_form_at_every_precision_and_edge() {
        let mut edges = vec![
            Timestamp::now(),
            Timestamp::from_unix_millis(0).unwrap(),
            Timestamp::from_unix_millis(-1).unwrap(),
            Timestamp::from_unix_millis(-62_167_219_200_000).unwrap(), // 0000-01-01
            Timestamp::from_unix_millis(253_402_300_799_999).unwrap(), // 9999-12-31T23:59:59.999
            Timestamp::from_unix_millis(253_402_300_800_000).unwrap(), // year 10000: chrono's form
            Timestamp::from_unix_millis(-62_167_219_200_001).unwrap(), // year -1: chrono's form
            Timestamp::from_datetime(DateTime::from_timestamp(1_700_000_000, 999_999_999).unwrap()),
            Timestamp::from_datetime(
                DateTime::from_timestamp(1_483_228_799, 1_500_000_000).unwrap(), // leap second
            ),
        ];
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let ms = (x % 253_402_300_800_000) as i64;
            edges.push(Timestamp::from_unix_millis(ms).unwrap());
        }
        for t in edges {
            let expected = chrono_form(t);
            assert_eq!(t.to_string(), expected);
            assert_eq!(serde_json::to_value(t).unwrap(), expected.as_str());
        }
    }
}
