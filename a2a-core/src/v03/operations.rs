//! The v0.3 request and result of each operation, as the operation table
//! ([`crate::operation`]) names them, and [`Params`], any operation's request.

use super::*;

// ---------------------------------------------------------------------------------------------
// Requests and results of each operation, as the operation table (`crate::operation`) names them

/// The v0.3 `params` object: `null` (or absent) reads as `{}`.
fn params_obj(params: &Value) -> Result<&Obj, Error> {
    static EMPTY: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
    let params = if params.is_null() {
        EMPTY.get_or_init(|| Value::Object(Obj::new()))
    } else {
        params
    };
    obj(params, "params")
}

fn task_id_param(o: &Obj) -> Result<TaskId, Error> {
    req_str(o, "id", "params").map(TaskId::new)
}

/// Reads v0.3 `message/send` (or `message/stream`) params.
pub fn decode_send_params(params: &Value) -> Result<SendMessageRequest, Error> {
    let at = "params";
    let o = params_obj(params)?;
    let message = decode_message(
        o.get("message")
            .ok_or_else(|| Error::invalid_params("params.message", "is required"))?,
        "params.message",
    )?;
    let configuration = match o.get("configuration") {
        None | Some(Value::Null) => None,
        Some(c) => {
            let cat = "params.configuration";
            let co = obj(c, cat)?;
            Some(SendMessageConfiguration {
                accepted_output_modes: str_list(co, "acceptedOutputModes", cat)?,
                task_push_notification_config: match co.get("pushNotificationConfig") {
                    None | Some(Value::Null) => None,
                    Some(p) => Some(decode_inner_push_config(
                        p,
                        "params.configuration.pushNotificationConfig",
                    )?),
                },
                history_length: opt_i32(co, "historyLength", cat)?,
                return_immediately: !opt_bool(co, "blocking", cat)?.unwrap_or(true),
                if_generation_match: None,
            })
        }
    };
    Ok(SendMessageRequest {
        tenant: None,
        message,
        configuration,
        metadata: opt_obj(o, "metadata", at)?,
    })
}

/// Writes a v1.0 `SendMessage` request as v0.3 `message/send` params.
pub fn encode_send_params(r: &SendMessageRequest) -> Value {
    let mut o = Obj::new();
    o.insert("message".into(), encode_message(&r.message));
    let mut c = Obj::new();
    let cfg = r.configuration.clone().unwrap_or_default();
    put_list(&mut c, "acceptedOutputModes", &cfg.accepted_output_modes);
    put(&mut c, "historyLength", cfg.history_length);
    put(
        &mut c,
        "pushNotificationConfig",
        cfg.task_push_notification_config
            .as_ref()
            .map(encode_inner_push_config),
    );
    c.insert("blocking".into(), (!cfg.return_immediately).into());
    o.insert("configuration".into(), Value::Object(c));
    put(&mut o, "metadata", r.metadata.clone().map(Value::Object));
    Value::Object(o)
}

/// Reads v0.3 `tasks/get` params.
pub fn decode_get_task_params(params: &Value) -> Result<GetTaskRequest, Error> {
    let o = params_obj(params)?;
    Ok(GetTaskRequest {
        tenant: None,
        id: task_id_param(o)?,
        history_length: opt_i32(o, "historyLength", "params")?,
        current_generation: None,
    })
}

/// Writes `tasks/get` params: `{"id", "historyLength"}`.
pub fn encode_get_task_params(r: &GetTaskRequest) -> Value {
    let mut o = json!({"id": r.id.as_str()});
    if let Some(n) = r.history_length {
        o["historyLength"] = n.into();
    }
    o
}

/// Reads a v0.3 task result (`tasks/get`, `tasks/cancel`).
pub fn decode_task_result(v: &Value) -> Result<Task, Error> {
    decode_task(v, "result")
}

/// Reads v0.3 `tasks/cancel` params.
pub fn decode_cancel_params(params: &Value) -> Result<CancelTaskRequest, Error> {
    let o = params_obj(params)?;
    Ok(CancelTaskRequest {
        tenant: None,
        id: task_id_param(o)?,
        metadata: opt_obj(o, "metadata", "params")?,
    })
}

/// Writes `tasks/cancel` params: `{"id"}`.
pub fn encode_cancel_params(r: &CancelTaskRequest) -> Value {
    json!({"id": r.id.as_str()})
}

