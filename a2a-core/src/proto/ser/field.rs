//! Fields: one field (key and value), repeated fields, the entries of an object (a message,
//! a map field, a Struct) and map keys.

use super::*;

/// Writes one field (key and value), or nothing for a null or an implicit default.
pub(super) struct FieldSer<'a> {
    pub(super) buf: &'a mut Vec<u8>,
    pub(super) number: u32,
    pub(super) kind: Kind,
    pub(super) presence: Presence,
}

impl FieldSer<'_> {
    /// Whether a value at its default is left out.
    pub(super) fn skips_default(&self) -> bool {
        matches!(self.presence, Presence::Implicit | Presence::Required)
    }

    pub(super) fn expected(&self) -> String {
        match self.kind {
            Kind::String => "a string field".into(),
            Kind::Bytes => "a bytes field".into(),
            Kind::Bool => "a boolean field".into(),
            Kind::Int32 => "an int32 field".into(),
            Kind::Int64 => "an int64 field".into(),
            Kind::Enum(e) => format!("a {} field", e.name),
            Kind::Message(m) => format!("a {} field", m.name),
            Kind::Struct => "a google.protobuf.Struct field".into(),
            Kind::Value => "a google.protobuf.Value field".into(),
            Kind::Timestamp => "a google.protobuf.Timestamp field".into(),
            Kind::Map(_) => "a map field".into(),
        }
    }

    pub(super) fn int(self, n: i64) -> Result {
        match self.kind {
            Kind::Int32 => {
                let n = i32::try_from(n)
                    .map_err(|_| ProtoError::new(format!("{n} does not fit an int32 field")))?;
                self.varint(i64::from(n) as u64)
            }
            Kind::Int64 => self.varint(n as u64),
            Kind::Enum(_) => {
                let n = i32::try_from(n)
                    .map_err(|_| ProtoError::new(format!("{n} is not an enum number")))?;
                self.varint(i64::from(n) as u64)
            }
            Kind::Value => {
                let start = wire::begin_len(self.buf, self.number);
                ValueSer(self.buf).serialize_f64(n as f64)?;
                wire::end_len(self.buf, start);
                Ok(())
            }
            _ => Err(unexpected("a number", self.expected())),
        }
    }

    pub(super) fn varint(self, v: u64) -> Result {
        if v != 0 || !self.skips_default() {
            wire::key(self.buf, self.number, VARINT);
            wire::varint(self.buf, v);
        }
        Ok(())
    }

    pub(super) fn nested<'b>(self, ty: &'static MessageType) -> Fields<'b>
    where
        Self: 'b,
    {
        let start = wire::begin_len(self.buf, self.number);
        Fields {
            buf: self.buf,
            ty,
            start: Some(start),
            pending: None,
            next: 0,
        }
    }
}

impl<'a> ser::Serializer for FieldSer<'a> {
    type Ok = ();
    type Error = ProtoError;
    type SerializeSeq = Repeated<'a>;
    type SerializeTuple = Impossible<(), ProtoError>;
    type SerializeTupleStruct = Impossible<(), ProtoError>;
    type SerializeTupleVariant = Impossible<(), ProtoError>;
    type SerializeMap = Entries<'a>;
    type SerializeStruct = Entries<'a>;
    type SerializeStructVariant = Impossible<(), ProtoError>;

    fn serialize_bool(self, v: bool) -> Result {
        match self.kind {
            Kind::Bool => self.varint(u64::from(v)),
            Kind::Value => {
                let start = wire::begin_len(self.buf, self.number);
                ValueSer(self.buf).serialize_bool(v)?;
                wire::end_len(self.buf, start);
                Ok(())
            }
            _ => Err(unexpected("a boolean", self.expected())),
        }
    }

    fn serialize_i8(self, v: i8) -> Result {
        self.int(v.into())
    }
    fn serialize_i16(self, v: i16) -> Result {
        self.int(v.into())
    }
    fn serialize_i32(self, v: i32) -> Result {
        self.int(v.into())
    }
    fn serialize_i64(self, v: i64) -> Result {
        self.int(v)
    }
    fn serialize_u8(self, v: u8) -> Result {
        self.int(v.into())
    }
    fn serialize_u16(self, v: u16) -> Result {
        self.int(v.into())
    }
    fn serialize_u32(self, v: u32) -> Result {
        self.int(v.into())
    }
    fn serialize_u64(self, v: u64) -> Result {
        let n = i64::try_from(v).map_err(|_| ProtoError::new(format!("{v} is too large")))?;
        self.int(n)
    }
    fn serialize_f32(self, v: f32) -> Result {
        self.serialize_f64(v.into())
    }

