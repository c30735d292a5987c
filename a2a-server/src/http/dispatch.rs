//! The operation table ([`a2a_core::for_each_operation!`]) applied to the handler: each
//! operation is served by the [`RequestHandler`] method the table names ([`Handle`]), and
//! [`dispatch`] turns a [`Method`] read off the wire into a [`Call`] generic over its
//! operation. A binding is then one generic function (decode the request its way, call
//! [`Handle::handle`], render the [`Answer`] its way) and the [`Call`] that names it.
//!
//! Requests are validated by the handler, at the entry of each operation, not here: a binding
//! only decodes.

use crate::handler::{CallContext, EventStream, RequestHandler, SendReply, TaskReply};
use a2a_core::operation::{self, Operation};
use a2a_core::{
    AgentCard, Empty, Error, ErrorKind, ListTaskPushNotificationConfigsResponse, ListTasksResponse,
    Message, Method, SendMessageResponse, StreamResponse, Task, TaskPushNotificationConfig,
};
use bytes::Bytes;
use serde::Serialize;
use serde_json::Value;
use std::future::Future;
use std::pin::Pin;

/// What a handler method answers: one value, or a stream of events.
pub(crate) enum Reply<T> {
    /// A unary operation's answer.
    Unary(T),
    /// A streaming operation's events.
    Stream(EventStream),
}

/// The answer of an operation `O`'s handler method, as the bindings render it.
pub(crate) trait Answer<O: Operation> {
    /// The unary answer, written as the v1.0 JSON (or protobuf) of `O::Response`.
    type Unary: Serialize + Send;
    /// The answer, unary or a stream.
    fn into_reply(self) -> Reply<Self::Unary>;
    /// The unary answer in its v0.3 form, by the table's v0.3 codec of `O`.
    fn v03(unary: Self::Unary) -> Value;

    /// The unary answer's protobuf message (`O`'s response message, unframed), for the gRPC
    /// binding.
    fn proto(unary: &Self::Unary) -> Result<Bytes, Error>;

    /// The answer, a unary one in its v0.3 form.
    fn into_v03_reply(self) -> Reply<Value>
    where
        Self: Sized,
    {
        match self.into_reply() {
            Reply::Unary(unary) => Reply::Unary(Self::v03(unary)),
            Reply::Stream(events) => Reply::Stream(events),
        }
    }
}

/// A stream has no unary answer.
#[derive(Serialize)]
pub(crate) enum Never {}

impl<O: Operation<Response = StreamResponse>> Answer<O> for EventStream {
    type Unary = Never;
    fn into_reply(self) -> Reply<Never> {
        Reply::Stream(self)
    }
    fn v03(unary: Never) -> Value {
        match unary {}
    }
    fn proto(unary: &Never) -> Result<Bytes, Error> {
        match *unary {}
    }
}

impl<O: Operation<Response = Task>> Answer<O> for TaskReply {
    type Unary = TaskReply;
    fn into_reply(self) -> Reply<TaskReply> {
        Reply::Unary(self)
    }
    fn v03(unary: TaskReply) -> Value {
        O::encode_v03_result(&unary)
    }
    /// An unchanged task's encoding is kept between calls, as its JSON is (serialized through
    /// serde, a `TaskReply` would go through that JSON).
    fn proto(unary: &TaskReply) -> Result<Bytes, Error> {
        unary.proto()
    }
}

