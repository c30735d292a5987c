//! gRPC (`lf.a2a.v1.A2AService`) over HTTP/2, on tonic. Requests and responses are a2a-core's
//! protobuf encoding ([`a2a_core::proto`]) of the same v1.0 JSON the other transports speak.

use super::{CallOptions, ItemStream, Outgoing, Payload, StreamItem, Transport};
use crate::{Context, Error, Limit, Limits};
use a2a_core::proto::{self, BytesCodec};
use a2a_core::{Method, RESUMABLE_STREAMS_EXTENSION, StreamResponse};
use async_trait::async_trait;
use bytes::Bytes;
use futures::StreamExt as _;
use std::time::Duration;
use tonic::metadata::{MetadataMap, MetadataValue};
use tonic::transport::{Channel, ClientTlsConfig, Endpoint};

/// How often a connection with a call open but nothing received is pinged: a little over the
/// 5 minutes gRPC servers permit by default (`GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS`,
/// grpc-go's `EnforcementPolicy.MinTime`).
const KEEP_ALIVE: Duration = Duration::from_secs(330);

/// gRPC over one HTTP/2 connection (opened at the first call, reopened when it breaks).
#[derive(Clone, Debug)]
pub struct GrpcTransport {
    channel: Channel,
    url: String,
    limits: Limits,
    /// The `a2a-version` sent.
    version: &'static str,
}

impl GrpcTransport {
    /// A transport to `url`: `https://host:port` (TLS, the web's root certificates),
    /// `http://host:port` (plain HTTP/2), or `host:port` as agent cards write gRPC interfaces
    /// (TLS on port 443, plain HTTP/2 otherwise).
    pub fn new(url: &str, connect_timeout: Duration) -> Result<Self, Error> {
        let url = url.trim_end_matches('/');
        let uri = if url.contains("://") {
            url.to_owned()
        } else if url.ends_with(":443") {
            format!("https://{url}")
        } else {
            format!("http://{url}")
        };
        let bad = |e: &dyn std::fmt::Display| Error::Config(format!("gRPC URL {url:?}: {e}"));
        let mut endpoint = Endpoint::from_shared(uri.clone())
            .map_err(|e| bad(&e))?
            .connect_timeout(connect_timeout)
            .tcp_nodelay(true)
            // A quiet stream to a peer that died is found by a ping, but no sooner than gRPC
            // servers allow: they answer pings more often than every 5 minutes without data (or
            // any ping without a call) with GOAWAY "too_many_pings" after two. (Our server
            // pings its clients itself.)
            .http2_keep_alive_interval(KEEP_ALIVE)
            .user_agent(concat!("a2a-rust/", env!("CARGO_PKG_VERSION")))
            .map_err(|e| bad(&e))?;
        if uri.starts_with("https://") {
            endpoint = endpoint
                .tls_config(ClientTlsConfig::new().with_webpki_roots())
                .map_err(|e| bad(&e))?;
        }
        Ok(Self {
            channel: endpoint.connect_lazy(),
            url: uri,
            limits: Limits::default(),
            version: a2a_core::PROTOCOL_VERSION,
        })
    }

    /// Reads answers and streams within `limits` (tonic's decoding limit is the response or
    /// the event limit).
    #[must_use]
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// A failed call, with a message over the decoding limit as [`Error::TooLarge`].
    fn error(&self, status: &tonic::Status, limit: Limit, max: usize) -> Error {
        if status.code() == tonic::Code::OutOfRange
            && status
                .message()
                .starts_with("Error, decoded message length too large")
        {
            return limit.exceeded(max, self.url.clone());
        }
        status_error(status)
    }

    /// Speaks A2A 1.1 (`a2a-version: 1.1`: answers carry task generations).
    #[must_use]
    pub fn v1_1(mut self) -> Self {
        self.version = a2a_core::PROTOCOL_VERSION_1_1;
        self
    }

    /// The channel the calls go over.
    #[cfg(feature = "check")]
    pub(crate) fn channel(&self) -> Channel {
        self.channel.clone()
    }

    /// The request: the params encoded, with the call's headers as metadata.
    fn request(
        &self,
        request: &dyn Outgoing,
        options: &CallOptions,
    ) -> Result<tonic::Request<Bytes>, Error> {
        let version = self.version;
        if !options.query.is_empty() {
            return Err(Error::Config(
                "gRPC has no query string: send the API key in a header (metadata)".to_owned(),
            ));
        }
        let method = request.method();
        let body = request.proto()?;
        let mut metadata = MetadataMap::from_headers(options.headers.clone());
        metadata.insert("a2a-version", MetadataValue::from_static(version));
        if method.is_streaming() {
            // Ask for event ids in the events, to resume after the last one seen.
            let mut extensions = metadata
                .get("a2a-extensions")
                .and_then(|v| v.to_str().ok())
                .map(|v| format!("{v}, "))
                .unwrap_or_default();
            extensions.push_str(RESUMABLE_STREAMS_EXTENSION);
            if let Ok(v) = MetadataValue::try_from(extensions.as_str()) {
                metadata.insert("a2a-extensions", v);
            }
            if let Some(last) = options.last_event_id.as_deref() {
                let v = MetadataValue::try_from(last)
                    .map_err(|_| Error::Config(format!("event id {last:?}")))?;
                metadata.insert("last-event-id", v);
            }
        }
        Ok(tonic::Request::from_parts(
            metadata,
            Default::default(),
            Bytes::from(body),
        ))
    }

