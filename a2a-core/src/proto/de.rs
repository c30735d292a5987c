//! Decoding: a serde `Deserializer` over protobuf bytes that presents each message as its
//! ProtoJSON object (names, enum names, base64 bytes, RFC 3339 times), guided by the message
//! tables, so that any ProtoJSON type (ours, or `serde_json::Value`) reads from it directly.

use super::ProtoError;
use super::schema::{Field, Kind, MessageType, Presence};
use super::wire::{self, Raw};
use crate::time::Timestamp;
use serde::de::value::BorrowedStrDeserializer;
use serde::de::{self, DeserializeSeed, Deserializer, IntoDeserializer, Visitor};
use serde::forward_to_deserialize_any;

mod value;

use value::{StructDe, ValueDe};

type Result<T> = std::result::Result<T, ProtoError>;

/// How deeply messages and values may nest (as serde_json's default recursion limit).
const MAX_DEPTH: u32 = 128;

/// Reads a `ty` message from `bytes` as `T`.
pub(crate) fn message<'de, T: de::Deserialize<'de>>(
    bytes: &'de [u8],
    ty: &'static MessageType,
) -> Result<T> {
    T::deserialize(MessageDe {
        bytes,
        ty,
        depth: 0,
    })
}

fn deeper(depth: u32) -> Result<u32> {
    if depth >= MAX_DEPTH {
        Err(ProtoError::new(format!(
            "the message nests more than {MAX_DEPTH} levels deep"
        )))
    } else {
        Ok(depth + 1)
    }
}

fn wrong_wire(field: &str, raw: &Raw<'_>) -> ProtoError {
    ProtoError::new(format!(
        "field {field} arrived as {}, which its type cannot be",
        raw.wire_type()
    ))
}

fn utf8<'de>(field: &str, bytes: &'de [u8]) -> Result<&'de str> {
    std::str::from_utf8(bytes)
        .map_err(|_| ProtoError::new(format!("field {field} is not valid UTF-8")))
}

// ---------------------------------------------------------------------------------------------
// Messages

struct MessageDe<'de> {
    bytes: &'de [u8],
    ty: &'static MessageType,
    depth: u32,
}

impl<'de> MessageDe<'de> {
    /// The fields present, grouped by field (in table order), each group in wire order.
    fn fields(&self) -> Result<Vec<(u16, Raw<'de>)>> {
        let mut input = self.bytes;
        let mut found = Vec::new();
        while !input.is_empty() {
            let (number, raw) = wire::next_field(&mut input)?;
            // Unknown fields are skipped, as protobuf requires.
            if let Some(i) = self.ty.fields.iter().position(|f| f.number == number) {
                found.push((i as u16, raw));
            }
        }
        found.sort_by_key(|(i, _)| *i);
        Ok(found)
    }
}

impl<'de> Deserializer<'de> for MessageDe<'de> {
    type Error = ProtoError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        let depth = deeper(self.depth)?;
        let found = self.fields()?;
        visitor.visit_map(Fields {
            ty: self.ty,
            found,
            next_field: 0,
            at: 0,
            current: None,
            depth,
        })
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        visitor.visit_newtype_struct(self)
    }

    /// An externally tagged enum is a oneof: the one field present names the variant.
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        let depth = deeper(self.depth)?;
        let found = self.fields()?;
        let Some(&(first, _)) = found.first() else {
            return Err(ProtoError::new(format!(
                "{} has none of its fields set",
                self.ty.name
            )));
        };
        if let Some((other, _)) = found.iter().find(|(i, _)| *i != first) {
            return Err(ProtoError::new(format!(
                "{} has both {} and {} set",
                self.ty.name,
                self.ty.fields[usize::from(first)].json,
                self.ty.fields[usize::from(*other)].json
            )));
        }
        let field = &self.ty.fields[usize::from(first)];
        let group = found.into_iter().map(|(_, raw)| raw).collect();
        visitor.visit_enum(Oneof {
            field,
            group,
            depth,
        })
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map struct identifier ignored_any
    }
}

/// The fields of a message, as a map from ProtoJSON names to values.
struct Fields<'de> {
    ty: &'static MessageType,
    found: Vec<(u16, Raw<'de>)>,
    /// The next table field to consider.
    next_field: usize,
    /// The next entry of `found` to consider.
    at: usize,
    /// The field whose value is next: its table entry and its occurrences.
    current: Option<(&'static Field, std::ops::Range<usize>)>,
    depth: u32,
}

impl<'de> de::MapAccess<'de> for Fields<'de> {
    type Error = ProtoError;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        while self.next_field < self.ty.fields.len() {
            let index = self.next_field;
            self.next_field += 1;
            let field = &self.ty.fields[index];
            let start = self.at;
            while self.at < self.found.len() && usize::from(self.found[self.at].0) == index {
                self.at += 1;
            }
            if start == self.at && !reads_as_default(field) {
                continue;
            }
            self.current = Some((field, start..self.at));
            let key = BorrowedStrDeserializer::<ProtoError>::new(field.json);
            return seed.deserialize(key).map(Some);
        }
        Ok(None)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        let (field, range) = self
            .current
            .take()
            .ok_or_else(|| ProtoError::new("a value without a key"))?;
        let group: Vec<Raw<'de>> = self.found[range].iter().map(|(_, raw)| *raw).collect();
        seed.deserialize(FieldDe {
            field,
            group,
            depth: self.depth,
        })
    }
}

