//! The protobuf wire format's few primitives, on prost's varint code.

use super::ProtoError;
use prost::encoding::{decode_varint, encode_varint, encoded_len_varint};

/// Wire type 0: varint.
pub(crate) const VARINT: u8 = 0;
/// Wire type 1: 8 little-endian bytes.
pub(crate) const I64: u8 = 1;
/// Wire type 2: length-delimited.
pub(crate) const LEN: u8 = 2;
/// Wire type 5: 4 little-endian bytes.
pub(crate) const I32: u8 = 5;

/// One field's payload as it sits on the wire.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Raw<'de> {
    Varint(u64),
    I64(u64),
    I32,
    Len(&'de [u8]),
}

impl Raw<'_> {
    pub(crate) fn wire_type(&self) -> &'static str {
        match self {
            Raw::Varint(_) => "varint",
            Raw::I64(_) => "64-bit",
            Raw::I32 => "32-bit",
            Raw::Len(_) => "length-delimited",
        }
    }
}

pub(crate) fn key(buf: &mut Vec<u8>, number: u32, wire_type: u8) {
    encode_varint(u64::from(number << 3 | u32::from(wire_type)), buf);
}

pub(crate) fn varint(buf: &mut Vec<u8>, value: u64) {
    encode_varint(value, buf);
}

pub(crate) fn bytes(buf: &mut Vec<u8>, number: u32, value: &[u8]) {
    key(buf, number, LEN);
    encode_varint(value.len() as u64, buf);
    buf.extend_from_slice(value);
}

/// Starts a length-delimited field whose length is not known yet: returns where its content
/// starts, for [`end_len`]. One length byte is reserved (most nested messages are short).
pub(crate) fn begin_len(buf: &mut Vec<u8>, number: u32) -> usize {
    key(buf, number, LEN);
    buf.push(0);
    buf.len()
}

/// Writes the length of the field begun at `start`, moving its content if the length takes
/// more than the one reserved byte.
pub(crate) fn end_len(buf: &mut Vec<u8>, start: usize) {
    let len = buf.len() - start;
    if len < 0x80 {
        buf[start - 1] = len as u8;
        return;
    }
    let mut prefix = Vec::with_capacity(encoded_len_varint(len as u64));
    encode_varint(len as u64, &mut prefix);
    buf[start - 1] = prefix[0];
    buf.splice(start..start, prefix[1..].iter().copied());
}

/// Reads the next field of a message: its number and payload.
pub(crate) fn next_field<'de>(input: &mut &'de [u8]) -> Result<(u32, Raw<'de>), ProtoError> {
    let malformed = |what: &str| ProtoError::new(format!("malformed protobuf: {what}"));
    let key = decode_varint(input).map_err(|_| malformed("a field key is cut short"))?;
    let number = u32::try_from(key >> 3).map_err(|_| malformed("a field number is too large"))?;
    if number == 0 {
        return Err(malformed("field number 0"));
    }
    let raw = match (key & 7) as u8 {
        VARINT => {
            Raw::Varint(decode_varint(input).map_err(|_| malformed("a varint is cut short"))?)
        }
        I64 => {
            let (head, rest) = input
                .split_first_chunk::<8>()
                .ok_or_else(|| malformed("a 64-bit field is cut short"))?;
            *input = rest;
            Raw::I64(u64::from_le_bytes(*head))
        }
        LEN => {
            let len = decode_varint(input).map_err(|_| malformed("a length is cut short"))?;
            let len = usize::try_from(len)
                .ok()
                .filter(|l| *l <= input.len())
                .ok_or_else(|| malformed("a length runs past the end of the message"))?;
            let (head, rest) = input.split_at(len);
            *input = rest;
            Raw::Len(head)
        }
        I32 => {
            let (_, rest) = input
                .split_first_chunk::<4>()
                .ok_or_else(|| malformed("a 32-bit field is cut short"))?;
            *input = rest;
            Raw::I32
        }
        other => {
            return Err(malformed(&format!(
                "wire type {other} (groups are not supported)"
            )));
        }
    };
    Ok((number, raw))
}
