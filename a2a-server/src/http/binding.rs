//! Which binding a request is for, decided by one function, [`Binding::of`], that the
//! authentication layer (to answer a refusal in the binding's own error form) and the dispatch
//! ([`Bindings`], the service behind them) both use.

use super::grpc::ContentType;
use super::jsonrpc::{self, Framing};
use super::{AppState, auth, grpc, rest};
use axum::extract::Request;
use axum::http::{Method, StatusCode};
use axum::response::Response;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

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

/// The service behind a door: each request is answered by the binding it is for. A tower
/// service of its own rather than an axum handler: a request needs no extractor, and one box
/// for its future.
#[derive(Clone, Debug)]
pub(crate) struct Bindings {
    state: Arc<AppState>,
    door: Door,
}

impl Bindings {
    pub(crate) fn new(state: Arc<AppState>, door: Door) -> Self {
        Self { state, door }
    }
}

impl tower::Service<Request> for Bindings {
    type Response = Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let state = self.state.clone();
        let binding = Binding::of(&request, self.door);
        Box::pin(async move {
            let response = match binding {
                // Boxed: the gRPC binding's future would make this one larger for every request.
                Binding::Grpc => Box::pin(grpc::serve(&state, request)).await,
                Binding::JsonRpc if request.method() == Method::POST => {
                    jsonrpc::serve(&state, request).await
                }
                Binding::JsonRpc => jsonrpc::wrong_method(request.method()),
                Binding::HttpJson => rest::serve(&state, request).await,
                Binding::Unsupported(why) => grpc::unsupported(why),
            };
            // Every 401 and 403 a binding answers (an operation's too) gets its challenge here.
            Ok(auth::challenge_of(binding, state.auth.as_deref(), response))
        })
    }
}