/// Whether an absent field reads as its default (ProtoJSON writes REQUIRED scalars and lists).
fn reads_as_default(field: &Field) -> bool {
    match field.presence {
        Presence::Required => matches!(field.kind, Kind::String | Kind::Int32 | Kind::Bool),
        Presence::RepeatedRequired => true,
        _ => false,
    }
}

/// A oneof read as an enum: the field present is the variant.
struct Oneof<'de> {
    field: &'static Field,
    group: Vec<Raw<'de>>,
    depth: u32,
}

impl<'de> de::EnumAccess<'de> for Oneof<'de> {
    type Error = ProtoError;
    type Variant = FieldDe<'de>;

    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, FieldDe<'de>)> {
        let name = seed.deserialize(BorrowedStrDeserializer::<ProtoError>::new(self.field.json))?;
        Ok((
            name,
            FieldDe {
                field: self.field,
                group: self.group,
                depth: self.depth,
            },
        ))
    }
}

impl<'de> de::VariantAccess<'de> for FieldDe<'de> {
    type Error = ProtoError;

    fn unit_variant(self) -> Result<()> {
        Err(ProtoError::new("a oneof member is not a unit variant"))
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value> {
        seed.deserialize(self)
    }

    fn tuple_variant<V: Visitor<'de>>(self, _: usize, _: V) -> Result<V::Value> {
        Err(ProtoError::new("a oneof member is not a tuple variant"))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        self.deserialize_any(visitor)
    }
}

// ---------------------------------------------------------------------------------------------
// Fields

/// One field's value: all its occurrences (a repeated or map field has one per element; a
/// singular field takes the last, as protobuf says).
struct FieldDe<'de> {
    field: &'static Field,
    group: Vec<Raw<'de>>,
    depth: u32,
}

impl<'de> Deserializer<'de> for FieldDe<'de> {
    type Error = ProtoError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        let field = self.field;
        if let Kind::Map(value) = field.kind {
            return visitor.visit_map(MapEntries {
                field,
                value: *value,
                items: self.group.into_iter(),
                pending: None,
                depth: self.depth,
            });
        }
        if matches!(
            field.presence,
            Presence::Repeated | Presence::RepeatedRequired
        ) {
            return visitor.visit_seq(Elements {
                field: field.json,
                kind: field.kind,
                items: self.group.into_iter(),
                depth: self.depth,
            });
        }
        match self.group.last() {
            Some(raw) => KindDe {
                field: field.json,
                kind: field.kind,
                raw: *raw,
                depth: self.depth,
            }
            .deserialize_any(visitor),
            // Absent, REQUIRED: the default.
            None => match field.kind {
                Kind::String => visitor.visit_borrowed_str(""),
                Kind::Int32 => visitor.visit_i64(0),
                Kind::Bool => visitor.visit_bool(false),
                _ => visitor.visit_unit(),
            },
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match (self.field.kind, self.group.last()) {
            (Kind::Value, Some(raw)) => KindDe {
                field: self.field.json,
                kind: Kind::Value,
                raw: *raw,
                depth: self.depth,
            }
            .deserialize_option(visitor),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        match self.group.last() {
            Some(raw) => KindDe {
                field: self.field.json,
                kind: self.field.kind,
                raw: *raw,
                depth: self.depth,
            }
            .deserialize_enum(name, variants, visitor),
            None => Err(ProtoError::new(format!(
                "field {} is empty",
                self.field.json
            ))),
        }
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map struct identifier ignored_any
    }
}

/// The elements of a repeated field.
struct Elements<'de> {
    field: &'static str,
    kind: Kind,
    items: std::vec::IntoIter<Raw<'de>>,
    depth: u32,
}

impl<'de> de::SeqAccess<'de> for Elements<'de> {
    type Error = ProtoError;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>> {
        match self.items.next() {
            None => Ok(None),
            Some(raw) => seed
                .deserialize(KindDe {
                    field: self.field,
                    kind: self.kind,
                    raw,
                    depth: self.depth,
                })
                .map(Some),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len())
    }
}

/// The entries of a map field, each a message `{1: key, 2: value}`.
struct MapEntries<'de> {
    field: &'static Field,
    value: Kind,
    items: std::vec::IntoIter<Raw<'de>>,
    pending: Option<Option<Raw<'de>>>,
    depth: u32,
}

