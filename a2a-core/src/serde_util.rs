//! Small serde helpers for ProtoJSON's rules (crate-private).

use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};
use std::fmt;

/// `skip_serializing_if` for plain proto3 booleans: `false` is the default and is omitted.
pub(crate) fn is_false(b: &bool) -> bool {
    !*b
}

/// Deserializes a plain proto3 string field into `Option<T>`, treating `""` and `null` as unset.
pub(crate) fn empty_as_none<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: From<String>,
{
    let s = Option::<String>::deserialize(d)?;
    Ok(s.filter(|s| !s.is_empty()).map(T::from))
}

/// Deserializes a string that may be `null` (ProtoJSON's "default") into an empty string.
pub(crate) fn null_as_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// Deserializes a field whose mere presence matters, so that `"data": null` is `Some(Null)`.
pub(crate) fn present<'de, D>(d: D) -> Result<Option<serde_json::Value>, D::Error>
where
    D: Deserializer<'de>,
{
    serde_json::Value::deserialize(d).map(Some)
}

/// An `int32` as ProtoJSON reads it: a JSON number, or a string holding one.
pub(crate) fn int32<'de, D: Deserializer<'de>>(d: D) -> Result<i32, D::Error> {
    d.deserialize_any(Int32Visitor)
}

/// Like [`int32`], for an `optional int32` (`null` reads as unset).
pub(crate) fn opt_int32<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i32>, D::Error> {
    struct OptVisitor;
    impl<'de> Visitor<'de> for OptVisitor {
        type Value = Option<i32>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a 32-bit integer or null")
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<Self::Value, D2::Error> {
            int32(d).map(Some)
        }
    }
    d.deserialize_option(OptVisitor)
}

struct Int32Visitor;

impl<'de> Visitor<'de> for Int32Visitor {
    type Value = i32;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a 32-bit integer")
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<i32, E> {
        i32::try_from(v).map_err(|_| E::custom(format!("{v} is out of range for int32")))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<i32, E> {
        i32::try_from(v).map_err(|_| E::custom(format!("{v} is out of range for int32")))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<i32, E> {
        if v.fract() == 0.0 && v >= f64::from(i32::MIN) && v <= f64::from(i32::MAX) {
            Ok(v as i32)
        } else {
            Err(E::custom(format!("{v} is not a 32-bit integer")))
        }
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<i32, E> {
        v.trim()
            .parse()
            .map_err(|_| E::custom(format!("{v:?} is not a 32-bit integer")))
    }
}

/// Implements `Serialize` and `Deserialize` for structs whose derives are generated with
/// `#[serde(remote = "Self")]`, so that they are read only from JSON objects. serde's derived
/// structs also read arrays, field by field, so `"message": []` was read as a message of
/// defaults (found by the fuzz suite).
macro_rules! object_only {
    ($($t:ty),+ $(,)?) => {$(
        impl serde::Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                <$t>::serialize(self, s)
            }
        }

        impl<'de> serde::Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct Object;
                impl<'de> serde::de::Visitor<'de> for Object {
                    type Value = $t;
                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        f.write_str(concat!("a JSON object (", stringify!($t), ")"))
                    }
                    fn visit_map<A: serde::de::MapAccess<'de>>(
                        self,
                        map: A,
                    ) -> Result<$t, A::Error> {
                        <$t>::deserialize(serde::de::value::MapAccessDeserializer::new(map))
                    }
                }
                d.deserialize_map(Object)
            }
        }
    )+};
}

pub(crate) use object_only;

/// `skip_serializing_if` for plain proto3 `int64` fields: 0 is the default and is omitted.
pub(crate) fn is_zero(n: &i64) -> bool {
    *n == 0
}

/// Writes an `int64` as ProtoJSON does: a decimal string (`"7"`), so that readers whose
/// numbers are doubles lose no digits.
pub(crate) fn int64_string<S: serde::Serializer>(n: &i64, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(n)
}

/// Like [`int64_string`], for an `optional int64` (only ever called when set).
pub(crate) fn opt_int64_string<S: serde::Serializer>(
    n: &Option<i64>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match n {
        Some(n) => s.collect_str(n),
        None => s.serialize_none(),
    }
}

/// An `int64` as ProtoJSON reads it: a JSON number, or a string holding one (`null`: 0).
pub(crate) fn int64<'de, D: Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
    Ok(opt_int64(d)?.unwrap_or_default())
}

/// Like [`int64`], for an `optional int64` (`null` reads as unset).
pub(crate) fn opt_int64<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    struct OptVisitor;
    impl<'de> Visitor<'de> for OptVisitor {
        type Value = Option<i64>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a 64-bit integer or null")
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<Self::Value, D2::Error> {
            d.deserialize_any(Int64Visitor).map(Some)
        }
    }
    d.deserialize_option(OptVisitor)
}

struct Int64Visitor;

impl<'de> Visitor<'de> for Int64Visitor {
    type Value = i64;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a 64-bit integer")
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<i64, E> {
        Ok(v)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<i64, E> {
        i64::try_from(v).map_err(|_| E::custom(format!("{v} is out of range for int64")))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<i64, E> {
        // 2^63 is exactly representable; every integral double below it fits.
        if v.fract() == 0.0 && v >= -(2f64.powi(63)) && v < 2f64.powi(63) {
            Ok(v as i64)
        } else {
            Err(E::custom(format!("{v} is not a 64-bit integer")))
        }
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<i64, E> {
        v.trim()
            .parse()
            .map_err(|_| E::custom(format!("{v:?} is not a 64-bit integer")))
    }
}