/// Reads v0.3 `tasks/resubscribe` params.
pub fn decode_subscribe_params(params: &Value) -> Result<SubscribeToTaskRequest, Error> {
    let o = params_obj(params)?;
    Ok(SubscribeToTaskRequest {
        tenant: None,
        id: task_id_param(o)?,
    })
}

/// Writes `tasks/resubscribe` params: `{"id"}`.
pub fn encode_subscribe_params(r: &SubscribeToTaskRequest) -> Value {
    json!({"id": r.id.as_str()})
}

/// Reads v0.3 `tasks/pushNotificationConfig/set` params.
pub fn decode_set_push_config_params(params: &Value) -> Result<TaskPushNotificationConfig, Error> {
    let empty = Value::Object(Obj::new());
    decode_push_config(if params.is_null() { &empty } else { params }, "params")
}

/// Reads a v0.3 push-config result (`…/set`, `…/get`).
pub fn decode_push_config_result(v: &Value) -> Result<TaskPushNotificationConfig, Error> {
    decode_push_config(v, "result")
}

/// Reads v0.3 `tasks/pushNotificationConfig/get` params. v0.3 lets the config id be omitted;
/// a2a-python then uses the task id.
pub fn decode_get_push_config_params(
    params: &Value,
) -> Result<GetTaskPushNotificationConfigRequest, Error> {
    let o = params_obj(params)?;
    let task_id = task_id_param(o)?;
    let config_id = opt_str(o, "pushNotificationConfigId", "params")?
        .unwrap_or_else(|| task_id.as_str().to_owned());
    Ok(GetTaskPushNotificationConfigRequest {
        tenant: None,
        task_id,
        id: config_id,
    })
}

/// Writes `tasks/pushNotificationConfig/get` params: `{"id", "pushNotificationConfigId"}`.
pub fn encode_get_push_config_params(r: &GetTaskPushNotificationConfigRequest) -> Value {
    json!({"id": r.task_id.as_str(), "pushNotificationConfigId": r.id})
}

/// Reads v0.3 `tasks/pushNotificationConfig/list` params.
pub fn decode_list_push_configs_params(
    params: &Value,
) -> Result<ListTaskPushNotificationConfigsRequest, Error> {
    let o = params_obj(params)?;
    Ok(ListTaskPushNotificationConfigsRequest {
        task_id: task_id_param(o)?,
        ..Default::default()
    })
}

/// Writes `tasks/pushNotificationConfig/list` params: `{"id"}` (v0.3 does not page).
pub fn encode_list_push_configs_params(r: &ListTaskPushNotificationConfigsRequest) -> Value {
    json!({"id": r.task_id.as_str()})
}

/// Writes a push-config list the v0.3 way: a bare array of configs.
pub fn encode_push_config_list(r: &ListTaskPushNotificationConfigsResponse) -> Value {
    Value::Array(r.configs.iter().map(encode_push_config).collect())
}

/// Reads a v0.3 push-config list (a bare array; anything else reads as no configs).
pub fn decode_push_config_list(
    v: &Value,
) -> Result<ListTaskPushNotificationConfigsResponse, Error> {
    let configs = match v.as_array() {
        Some(items) => items
            .iter()
            .map(|c| decode_push_config(c, "result"))
            .collect::<Result<Vec<_>, _>>()?,
        None => Vec::new(),
    };
    Ok(ListTaskPushNotificationConfigsResponse {
        configs,
        next_page_token: String::new(),
    })
}

/// Reads v0.3 `tasks/pushNotificationConfig/delete` params.
pub fn decode_delete_push_config_params(
    params: &Value,
) -> Result<DeleteTaskPushNotificationConfigRequest, Error> {
    let o = params_obj(params)?;
    Ok(DeleteTaskPushNotificationConfigRequest {
        tenant: None,
        task_id: task_id_param(o)?,
        id: req_str(o, "pushNotificationConfigId", "params")?,
    })
}

/// Writes `tasks/pushNotificationConfig/delete` params: `{"id", "pushNotificationConfigId"}`.
pub fn encode_delete_push_config_params(r: &DeleteTaskPushNotificationConfigRequest) -> Value {
    json!({"id": r.task_id.as_str(), "pushNotificationConfigId": r.id})
}

/// Writes the `…/delete` result: `null`.
pub fn encode_empty_result(_: &Empty) -> Value {
    Value::Null
}

