//! Encoding: a serde `Serializer` that writes protobuf straight from any value whose serde form
//! is ProtoJSON (our types, or a `serde_json::Value`), guided by the message tables.

use super::ProtoError;
use super::schema::{Field, Kind, MessageType, Presence};
use super::wire::{self, I64, VARINT};
use crate::time::Timestamp;
use serde::ser::{self, Impossible, Serialize, Serializer as _};
use std::str::FromStr;

/// The name serde_json gives a `RawValue` (pre-serialized JSON) when it serializes one.
const RAW_VALUE: &str = "$serde_json::private::RawValue";

type Result<T = ()> = std::result::Result<T, ProtoError>;

/// Appends `value`, encoded as a `ty` message, to `buf`.
pub(crate) fn message<T: Serialize + ?Sized>(
    value: &T,
    ty: &'static MessageType,
    buf: &mut Vec<u8>,
) -> Result {
    value.serialize(MessageSer { buf, ty })
}

fn unexpected(what: &str, expected: impl std::fmt::Display) -> ProtoError {
    ProtoError::new(format!("{expected} cannot hold {what}"))
}

/// Re-serializes pre-serialized JSON (a `RawValue`) into `serializer`.
fn raw_json<S: ser::Serializer<Error = ProtoError>, T: Serialize + ?Sized>(
    value: &T,
    serializer: S,
) -> Result<S::Ok> {
    let text = value.serialize(StrCapture)?;
    let parsed: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| ProtoError::new(format!("embedded JSON is invalid: {e}")))?;
    parsed.serialize(serializer)
}

/// Serde methods that a serializer refuses, naming what it holds.
macro_rules! refuse {
    ($($method:ident($($arg:ty),*) -> $ret:ty: $what:literal;)*) => {
        $(fn $method(self, $(_: $arg),*) -> Result<$ret> {
            Err(unexpected($what, Expects::expects(&self)))
        })*
    };
}

// After `refuse!`, which they use (a `macro_rules!` is in scope below its definition).
mod field;
mod value;

use field::{Entries, FieldSer, Into, KeySer, Repeated};
use value::ValueSer;

/// What a serializer can hold, for error messages.
trait Expects {
    fn expects(&self) -> String;
}

impl Expects for MessageSer<'_> {
    fn expects(&self) -> String {
        format!("{} (a message)", self.ty.name)
    }
}

impl Expects for FieldName {
    fn expects(&self) -> String {
        "a field name".into()
    }
}

impl Expects for StrCapture {
    fn expects(&self) -> String {
        "embedded JSON".into()
    }
}

impl Expects for KeySer<'_> {
    fn expects(&self) -> String {
        "a map key".into()
    }
}

impl Expects for ValueSer<'_> {
    fn expects(&self) -> String {
        "a google.protobuf.Value".into()
    }
}

impl Expects for FieldSer<'_> {
    fn expects(&self) -> String {
        self.expected()
    }
}

// ---------------------------------------------------------------------------------------------
// Messages

/// Writes the fields of a message (its content, without a key or length).
struct MessageSer<'a> {
    buf: &'a mut Vec<u8>,
    ty: &'static MessageType,
}

/// The fields of a message being written; `start` is where a nested message's content began.
struct Fields<'a> {
    buf: &'a mut Vec<u8>,
    ty: &'static MessageType,
    start: Option<usize>,
    pending: Option<&'static Field>,
    /// Where to look for the next field's name first (after the last one written).
    next: usize,
}

impl<'a> Fields<'a> {
    fn field<T: Serialize + ?Sized>(&mut self, field: &'static Field, value: &T) -> Result {
        value.serialize(FieldSer {
            buf: self.buf,
            number: field.number,
            kind: field.kind,
            presence: field.presence,
        })
    }

    fn named<T: Serialize + ?Sized>(&mut self, name: &str, value: &T) -> Result {
        let field = self.lookup(name)?;
        self.field(field, value)
    }

    fn lookup(&mut self, name: &str) -> Result<&'static Field> {
        let ty = self.ty;
        let at = ty
            .position_from(name, self.next)
            .ok_or_else(|| ProtoError::new(format!("{} has no field named {name:?}", ty.name)))?;
        self.next = at + 1;
        Ok(&ty.fields[at])
    }

    /// Sets the field a map key names, as the next one to write.
    fn key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result {
        let at = key.serialize(FieldName(self.ty, self.next))?;
        self.next = at + 1;
        self.pending = Some(&self.ty.fields[at]);
        Ok(())
    }

    fn finish(self) -> Result {
        if let Some(start) = self.start {
            wire::end_len(self.buf, start);
        }
        Ok(())
    }
}