    fn serialize_f64(self, v: f64) -> Result {
        match self.kind {
            Kind::Value => {
                let start = wire::begin_len(self.buf, self.number);
                ValueSer(self.buf).serialize_f64(v)?;
                wire::end_len(self.buf, start);
                Ok(())
            }
            Kind::Int32 | Kind::Enum(_) if v.fract() == 0.0 && v.abs() < 2f64.powi(31) => {
                self.int(v as i64)
            }
            Kind::Int64 if v.fract() == 0.0 && v.abs() < 2f64.powi(63) => self.int(v as i64),
            _ => Err(unexpected("a fractional number", self.expected())),
        }
    }

    fn serialize_char(self, v: char) -> Result {
        self.serialize_str(v.encode_utf8(&mut [0; 4]))
    }

    fn serialize_str(self, v: &str) -> Result {
        match self.kind {
            Kind::String => {
                if !v.is_empty() || !self.skips_default() {
                    wire::bytes(self.buf, self.number, v.as_bytes());
                }
                Ok(())
            }
            Kind::Bytes => {
                let bytes = crate::message::decode_base64(v)
                    .map_err(|e| ProtoError::new(format!("bytes field is not base64: {e}")))?;
                self.serialize_bytes(&bytes)
            }
            Kind::Enum(e) => {
                let n = e.number_of(v).ok_or_else(|| {
                    ProtoError::new(format!("{v:?} is not a value of {}", e.name))
                })?;
                self.int(n.into())
            }
            Kind::Int32 => {
                let n: i64 = v
                    .parse()
                    .map_err(|_| ProtoError::new(format!("{v:?} is not an int32")))?;
                self.int(n)
            }
            Kind::Int64 => {
                let n: i64 = v
                    .parse()
                    .map_err(|_| ProtoError::new(format!("{v:?} is not an int64")))?;
                self.int(n)
            }
            Kind::Timestamp => {
                let t = Timestamp::from_str(v)
                    .map_err(|e| ProtoError::new(format!("{v:?} is not a timestamp: {e}")))?;
                let dt = t.as_datetime();
                let start = wire::begin_len(self.buf, self.number);
                if dt.timestamp() != 0 {
                    wire::key(self.buf, 1, VARINT);
                    wire::varint(self.buf, dt.timestamp() as u64);
                }
                if dt.timestamp_subsec_nanos() != 0 {
                    wire::key(self.buf, 2, VARINT);
                    wire::varint(self.buf, u64::from(dt.timestamp_subsec_nanos()));
                }
                wire::end_len(self.buf, start);
                Ok(())
            }
            Kind::Value => {
                let start = wire::begin_len(self.buf, self.number);
                ValueSer(self.buf).serialize_str(v)?;
                wire::end_len(self.buf, start);
                Ok(())
            }
            _ => Err(unexpected("a string", self.expected())),
        }
    }

    fn serialize_bytes(self, v: &[u8]) -> Result {
        match self.kind {
            Kind::Bytes => {
                if !v.is_empty() || !self.skips_default() {
                    wire::bytes(self.buf, self.number, v);
                }
                Ok(())
            }
            _ => Err(unexpected("bytes", self.expected())),
        }
    }

