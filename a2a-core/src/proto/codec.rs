//! [`BytesCodec`]: tonic's framing around messages that [`encode`](super::encode) and
//! [`decode`](super::decode) turn into bytes and back (feature `tonic`).

use bytes::{Buf, BufMut, Bytes};
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};

/// A tonic codec that passes each message through as its encoded bytes: the server and the
/// client of the gRPC binding decode and encode with this module's tables, after and before
/// tonic's framing.
#[derive(Clone, Copy, Debug, Default)]
pub struct BytesCodec;

impl Codec for BytesCodec {
    type Encode = Bytes;
    type Decode = Bytes;
    type Encoder = BytesCodec;
    type Decoder = BytesCodec;

    fn encoder(&mut self) -> BytesCodec {
        BytesCodec
    }

    fn decoder(&mut self) -> BytesCodec {
        BytesCodec
    }
}

impl Encoder for BytesCodec {
    type Item = Bytes;
    type Error = tonic::Status;

    fn encode(&mut self, item: Bytes, dst: &mut EncodeBuf<'_>) -> Result<(), tonic::Status> {
        dst.put(item);
        Ok(())
    }
}

impl Decoder for BytesCodec {
    type Item = Bytes;
    type Error = tonic::Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Bytes>, tonic::Status> {
        Ok(Some(src.copy_to_bytes(src.remaining())))
    }
}

impl crate::Error {
    /// The error as a tonic status: the code from the error table, the message, and the
    /// `google.rpc.Status` (with the ErrorInfo) that tonic sends in `grpc-status-details-bin`.
    pub fn to_tonic_status(&self) -> tonic::Status {
        tonic::Status::with_details(
            tonic::Code::from_i32(self.grpc_code()),
            self.message.clone(),
            Bytes::from(self.to_grpc_status()),
        )
    }

    /// Reads a tonic status ([`Error::from_grpc_status`](crate::Error::from_grpc_status)).
    pub fn from_tonic_status(status: &tonic::Status) -> Self {
        Self::from_grpc_status(status.code() as i32, status.message(), status.details())
    }
}