impl<'a> ser::Serializer for MessageSer<'a> {
    type Ok = ();
    type Error = ProtoError;
    type SerializeSeq = Impossible<(), ProtoError>;
    type SerializeTuple = Impossible<(), ProtoError>;
    type SerializeTupleStruct = Impossible<(), ProtoError>;
    type SerializeTupleVariant = Impossible<(), ProtoError>;
    type SerializeMap = Fields<'a>;
    type SerializeStruct = Fields<'a>;
    type SerializeStructVariant = Impossible<(), ProtoError>;

    fn serialize_map(self, _: Option<usize>) -> Result<Fields<'a>> {
        Ok(Fields {
            buf: self.buf,
            ty: self.ty,
            start: None,
            pending: None,
            next: 0,
        })
    }

    fn serialize_struct(self, _: &'static str, len: usize) -> Result<Fields<'a>> {
        self.serialize_map(Some(len))
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        value: &T,
    ) -> Result {
        let mut fields = self.serialize_map(Some(1))?;
        fields.named(variant, value)?;
        fields.finish()
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        value: &T,
    ) -> Result {
        if name == RAW_VALUE {
            raw_json(value, self)
        } else {
            value.serialize(self)
        }
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result {
        value.serialize(self)
    }

    fn serialize_none(self) -> Result {
        Ok(())
    }

    fn serialize_unit(self) -> Result {
        Ok(())
    }

    fn serialize_unit_struct(self, _: &'static str) -> Result {
        Ok(())
    }

    refuse! {
        serialize_bool(bool) -> (): "a boolean";
        serialize_i8(i8) -> (): "a number";
        serialize_i16(i16) -> (): "a number";
        serialize_i32(i32) -> (): "a number";
        serialize_i64(i64) -> (): "a number";
        serialize_u8(u8) -> (): "a number";
        serialize_u16(u16) -> (): "a number";
        serialize_u32(u32) -> (): "a number";
        serialize_u64(u64) -> (): "a number";
        serialize_f32(f32) -> (): "a number";
        serialize_f64(f64) -> (): "a number";
        serialize_char(char) -> (): "a string";
        serialize_str(&str) -> (): "a string";
        serialize_bytes(&[u8]) -> (): "bytes";
        serialize_unit_variant(&'static str, u32, &'static str) -> (): "a string";
        serialize_seq(Option<usize>) -> Self::SerializeSeq: "an array";
        serialize_tuple(usize) -> Self::SerializeTuple: "an array";
        serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct: "an array";
        serialize_tuple_variant(&'static str, u32, &'static str, usize) -> Self::SerializeTupleVariant: "an array";
        serialize_struct_variant(&'static str, u32, &'static str, usize) -> Self::SerializeStructVariant: "an object";
    }
}

impl ser::SerializeStruct for Fields<'_> {
    type Ok = ();
    type Error = ProtoError;

    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result {
        self.named(key, value)
    }

    fn end(self) -> Result {
        self.finish()
    }
}

impl ser::SerializeMap for Fields<'_> {
    type Ok = ();
    type Error = ProtoError;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result {
        self.key(key)
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result {
        let field = self
            .pending
            .take()
            .ok_or_else(|| ProtoError::new("a map value without a key"))?;
        self.field(field, value)
    }

    fn end(self) -> Result {
        self.finish()
    }
}