/// Reads the `…/delete` result (whatever it is: v0.3 says `null`).
pub fn decode_empty_result(_: &Value) -> Result<Empty, Error> {
    Ok(Empty {})
}

/// Reads v0.3 `agent/getAuthenticatedExtendedCard` params (it has none).
pub fn decode_card_params(params: &Value) -> Result<GetExtendedAgentCardRequest, Error> {
    params_obj(params)?;
    Ok(GetExtendedAgentCardRequest::default())
}

/// Writes `agent/getAuthenticatedExtendedCard` params: `{}`.
pub fn encode_card_params(_: &GetExtendedAgentCardRequest) -> Value {
    Value::Object(Obj::new())
}

/// Reads the params of `ListTasks`, which has no v0.3 form: always MethodNotFound.
pub fn decode_list_tasks_params(_: &Value) -> Result<ListTasksRequest, Error> {
    Err(Error::new(
        crate::ErrorKind::MethodNotFound,
        "ListTasks has no v0.3 form",
    ))
}

/// `ListTasks` has no v0.3 form: its v1.0 JSON stands in (a v0.3 client never sends it, see
/// [`Method::v03_name`]).
pub fn encode_list_tasks_params(r: &ListTasksRequest) -> Value {
    serde_json::to_value(r).unwrap_or(Value::Null)
}

/// `ListTasks` has no v0.3 form: its v1.0 JSON stands in.
pub fn encode_list_tasks_result(r: &ListTasksResponse) -> Value {
    serde_json::to_value(r).unwrap_or(Value::Null)
}

/// `ListTasks` has no v0.3 form: its v1.0 JSON is read.
pub fn decode_list_tasks_result(v: &Value) -> Result<ListTasksResponse, Error> {
    serde::Deserialize::deserialize(v).map_err(|e| Error::invalid_params("result", e.to_string()))
}

// ---------------------------------------------------------------------------------------------
// Any operation

/// The typed v1.0 request of one operation.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
#[allow(clippy::large_enum_variant)] // short-lived: built once per request
pub enum Params {
    /// SendMessage or SendStreamingMessage.
    SendMessage(SendMessageRequest),
    /// GetTask.
    GetTask(GetTaskRequest),
    /// ListTasks.
    ListTasks(ListTasksRequest),
    /// CancelTask.
    CancelTask(CancelTaskRequest),
    /// SubscribeToTask.
    SubscribeToTask(SubscribeToTaskRequest),
    /// CreateTaskPushNotificationConfig.
    CreatePushConfig(TaskPushNotificationConfig),
    /// GetTaskPushNotificationConfig.
    GetPushConfig(GetTaskPushNotificationConfigRequest),
    /// ListTaskPushNotificationConfigs.
    ListPushConfigs(ListTaskPushNotificationConfigsRequest),
    /// DeleteTaskPushNotificationConfig.
    DeletePushConfig(DeleteTaskPushNotificationConfigRequest),
    /// GetExtendedAgentCard.
    GetExtendedAgentCard(GetExtendedAgentCardRequest),
}

macro_rules! params_from {
    ($($req:ty => $variant:ident),+ $(,)?) => {
        $(impl From<$req> for Params {
            fn from(r: $req) -> Self {
                Params::$variant(r)
            }
        })+
    };
}

params_from! {
    SendMessageRequest => SendMessage,
    GetTaskRequest => GetTask,
    ListTasksRequest => ListTasks,
    CancelTaskRequest => CancelTask,
    SubscribeToTaskRequest => SubscribeToTask,
    TaskPushNotificationConfig => CreatePushConfig,
    GetTaskPushNotificationConfigRequest => GetPushConfig,
    ListTaskPushNotificationConfigsRequest => ListPushConfigs,
    DeleteTaskPushNotificationConfigRequest => DeletePushConfig,
    GetExtendedAgentCardRequest => GetExtendedAgentCard,
}

/// Reads the v0.3 `params` of `method` into the v1.0 request, with the operation table's
/// decoder of that operation. `params` may be `Null` where the method takes none.
pub fn decode_params(method: Method, params: &Value) -> Result<Params, Error> {
    struct Decode<'a>(&'a Value);
    impl crate::operation::Visit for Decode<'_> {
        type Output = Result<Params, Error>;
        fn visit<O: crate::Operation>(self) -> Self::Output {
            O::decode_v03_params(self.0).map(Into::into)
        }
    }
    method.visit(Decode(params))
}
