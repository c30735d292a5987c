//! RFC 3339 timestamps in UTC, as ProtoJSON writes `google.protobuf.Timestamp`.

use chrono::{DateTime, SecondsFormat, SubsecRound, Utc};
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

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.to_rfc3339_opts(SecondsFormat::Millis, true))
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
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}