/// Finds the index of the field a map key names (looking from an index on), without
/// allocating.
struct FieldName(&'static MessageType, usize);

impl ser::Serializer for FieldName {
    type Ok = usize;
    type Error = ProtoError;
    type SerializeSeq = Impossible<usize, ProtoError>;
    type SerializeTuple = Impossible<usize, ProtoError>;
    type SerializeTupleStruct = Impossible<usize, ProtoError>;
    type SerializeTupleVariant = Impossible<usize, ProtoError>;
    type SerializeMap = Impossible<usize, ProtoError>;
    type SerializeStruct = Impossible<usize, ProtoError>;
    type SerializeStructVariant = Impossible<usize, ProtoError>;

    fn serialize_str(self, name: &str) -> Result<usize> {
        self.0
            .position_from(name, self.1)
            .ok_or_else(|| ProtoError::new(format!("{} has no field named {name:?}", self.0.name)))
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<usize> {
        value.serialize(self)
    }

    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<usize> {
        self.serialize_str(variant)
    }

    refuse! {
        serialize_bool(bool) -> usize: "a boolean";
        serialize_i8(i8) -> usize: "a number";
        serialize_i16(i16) -> usize: "a number";
        serialize_i32(i32) -> usize: "a number";
        serialize_i64(i64) -> usize: "a number";
        serialize_u8(u8) -> usize: "a number";
        serialize_u16(u16) -> usize: "a number";
        serialize_u32(u32) -> usize: "a number";
        serialize_u64(u64) -> usize: "a number";
        serialize_f32(f32) -> usize: "a number";
        serialize_f64(f64) -> usize: "a number";
        serialize_char(char) -> usize: "a character";
        serialize_bytes(&[u8]) -> usize: "bytes";
        serialize_none() -> usize: "null";
        serialize_unit() -> usize: "null";
        serialize_unit_struct(&'static str) -> usize: "null";
        serialize_seq(Option<usize>) -> Self::SerializeSeq: "an array";
        serialize_tuple(usize) -> Self::SerializeTuple: "an array";
        serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct: "an array";
        serialize_tuple_variant(&'static str, u32, &'static str, usize) -> Self::SerializeTupleVariant: "an array";
        serialize_map(Option<usize>) -> Self::SerializeMap: "an object";
        serialize_struct(&'static str, usize) -> Self::SerializeStruct: "an object";
        serialize_struct_variant(&'static str, u32, &'static str, usize) -> Self::SerializeStructVariant: "an object";
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<usize> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<usize> {
        Err(unexpected("an object", "a field name"))
    }
}

/// Captures a string (the text of a `RawValue`).
struct StrCapture;

impl ser::Serializer for StrCapture {
    type Ok = String;
    type Error = ProtoError;
    type SerializeSeq = Impossible<String, ProtoError>;
    type SerializeTuple = Impossible<String, ProtoError>;
    type SerializeTupleStruct = Impossible<String, ProtoError>;
    type SerializeTupleVariant = Impossible<String, ProtoError>;
    type SerializeMap = Impossible<String, ProtoError>;
    type SerializeStruct = Impossible<String, ProtoError>;
    type SerializeStructVariant = Impossible<String, ProtoError>;

    fn serialize_str(self, v: &str) -> Result<String> {
        Ok(v.to_owned())
    }

    refuse! {
        serialize_bool(bool) -> String: "a boolean";
        serialize_i8(i8) -> String: "a number";
        serialize_i16(i16) -> String: "a number";
        serialize_i32(i32) -> String: "a number";
        serialize_i64(i64) -> String: "a number";
        serialize_u8(u8) -> String: "a number";
        serialize_u16(u16) -> String: "a number";
        serialize_u32(u32) -> String: "a number";
        serialize_u64(u64) -> String: "a number";
        serialize_f32(f32) -> String: "a number";
        serialize_f64(f64) -> String: "a number";
        serialize_char(char) -> String: "a character";
        serialize_bytes(&[u8]) -> String: "bytes";
        serialize_none() -> String: "null";
        serialize_unit() -> String: "null";
        serialize_unit_struct(&'static str) -> String: "null";
        serialize_unit_variant(&'static str, u32, &'static str) -> String: "a variant";
        serialize_seq(Option<usize>) -> Self::SerializeSeq: "an array";
        serialize_tuple(usize) -> Self::SerializeTuple: "an array";
        serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct: "an array";
        serialize_tuple_variant(&'static str, u32, &'static str, usize) -> Self::SerializeTupleVariant: "an array";
        serialize_map(Option<usize>) -> Self::SerializeMap: "an object";
        serialize_struct(&'static str, usize) -> Self::SerializeStruct: "an object";
        serialize_struct_variant(&'static str, u32, &'static str, usize) -> Self::SerializeStructVariant: "an object";
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<String> {
        value.serialize(self)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<String> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<String> {
        Err(unexpected("an object", "embedded JSON"))
    }
}

/// Closes length-delimited fields, innermost first.
fn close(buf: &mut Vec<u8>, starts: [Option<usize>; 2]) {
    for start in starts.into_iter().flatten() {
        wire::end_len(buf, start);
    }
}
