//! `google.protobuf.Struct`, `Value` and `ListValue`: JSON objects and values, as protobuf.

use super::*;

/// A `google.protobuf.Struct`: a JSON object.
pub(super) struct StructDe<'de> {
    pub(super) bytes: &'de [u8],
    pub(super) depth: u32,
}

impl<'de> Deserializer<'de> for StructDe<'de> {
    type Error = ProtoError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        let depth = deeper(self.depth)?;
        let mut input = self.bytes;
        let mut entries = Vec::new();
        while !input.is_empty() {
            if let (1, raw) = wire::next_field(&mut input)? {
                entries.push(raw);
            }
        }
        static FIELDS: Field = Field {
            number: 1,
            json: "fields",
            kind: Kind::Map(&Kind::Value),
            presence: Presence::Repeated,
        };
        visitor.visit_map(MapEntries {
            field: &FIELDS,
            value: Kind::Value,
            items: entries.into_iter(),
            pending: None,
            depth,
        })
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_some(self)
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map struct identifier ignored_any
        newtype_struct enum
    }
}

/// A `google.protobuf.Value`: any JSON value. A number that is a whole number below 2^53 reads
/// as an integer, so that JSON `3` comes back as `3`, not `3.0`.
pub(super) struct ValueDe<'de> {
    pub(super) bytes: &'de [u8],
    pub(super) depth: u32,
}

impl<'de> ValueDe<'de> {
    /// The kind set (the last, if several are), or `None` for an empty Value (null).
    fn kind(&self) -> Result<Option<(u32, Raw<'de>)>> {
        let mut input = self.bytes;
        let mut kind = None;
        while !input.is_empty() {
            let (number, raw) = wire::next_field(&mut input)?;
            if (1..=6).contains(&number) {
                kind = Some((number, raw));
            }
        }
        Ok(kind)
    }
}

impl<'de> Deserializer<'de> for ValueDe<'de> {
    type Error = ProtoError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        let depth = deeper(self.depth)?;
        match self.kind()? {
            None | Some((1, Raw::Varint(_))) => visitor.visit_unit(),
            Some((2, Raw::I64(bits))) => {
                let x = f64::from_bits(bits);
                if x.fract() == 0.0 && x.abs() < 9_007_199_254_740_992.0 {
                    if x >= 0.0 {
                        visitor.visit_u64(x as u64)
                    } else {
                        visitor.visit_i64(x as i64)
                    }
                } else {
                    visitor.visit_f64(x)
                }
            }
            Some((3, Raw::Len(b))) => visitor.visit_borrowed_str(utf8("Value.string_value", b)?),
            Some((4, Raw::Varint(v))) => visitor.visit_bool(v != 0),
            Some((5, Raw::Len(bytes))) => StructDe { bytes, depth }.deserialize_any(visitor),
            Some((6, Raw::Len(mut list))) => {
                let mut items = Vec::new();
                while !list.is_empty() {
                    if let (1, raw) = wire::next_field(&mut list)? {
                        items.push(raw);
                    }
                }
                visitor.visit_seq(Elements {
                    field: "ListValue.values",
                    kind: Kind::Value,
                    items: items.into_iter(),
                    depth,
                })
            }
            Some((_, raw)) => Err(wrong_wire("google.protobuf.Value", &raw)),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.kind()? {
            None | Some((1, _)) => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map struct identifier ignored_any
        newtype_struct enum
    }
}
