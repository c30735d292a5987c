//! `google.protobuf.Value`: any JSON value, as protobuf.

use super::*;

/// Writes the content of a `google.protobuf.Value` holding any JSON value.
pub(super) struct ValueSer<'a>(pub(super) &'a mut Vec<u8>);

impl<'a> ser::Serializer for ValueSer<'a> {
    type Ok = ();
    type Error = ProtoError;
    type SerializeSeq = Repeated<'a>;
    type SerializeTuple = Repeated<'a>;
    type SerializeTupleStruct = Impossible<(), ProtoError>;
    type SerializeTupleVariant = Impossible<(), ProtoError>;
    type SerializeMap = Entries<'a>;
    type SerializeStruct = Entries<'a>;
    type SerializeStructVariant = Impossible<(), ProtoError>;

    fn serialize_unit(self) -> Result {
        wire::key(self.0, 1, VARINT);
        wire::varint(self.0, 0);
        Ok(())
    }
    fn serialize_none(self) -> Result {
        self.serialize_unit()
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result {
        self.serialize_unit()
    }
    fn serialize_bool(self, v: bool) -> Result {
        wire::key(self.0, 4, VARINT);
        wire::varint(self.0, u64::from(v));
        Ok(())
    }
    fn serialize_f64(self, v: f64) -> Result {
        wire::key(self.0, 2, I64);
        self.0.extend_from_slice(&v.to_le_bytes());
        Ok(())
    }
    fn serialize_f32(self, v: f32) -> Result {
        self.serialize_f64(v.into())
    }
    fn serialize_i8(self, v: i8) -> Result {
        self.serialize_f64(v.into())
    }
    fn serialize_i16(self, v: i16) -> Result {
        self.serialize_f64(v.into())
    }
    fn serialize_i32(self, v: i32) -> Result {
        self.serialize_f64(v.into())
    }
    fn serialize_i64(self, v: i64) -> Result {
        self.serialize_f64(v as f64)
    }
    fn serialize_u8(self, v: u8) -> Result {
        self.serialize_f64(v.into())
    }
    fn serialize_u16(self, v: u16) -> Result {
        self.serialize_f64(v.into())
    }
    fn serialize_u32(self, v: u32) -> Result {
        self.serialize_f64(v.into())
    }
    fn serialize_u64(self, v: u64) -> Result {
        self.serialize_f64(v as f64)
    }
    fn serialize_char(self, v: char) -> Result {
        self.serialize_str(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_str(self, v: &str) -> Result {
        wire::bytes(self.0, 3, v.as_bytes());
        Ok(())
    }
    fn serialize_bytes(self, v: &[u8]) -> Result {
        self.serialize_str(&crate::message::encode_base64(v))
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result {
        value.serialize(self)
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
        let list = wire::begin_len(self.0, 6);
        Ok(Repeated {
            buf: self.0,
            number: 1,
            kind: Kind::Value,
            close: [Some(list), None],
        })
    }
    fn serialize_tuple(self, len: usize) -> Result<Repeated<'a>> {
        self.serialize_seq(Some(len))
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Entries<'a>> {
        let start = wire::begin_len(self.0, 5);
        Ok(Entries(Into::Struct {
            buf: self.0,
            close: [Some(start), None],
            entry: None,
        }))
    }
    fn serialize_struct(self, _: &'static str, len: usize) -> Result<Entries<'a>> {
        self.serialize_map(Some(len))
    }

    refuse! {
        serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct: "a tuple struct";
        serialize_tuple_variant(&'static str, u32, &'static str, usize) -> Self::SerializeTupleVariant: "a tuple variant";
        serialize_struct_variant(&'static str, u32, &'static str, usize) -> Self::SerializeStructVariant: "a struct variant";
    }
}

impl ser::SerializeTuple for Repeated<'_> {
    type Ok = ();
    type Error = ProtoError;

    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result {
        ser::SerializeSeq::serialize_element(self, value)
    }

    fn end(self) -> Result {
        ser::SerializeSeq::end(self)
    }
}