    fn serialize_none(self) -> Result {
        Ok(())
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result {
        value.serialize(self)
    }

    fn serialize_unit(self) -> Result {
        match self.kind {
            Kind::Value if self.presence != Presence::Repeated => {
                let start = wire::begin_len(self.buf, self.number);
                ValueSer(self.buf).serialize_unit()?;
                wire::end_len(self.buf, start);
                Ok(())
            }
            _ => Ok(()),
        }
    }

    fn serialize_unit_struct(self, _: &'static str) -> Result {
        Ok(())
    }

    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Result {
        self.serialize_str(variant)
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

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        value: &T,
    ) -> Result {
        use ser::SerializeMap;
        let mut map = self.serialize_map(Some(1))?;
        map.serialize_entry(variant, value)?;
        map.end()
    }

    fn serialize_seq(self, _: Option<usize>) -> Result<Repeated<'a>> {
        let repeated = matches!(
            self.presence,
            Presence::Repeated | Presence::RepeatedRequired
        );
        match self.kind {
            Kind::Map(_) => Err(unexpected("an array", self.expected())),
            _ if repeated => Ok(Repeated {
                buf: self.buf,
                number: self.number,
                kind: self.kind,
                close: [None, None],
            }),
            Kind::Value => {
                let value = wire::begin_len(self.buf, self.number);
                let list = wire::begin_len(self.buf, 6);
                Ok(Repeated {
                    buf: self.buf,
                    number: 1,
                    kind: Kind::Value,
                    close: [Some(list), Some(value)],
                })
            }
            _ => Err(unexpected("an array", self.expected())),
        }
    }

    fn serialize_map(self, _: Option<usize>) -> Result<Entries<'a>> {
        let into = match self.kind {
            Kind::Message(ty) => Into::Message(self.nested(ty)),
            Kind::Map(value) if self.presence != Presence::Explicit => Into::Map {
                buf: self.buf,
                number: self.number,
                value: *value,
                entry: None,
            },
            Kind::Struct => {
                let start = wire::begin_len(self.buf, self.number);
                Into::Struct {
                    buf: self.buf,
                    close: [Some(start), None],
                    entry: None,
                }
            }
            Kind::Value => {
                let value = wire::begin_len(self.buf, self.number);
                let inner = wire::begin_len(self.buf, 5);
                Into::Struct {
                    buf: self.buf,
                    close: [Some(inner), Some(value)],
                    entry: None,
                }
            }
            _ => return Err(unexpected("an object", self.expected())),
        };
        Ok(Entries(into))
    }

    fn serialize_struct(self, _: &'static str, len: usize) -> Result<Entries<'a>> {
        self.serialize_map(Some(len))
    }

    refuse! {
        serialize_tuple(usize) -> Self::SerializeTuple: "a tuple";
        serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct: "a tuple";
        serialize_tuple_variant(&'static str, u32, &'static str, usize) -> Self::SerializeTupleVariant: "a tuple";
        serialize_struct_variant(&'static str, u32, &'static str, usize) -> Self::SerializeStructVariant: "a variant";
    }
}

/// The elements of a repeated field, or of a `google.protobuf.ListValue`.
pub(super) struct Repeated<'a> {
    pub(super) buf: &'a mut Vec<u8>,
    pub(super) number: u32,
    pub(super) kind: Kind,
    /// The length-delimited fields to close at the end, innermost first (a ListValue, and the
    /// Value holding it).
    pub(super) close: [Option<usize>; 2],
}

impl ser::SerializeSeq for Repeated<'_> {
    type Ok = ();
    type Error = ProtoError;

    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result {
        if matches!(self.kind, Kind::Value) {
            // Every element of a ListValue is written, nulls included.
            let start = wire::begin_len(self.buf, self.number);
            value.serialize(ValueSer(self.buf))?;
            wire::end_len(self.buf, start);
            return Ok(());
        }
        value.serialize(FieldSer {
            buf: self.buf,
            number: self.number,
            kind: self.kind,
            presence: Presence::Explicit,
        })
    }

    fn end(self) -> Result {
        close(self.buf, self.close);
        Ok(())
    }
}

/// What the entries of an object are written into.
pub(super) enum Into<'a> {
    /// A message's fields.
    Message(Fields<'a>),
    /// The entries of a `map<string, V>` field, each a message `{1: key, 2: value}`.
    Map {
        buf: &'a mut Vec<u8>,
        number: u32,
        value: Kind,
        entry: Option<usize>,
    },
    /// The entries of a `google.protobuf.Struct`, each `{1: key, 2: Value}`.
    Struct {
        buf: &'a mut Vec<u8>,
        /// What to close at the end, innermost first (the Struct, a Value holding it).
        close: [Option<usize>; 2],
        /// Where the current entry began.
        entry: Option<usize>,
    },
}

/// Writes the entries of an object into a message, a map field or a Struct.
pub(super) struct Entries<'a>(pub(super) Into<'a>);