impl<O: Operation<Response = SendMessageResponse>> Answer<O> for SendReply {
    type Unary = SendReply;
    fn into_reply(self) -> Reply<SendReply> {
        Reply::Unary(self)
    }
    fn v03(unary: SendReply) -> Value {
        O::encode_v03_result(&unary.into())
    }
    /// The task encoded from the store's copy, not through the reply's JSON.
    fn proto(unary: &SendReply) -> Result<Bytes, Error> {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        enum Borrowed<'a> {
            Task(&'a Task),
            Message(&'a Message),
        }
        match unary {
            SendReply::Task(t) => encode::<O, _>(&Borrowed::Task(t)),
            SendReply::Message(m) => encode::<O, _>(&Borrowed::Message(m)),
        }
    }
}

/// `value` as `O`'s response message.
fn encode<O: Operation, T: Serialize + ?Sized>(value: &T) -> Result<Bytes, Error> {
    a2a_core::proto::encode(value, O::response_message())
        .map(Bytes::from)
        .map_err(|e| {
            let message = O::response_message().name;
            tracing::error!(error = %e, message, "a response failed to encode");
            Error::new(ErrorKind::Internal, format!("response not encodable: {e}"))
        })
}

/// Handler answers that are the operation's response type itself.
macro_rules! answer_is_response {
    ($($t:ty),+ $(,)?) => {
        $(impl<O: Operation<Response = $t>> Answer<O> for $t {
            type Unary = $t;
            fn into_reply(self) -> Reply<$t> {
                Reply::Unary(self)
            }
            fn v03(unary: $t) -> Value {
                O::encode_v03_result(&unary)
            }
            fn proto(unary: &$t) -> Result<Bytes, Error> {
                encode::<O, _>(unary)
            }
        })+
    };
}

answer_is_response!(
    Task,
    ListTasksResponse,
    TaskPushNotificationConfig,
    ListTaskPushNotificationConfigsResponse,
    Empty,
    AgentCard,
);

/// The handler method serving operation `O`.
pub(crate) trait Handle<O: Operation> {
    /// Calls it. The request is validated there, not by the binding.
    fn handle<'a>(
        &'a self,
        cx: &'a CallContext,
        request: O::Request,
    ) -> impl Future<Output = Result<impl Answer<O>, Error>> + Send + 'a;
}

/// A binding's call of an operation, generic over it, which [`dispatch`] runs for the operation
/// a [`Method`] names.
pub(crate) trait Call: Send {
    /// What the call answers.
    type Output;
    /// Calls the operation `O`.
    fn call<O: Operation>(self) -> impl Future<Output = Self::Output> + Send
    where
        RequestHandler: Handle<O>;
}

/// A call's future, boxed: inline, the union of every operation's state would make a binding's
/// future several kilobytes, which axum boxes and copies per request.
pub(crate) type Boxed<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// For each entry of the table: `Handle` by the method it names, and [`dispatch`].
macro_rules! served {
    ($(
        $(#[doc = $doc:literal])*
        $op:ident => $call:ident(request: $req:ty, response: $resp:ty) { $($entry:tt)* };
    )+) => {
        $(impl Handle<operation::$op> for RequestHandler {
            fn handle<'a>(
                &'a self,
                cx: &'a CallContext,
                request: $req,
            ) -> impl Future<Output = Result<impl Answer<operation::$op>, Error>> + Send + 'a {
                self.$call(cx, request)
            }
        })+

        /// Runs `call` for the operation of `method`; MethodNotFound for a method of a newer
        /// a2a-core than this server was built with (the table makes both, so never).
        pub(crate) fn dispatch<'a, C: Call + 'a>(
            method: Method,
            call: C,
        ) -> Result<Boxed<'a, C::Output>, Error> {
            match method {
                $(Method::$op => Ok(Box::pin(call.call::<operation::$op>())),)+
                #[allow(unreachable_patterns)]
                _ => Err(Error::from_kind(ErrorKind::MethodNotFound)),
            }
        }
    };
}

a2a_core::for_each_operation!(served);

#[cfg(test)]
mod tests {
    use super::*;
    use a2a_core::proto::{self, schema};

    /// A `SendMessage` answer's protobuf is the `SendMessageResponse` of its task.
    #[test]
    fn a_send_answer_encodes_as_the_operations_response_message() {
        let task = Task::new(
            "t-1",
            "c-1",
            a2a_core::TaskStatus::new(a2a_core::TaskState::Working),
        );
        let reply = SendReply::Task(TaskReply::new(std::sync::Arc::new(task.clone())));
        let bytes = <SendReply as Answer<operation::SendMessage>>::proto(&reply).expect("encodes");
        let back: SendMessageResponse =
            proto::decode(&bytes, &schema::SEND_MESSAGE_RESPONSE).expect("decodes");
        assert_eq!(back, SendMessageResponse::Task(task));
    }
}