impl<'de> de::MapAccess<'de> for MapEntries<'de> {
    type Error = ProtoError;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        let Some(raw) = self.items.next() else {
            return Ok(None);
        };
        let Raw::Len(mut entry) = raw else {
            return Err(wrong_wire(self.field.json, &raw));
        };
        let (mut key, mut value) = ("", None);
        while !entry.is_empty() {
            match wire::next_field(&mut entry)? {
                (1, Raw::Len(k)) => key = utf8(self.field.json, k)?,
                (2, v) => value = Some(v),
                (1, other) => return Err(wrong_wire(self.field.json, &other)),
                _ => {}
            }
        }
        self.pending = Some(value);
        seed.deserialize(BorrowedStrDeserializer::<ProtoError>::new(key))
            .map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        let value = self
            .pending
            .take()
            .ok_or_else(|| ProtoError::new("a map value without a key"))?;
        match value {
            Some(raw) => seed.deserialize(KindDe {
                field: self.field.json,
                kind: self.value,
                raw,
                depth: self.depth,
            }),
            // An entry without a value holds the value type's default.
            None => seed.deserialize(KindDe {
                field: self.field.json,
                kind: self.value,
                raw: match self.value {
                    Kind::Int32 | Kind::Int64 | Kind::Bool | Kind::Enum(_) => Raw::Varint(0),
                    _ => Raw::Len(&[]),
                },
                depth: self.depth,
            }),
        }
    }
}

/// One value of a field's type.
struct KindDe<'de> {
    field: &'static str,
    kind: Kind,
    raw: Raw<'de>,
    depth: u32,
}

impl<'de> Deserializer<'de> for KindDe<'de> {
    type Error = ProtoError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        let wrong = || wrong_wire(self.field, &self.raw);
        match (self.kind, self.raw) {
            (Kind::String, Raw::Len(b)) => visitor.visit_borrowed_str(utf8(self.field, b)?),
            (Kind::Bytes, Raw::Len(b)) => visitor.visit_string(crate::message::encode_base64(b)),
            (Kind::Bool, Raw::Varint(v)) => visitor.visit_bool(v != 0),
            // int32 and enums are sign-extended to 64 bits on the wire.
            (Kind::Int32, Raw::Varint(v)) => visitor.visit_i64(i64::from(v as i32)),
            // Read as ProtoJSON writes an int64: a decimal string.
            (Kind::Int64, Raw::Varint(v)) => visitor.visit_string((v as i64).to_string()),
            (Kind::Enum(e), Raw::Varint(v)) => match e.name_of(v as i32) {
                Some(name) => visitor.visit_borrowed_str(name),
                None => visitor.visit_i64(i64::from(v as i32)),
            },
            (Kind::Message(ty), Raw::Len(bytes)) => MessageDe {
                bytes,
                ty,
                depth: self.depth,
            }
            .deserialize_any(visitor),
            (Kind::Struct, Raw::Len(bytes)) => StructDe {
                bytes,
                depth: self.depth,
            }
            .deserialize_any(visitor),
            (Kind::Value, Raw::Len(bytes)) => ValueDe {
                bytes,
                depth: self.depth,
            }
            .deserialize_any(visitor),
            (Kind::Timestamp, Raw::Len(bytes)) => {
                visitor.visit_string(timestamp(self.field, bytes)?.to_string())
            }
            _ => Err(wrong()),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        if let (Kind::Value, Raw::Len(bytes)) = (self.kind, self.raw) {
            return ValueDe {
                bytes,
                depth: self.depth,
            }
            .deserialize_option(visitor);
        }
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        match (self.kind, self.raw) {
            (Kind::Message(ty), Raw::Len(bytes)) => MessageDe {
                bytes,
                ty,
                depth: self.depth,
            }
            .deserialize_enum(name, variants, visitor),
            (Kind::Enum(e), Raw::Varint(v)) => {
                let name = e
                    .name_of(v as i32)
                    .ok_or_else(|| ProtoError::new(format!("{v} is not a value of {}", e.name)))?;
                visitor.visit_enum(name.into_deserializer())
            }
            (Kind::String, Raw::Len(b)) => {
                visitor.visit_enum(utf8(self.field, b)?.into_deserializer())
            }
            _ => self.deserialize_any(visitor),
        }
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map struct identifier ignored_any
    }
}

/// A `google.protobuf.Timestamp` message.
fn timestamp(field: &str, mut bytes: &[u8]) -> Result<Timestamp> {
    let (mut seconds, mut nanos) = (0i64, 0i32);
    while !bytes.is_empty() {
        match wire::next_field(&mut bytes)? {
            (1, Raw::Varint(v)) => seconds = v as i64,
            (2, Raw::Varint(v)) => nanos = v as i32,
            _ => {}
        }
    }
    u32::try_from(nanos)
        .ok()
        .and_then(|n| chrono::DateTime::from_timestamp(seconds, n))
        .map(Timestamp::from_datetime)
        .ok_or_else(|| ProtoError::new(format!("field {field} is not a valid timestamp")))
}
