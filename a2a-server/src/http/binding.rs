//! Which binding a request is for, decided by one function, [`Binding::of`], that the
//! authentication layer (to answer a refusal in the binding's own error form) and the dispatch
//! both use.

use super::grpc::ContentType;
use super::jsonrpc::{self, Framing};
use super::{AppState, grpc, rest};
use axum::extract::Request;
use axum::http::{Method, StatusCode};
use axum::response::Response;

/// The listener a request came through, as far as the bindings go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Door {
    /// The HTTP port: JSON-RPC and HTTP+JSON, and gRPC if `grpc`.
    Http {
        /// gRPC is served there too.
        grpc: bool,
    },
    /// A listener of gRPC only.
    GrpcOnly,
}

/// The binding a request is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Binding {
    /// gRPC: a gRPC `content-type` (see [`ContentType`]), whatever the path.
    Grpc,
    /// JSON-RPC: the path `/` (any method: all but `POST` are answered 405 in JSON-RPC).
    JsonRpc,
    /// HTTP+JSON: every other path.
    HttpJson,
    /// Nothing this door serves (gRPC-Web; anything but gRPC on a listener of gRPC only):
    /// answered 415 with this reason, unauthenticated, as nothing runs.
    Unsupported(&'static str),
}

const GRPC_ONLY: &str =
    "This listener serves the A2A gRPC binding only (content-type: application/grpc)\n";
const GRPC_UNSERVED: &str = "This server serves gRPC with protobuf messages only \
     (content-type: application/grpc or application/grpc+proto), not gRPC-Web or other \
     message codecs\n";

impl Binding {
    /// The binding `request` is for, behind `door`.
    pub(crate) fn of(request: &Request, door: Door) -> Self {
        let content_type = ContentType::of(request.headers());
        match (door, content_type) {
            (Door::GrpcOnly, ContentType::Grpc)
            | (Door::Http { grpc: true }, ContentType::Grpc) => Self::Grpc,
            (Door::GrpcOnly, _) => Self::Unsupported(GRPC_ONLY),
            (Door::Http { grpc: true }, ContentType::Unserved) => Self::Unsupported(GRPC_UNSERVED),
            _ if request.uri().path() == "/" => Self::JsonRpc,
            _ => Self::HttpJson,
        }
    }

    /// Answers `request` on this binding.
    pub(crate) async fn serve(self, state: &AppState, request: Request) -> Response {
        match self {
            // Boxed: the gRPC binding's future would make this one larger for every request.
            Self::Grpc => Box::pin(grpc::serve(state, request)).await,
            Self::JsonRpc if request.method() == Method::POST => {
                jsonrpc::serve(state, request).await
            }
            Self::JsonRpc => jsonrpc::wrong_method(request.method()),
            Self::HttpJson => rest::serve(state, request).await,
            Self::Unsupported(why) => grpc::unsupported(why),
        }
    }

    /// The binding's answer to a request refused by authentication with `error` (an
    /// Unauthenticated or PermissionDenied error: HTTP 401 or 403), from the binding's one
    /// error renderer.
    pub(crate) fn refused(self, error: a2a_core::Error) -> Response {
        match self {
            Self::Grpc => grpc::status_response(&error),
            Self::JsonRpc => {
                let status = error
                    .kind()
                    .and_then(|k| StatusCode::from_u16(k.http_status()).ok())
                    .unwrap_or(StatusCode::UNAUTHORIZED);
                jsonrpc::error_response(a2a_core::jsonrpc::Id::Null, error, Framing::Status(status))
            }
            Self::HttpJson => rest::error_response(&error, None),
            Self::Unsupported(why) => grpc::unsupported(why),
        }
    }
}