    async fn client(&self, max: usize) -> Result<tonic::client::Grpc<Channel>, Error> {
        let mut grpc =
            tonic::client::Grpc::new(self.channel.clone()).max_decoding_message_size(max);
        grpc.ready().await.map_err(|e| Error::Grpc {
            code: "UNAVAILABLE",
            message: e.to_string(),
            connect: true,
        })?;
        Ok(grpc)
    }
}

/// The path of `method`, as tonic takes it.
fn path(method: Method) -> http::uri::PathAndQuery {
    http::uri::PathAndQuery::try_from(proto::path(method)).expect("a valid gRPC path")
}

/// A failed call: an A2A error (one with an ErrorInfo, or a status A2A uses), or a failure of
/// the call itself (the connection, a deadline).
pub(crate) fn status_error(status: &tonic::Status) -> Error {
    let error = a2a_core::Error::from_tonic_status(status);
    let a2a = error.error_info().is_some() && !status.details().is_empty()
        || matches!(
            status.code(),
            tonic::Code::InvalidArgument
                | tonic::Code::NotFound
                | tonic::Code::Unimplemented
                | tonic::Code::Unauthenticated
                | tonic::Code::PermissionDenied
                | tonic::Code::FailedPrecondition
                | tonic::Code::ResourceExhausted
        );
    if a2a {
        return Error::Remote { error, status: 200 };
    }
    let connect = std::error::Error::source(status).is_some_and(|s| {
        s.downcast_ref::<tonic::ConnectError>().is_some() || s.to_string().contains("connect")
    }) && status.code() == tonic::Code::Unavailable;
    Error::Grpc {
        code: proto::GRPC_CODE_NAMES
            .get(status.code() as usize)
            .copied()
            .unwrap_or("UNKNOWN"),
        message: status.message().to_owned(),
        connect,
    }
}

#[async_trait]
impl Transport for GrpcTransport {
    async fn unary(&self, request: &dyn Outgoing, options: &CallOptions) -> Result<Payload, Error> {
        let method = request.method();
        let request = self.request(request, options)?;
        let max = self.limits.response_bytes;
        let mut grpc = self.client(max).await?;
        let response = grpc
            .unary(request, path(method), BytesCodec)
            .await
            .map_err(|s| self.error(&s, Limit::Response, max))?;
        Ok(Payload::Proto(response.into_inner()))
    }

    async fn stream(
        &self,
        request: &dyn Outgoing,
        options: &CallOptions,
    ) -> Result<ItemStream, Error> {
        let method = request.method();
        let request = self.request(request, options)?;
        let max = self.limits.event_bytes;
        let mut grpc = self.client(max).await?;
        let response = grpc
            .server_streaming(request, path(method), BytesCodec)
            .await
            .map_err(|s| self.error(&s, Limit::Event, max))?;
        let (_, ty) = proto::messages(method);
        let this = self.clone();
        let idle = self.limits.idle_timeout;
        let mut messages = response.into_inner();
        Ok(async_stream::stream! {
            loop {
                let bytes = match tokio::time::timeout(idle, messages.next()).await {
                    Err(elapsed) => {
                        let context = format!(
                            "no event from {} for {idle:?} (raise the limit with ClientBuilder::idle_timeout; a2a: --idle-timeout SECONDS)",
                            this.url
                        );
                        yield Err(Error::Timeout(Box::new(Context::new(context, elapsed))));
                        return;
                    }
                    Ok(None) => return,
                    Ok(Some(Err(s))) => {
                        yield Err(this.error(&s, Limit::Event, max));
                        return;
                    }
                    Ok(Some(Ok(bytes))) => bytes,
                };
                let decoded: Result<StreamResponse, _> = proto::decode(&bytes, ty);
                match decoded {
                    Ok(mut event) => {
                        let id = event.take_event_id();
                        yield Ok(StreamItem { id, event });
                    }
                    Err(e) => {
                        yield Err(Error::Decode(Box::new(e)));
                        return;
                    }
                }
            }
        }
        .boxed())
    }

    fn binding(&self) -> (&'static str, &'static str) {
        (a2a_core::BINDING_GRPC, self.version)
    }
}