impl Entries<'_> {
    pub(super) fn key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result {
        match &mut self.0 {
            Into::Message(fields) => fields.key(key),
            Into::Map {
                buf, number, entry, ..
            } => {
                *entry = Some(wire::begin_len(buf, *number));
                key.serialize(KeySer(buf))
            }
            Into::Struct { buf, entry, .. } => {
                *entry = Some(wire::begin_len(buf, 1));
                key.serialize(KeySer(buf))
            }
        }
    }

    pub(super) fn value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result {
        match &mut self.0 {
            Into::Message(fields) => {
                let field = fields
                    .pending
                    .take()
                    .ok_or_else(|| ProtoError::new("a map value without a key"))?;
                fields.field(field, value)
            }
            Into::Map {
                buf,
                value: kind,
                entry,
                ..
            } => {
                value.serialize(FieldSer {
                    buf,
                    number: 2,
                    kind: *kind,
                    presence: Presence::Explicit,
                })?;
                let start = entry.take().ok_or_else(|| ProtoError::new("no key"))?;
                wire::end_len(buf, start);
                Ok(())
            }
            Into::Struct { buf, entry, .. } => {
                let start = wire::begin_len(buf, 2);
                value.serialize(ValueSer(buf))?;
                wire::end_len(buf, start);
                let entry = entry.take().ok_or_else(|| ProtoError::new("no key"))?;
                wire::end_len(buf, entry);
                Ok(())
            }
        }
    }

    pub(super) fn end(self) -> Result {
        match self.0 {
            Into::Message(fields) => fields.finish(),
            Into::Map { .. } => Ok(()),
            Into::Struct {
                buf, close: starts, ..
            } => {
                close(buf, starts);
                Ok(())
            }
        }
    }
}

impl ser::SerializeMap for Entries<'_> {
    type Ok = ();
    type Error = ProtoError;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result {
        self.key(key)
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result {
        self.value(value)
    }

    fn end(self) -> Result {
        Entries::end(self)
    }
}

impl ser::SerializeStruct for Entries<'_> {
    type Ok = ();
    type Error = ProtoError;

    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result {
        self.key(key)?;
        self.value(value)
    }

    fn end(self) -> Result {
        Entries::end(self)
    }
}

/// Writes a map key as field 1 of its entry.
pub(super) struct KeySer<'a>(pub(super) &'a mut Vec<u8>);

impl ser::Serializer for KeySer<'_> {
    type Ok = ();
    type Error = ProtoError;
    type SerializeSeq = Impossible<(), ProtoError>;
    type SerializeTuple = Impossible<(), ProtoError>;
    type SerializeTupleStruct = Impossible<(), ProtoError>;
    type SerializeTupleVariant = Impossible<(), ProtoError>;
    type SerializeMap = Impossible<(), ProtoError>;
    type SerializeStruct = Impossible<(), ProtoError>;
    type SerializeStructVariant = Impossible<(), ProtoError>;

    fn serialize_str(self, v: &str) -> Result {
        wire::bytes(self.0, 1, v.as_bytes());
        Ok(())
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, v: &T) -> Result {
        v.serialize(self)
    }

    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result {
        v.serialize(self)
    }

    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Result {
        self.serialize_str(variant)
    }

    fn serialize_char(self, v: char) -> Result {
        self.serialize_str(v.encode_utf8(&mut [0; 4]))
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
        serialize_bytes(&[u8]) -> (): "bytes";
        serialize_none() -> (): "null";
        serialize_unit() -> (): "null";
        serialize_unit_struct(&'static str) -> (): "null";
        serialize_seq(Option<usize>) -> Self::SerializeSeq: "an array";
        serialize_tuple(usize) -> Self::SerializeTuple: "an array";
        serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct: "an array";
        serialize_tuple_variant(&'static str, u32, &'static str, usize) -> Self::SerializeTupleVariant: "an array";
        serialize_map(Option<usize>) -> Self::SerializeMap: "an object";
        serialize_struct(&'static str, usize) -> Self::SerializeStruct: "an object";
        serialize_struct_variant(&'static str, u32, &'static str, usize) -> Self::SerializeStructVariant: "an object";
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result {
        Err(unexpected("an object", "a map key"))
    }
}
