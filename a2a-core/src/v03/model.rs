//! The v1.0 model's objects in v0.3 JSON and back: parts, messages, artifacts, statuses and
//! tasks; send results and stream events; push-notification configs.

use super::*;

// ---------------------------------------------------------------------------------------------
// Parts, messages, artifacts, tasks

/// Writes a part as a v0.3 `TextPart`, `FilePart` or `DataPart`.
pub fn encode_part(part: &Part) -> Value {
    let mut o = Obj::new();
    let mut metadata = part.metadata.clone();
    match &part.content {
        PartContent::Text(t) => {
            o.insert("kind".into(), "text".into());
            o.insert("text".into(), t.clone().into());
        }
        PartContent::Raw(_) | PartContent::Url(_) => {
            let mut file = Obj::new();
            match &part.content {
                PartContent::Raw(b) => file.insert("bytes".into(), encode_base64(b).into()),
                PartContent::Url(u) => file.insert("uri".into(), u.clone().into()),
                _ => unreachable!("matched above"),
            };
            put(&mut file, "name", part.filename.clone());
            put(&mut file, "mimeType", part.media_type.clone());
            o.insert("kind".into(), "file".into());
            o.insert("file".into(), Value::Object(file));
        }
        PartContent::Data(d) => {
            o.insert("kind".into(), "data".into());
            let data = if d.is_object() {
                d.clone()
            } else {
                metadata
                    .get_or_insert_with(Metadata::new)
                    .insert(DATA_PART_COMPAT.into(), Value::Bool(true));
                json!({ "value": d })
            };
            o.insert("data".into(), data);
        }
    }
    put(&mut o, "metadata", metadata.map(Value::Object));
    Value::Object(o)
}

/// Reads a v0.3 part (`kind` = `text`, `file` or `data`). A part without `kind` is read by
/// which key it has.
pub fn decode_part(v: &Value, at: &str) -> Result<Part, Error> {
    let o = obj(v, at)?;
    let mut metadata = opt_obj(o, "metadata", at)?;
    let kind = match o.get("kind").and_then(Value::as_str) {
        Some(k) => k,
        None if o.contains_key("text") => "text",
        None if o.contains_key("file") => "file",
        None if o.contains_key("data") => "data",
        None => return Err(Error::invalid_params(&format!("{at}.kind"), "is required")),
    };
    let mut part = match kind {
        "text" => Part::text(
            content_str(o, "text", at)?
                .ok_or_else(|| Error::invalid_params(&format!("{at}.text"), "is required"))?,
        ),
        "file" => {
            let fat = format!("{at}.file");
            let file = obj(o.get("file").unwrap_or(&Value::Null), &fat)?;
            let mut part = match (
                content_str(file, "bytes", &fat)?,
                content_str(file, "uri", &fat)?,
            ) {
                (Some(b), None) => Part::raw(decode_base64(&b).map_err(|e| {
                    Error::invalid_params(
                        &format!("{fat}.bytes"),
                        format!("is not valid base64: {e}"),
                    )
                })?),
                (None, Some(u)) => Part::url(u),
                _ => {
                    return Err(Error::invalid_params(
                        &fat,
                        "must have exactly one of `bytes` and `uri`",
                    ));
                }
            };
            part.filename = opt_str(file, "name", &fat)?;
            part.media_type = opt_str(file, "mimeType", &fat)?;
            part
        }
        "data" => {
            let data = o
                .get("data")
                .cloned()
                .ok_or_else(|| Error::invalid_params(&format!("{at}.data"), "is required"))?;
            let flag = metadata.as_mut().and_then(|m| m.remove(DATA_PART_COMPAT));
            let compat = flag == Some(Value::Bool(true));
            // Drop the metadata only if the flag was all it held.
            if flag.is_some() && metadata.as_ref().is_some_and(Map::is_empty) {
                metadata = None;
            }
            match data {
                Value::Object(mut m) if compat && m.len() == 1 && m.contains_key("value") => {
                    Part::data(m.remove("value").unwrap_or(Value::Null))
                }
                other => Part::data(other),
            }
        }
        other => {
            return Err(Error::invalid_params(
                &format!("{at}.kind"),
                format!("unknown part kind {other:?}"),
            ));
        }
    };
    part.metadata = metadata;
    Ok(part)
}

/// Writes a message in v0.3 form (`kind: "message"`, lowercase role).
pub fn encode_message(m: &Message) -> Value {
    let mut o = Obj::new();
    o.insert("kind".into(), "message".into());
    o.insert("messageId".into(), m.message_id.as_str().into());
    o.insert("role".into(), encode_role(&m.role).into());
    o.insert("parts".into(), m.parts.iter().map(encode_part).collect());
    put(
        &mut o,
        "contextId",
        m.context_id.as_ref().map(|c| c.as_str()),
    );
    put(&mut o, "taskId", m.task_id.as_ref().map(|t| t.as_str()));
    put(&mut o, "metadata", m.metadata.clone().map(Value::Object));
    put_list(&mut o, "extensions", &m.extensions);
    if !m.reference_task_ids.is_empty() {
        o.insert("referenceTaskIds".into(), json!(m.reference_task_ids));
    }
    Value::Object(o)
}

/// Reads a v0.3 message.
pub fn decode_message(v: &Value, at: &str) -> Result<Message, Error> {
    let o = obj(v, at)?;
    let parts = list(o, "parts", at)?
        .iter()
        .enumerate()
        .map(|(i, p)| decode_part(p, &format!("{at}.parts[{i}]")))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Message {
        message_id: MessageId::new(opt_str(o, "messageId", at)?.unwrap_or_default()),
        context_id: opt_str(o, "contextId", at)?.map(ContextId::new),
        task_id: opt_str(o, "taskId", at)?.map(TaskId::new),
        role: opt_str(o, "role", at)?.map_or(Role::Unspecified, |r| decode_role(&r)),
        parts,
        metadata: opt_obj(o, "metadata", at)?,
        extensions: str_list(o, "extensions", at)?,
        reference_task_ids: str_list(o, "referenceTaskIds", at)?
            .into_iter()
            .map(TaskId::new)
            .collect(),
    })
}

/// Writes an artifact in v0.3 form.
pub fn encode_artifact(a: &Artifact) -> Value {
    let mut o = Obj::new();
    o.insert("artifactId".into(), a.artifact_id.as_str().into());
    put(&mut o, "name", a.name.clone());
    put(&mut o, "description", a.description.clone());
    o.insert("parts".into(), a.parts.iter().map(encode_part).collect());
    put(&mut o, "metadata", a.metadata.clone().map(Value::Object));
    put_list(&mut o, "extensions", &a.extensions);
    Value::Object(o)
}

/// Reads a v0.3 artifact.
pub fn decode_artifact(v: &Value, at: &str) -> Result<Artifact, Error> {
    let o = obj(v, at)?;
    Ok(Artifact {
        artifact_id: ArtifactId::new(opt_str(o, "artifactId", at)?.unwrap_or_default()),
        name: opt_str(o, "name", at)?,
        description: opt_str(o, "description", at)?,
        parts: list(o, "parts", at)?
            .iter()
            .enumerate()
            .map(|(i, p)| decode_part(p, &format!("{at}.parts[{i}]")))
            .collect::<Result<_, _>>()?,
        metadata: opt_obj(o, "metadata", at)?,
        extensions: str_list(o, "extensions", at)?,
    })
}

/// Writes a task status in v0.3 form.
pub fn encode_status(s: &TaskStatus) -> Value {
    let mut o = Obj::new();
    o.insert("state".into(), encode_state(&s.state).into());
    put(&mut o, "message", s.message.as_deref().map(encode_message));
    put(&mut o, "timestamp", s.timestamp.map(|t| t.to_string()));
    Value::Object(o)
}

/// Reads a v0.3 task status.
pub fn decode_status(v: &Value, at: &str) -> Result<TaskStatus, Error> {
    let o = obj(v, at)?;
    let timestamp = match opt_str(o, "timestamp", at)? {
        Some(t) => Some(
            t.parse::<Timestamp>()
                .map_err(|e| Error::invalid_params(&format!("{at}.timestamp"), e.to_string()))?,
        ),
        None => None,
    };
    Ok(TaskStatus {
        state: opt_str(o, "state", at)?.map_or(TaskState::Unspecified, |s| decode_state(&s)),
        message: match o.get("message") {
            None | Some(Value::Null) => None,
            Some(m) => Some(Box::new(decode_message(m, &format!("{at}.message"))?)),
        },
        timestamp,
    })
}

/// Writes a task in v0.3 form (`kind: "task"`).
pub fn encode_task(t: &Task) -> Value {
    let mut o = Obj::new();
    o.insert("kind".into(), "task".into());
    o.insert("id".into(), t.id.as_str().into());
    o.insert("contextId".into(), t.context_id.as_str().into());
    o.insert("status".into(), encode_status(&t.status));
    if !t.artifacts.is_empty() {
        o.insert(
            "artifacts".into(),
            t.artifacts.iter().map(encode_artifact).collect(),
        );
    }
    if !t.history.is_empty() {
        o.insert(
            "history".into(),
            t.history.iter().map(encode_message).collect(),
        );
    }
    put(&mut o, "metadata", t.metadata.clone().map(Value::Object));
    Value::Object(o)
}

/// Reads a v0.3 task.
pub fn decode_task(v: &Value, at: &str) -> Result<Task, Error> {
    let o = obj(v, at)?;
    Ok(Task {
        id: TaskId::new(req_str(o, "id", at)?),
        context_id: ContextId::new(opt_str(o, "contextId", at)?.unwrap_or_default()),
        status: decode_status(
            o.get("status").unwrap_or(&Value::Null),
            &format!("{at}.status"),
        )?,
        artifacts: list(o, "artifacts", at)?
            .iter()
            .enumerate()
            .map(|(i, a)| decode_artifact(a, &format!("{at}.artifacts[{i}]")))
            .collect::<Result<_, _>>()?,
        history: list(o, "history", at)?
            .iter()
            .enumerate()
            .map(|(i, m)| decode_message(m, &format!("{at}.history[{i}]")))
            .collect::<Result<_, _>>()?,
        metadata: opt_obj(o, "metadata", at)?,
        generation: 0,
    })
}

// ---------------------------------------------------------------------------------------------
// Events and results

/// Writes a `SendMessage` result the v0.3 way: a bare task or message with `kind`.
pub fn encode_send_response(r: &SendMessageResponse) -> Value {
    match r {
        SendMessageResponse::Task(t) => encode_task(t),
        SendMessageResponse::Message(m) => encode_message(m),
    }
}

/// Reads a v0.3 `message/send` result (a bare task or message).
pub fn decode_send_response(v: &Value) -> Result<SendMessageResponse, Error> {
    match decode_stream_event(v)? {
        StreamResponse::Task(t) => Ok(SendMessageResponse::Task(t)),
        StreamResponse::Message(m) => Ok(SendMessageResponse::Message(m)),
        _ => Err(Error::invalid_params(
            "result.kind",
            "must be `task` or `message`",
        )),
    }
}

/// Writes a stream event the v0.3 way. A status update carries the REQUIRED `final` flag, true
/// when the event ends the stream (a terminal or interrupted state).
pub fn encode_stream_event(e: &StreamResponse) -> Value {
    match e {
        StreamResponse::Task(t) => encode_task(t),
        StreamResponse::Message(m) => encode_message(m),
        StreamResponse::StatusUpdate(s) => {
            let mut o = Obj::new();
            o.insert("kind".into(), "status-update".into());
            o.insert("taskId".into(), s.task_id.as_str().into());
            o.insert("contextId".into(), s.context_id.as_str().into());
            o.insert("status".into(), encode_status(&s.status));
            o.insert("final".into(), e.ends_stream().into());
            put(&mut o, "metadata", s.metadata.clone().map(Value::Object));
            Value::Object(o)
        }
        StreamResponse::ArtifactUpdate(a) => {
            let mut o = Obj::new();
            o.insert("kind".into(), "artifact-update".into());
            o.insert("taskId".into(), a.task_id.as_str().into());
            o.insert("contextId".into(), a.context_id.as_str().into());
            o.insert("artifact".into(), encode_artifact(&a.artifact));
            if a.append {
                o.insert("append".into(), true.into());
            }
            if a.last_chunk {
                o.insert("lastChunk".into(), true.into());
            }
            put(&mut o, "metadata", a.metadata.clone().map(Value::Object));
            Value::Object(o)
        }
    }
}

/// Reads a v0.3 stream event (by its `kind`). The `final` flag is dropped (v1.0 ends a stream by
/// closing it).
pub fn decode_stream_event(v: &Value) -> Result<StreamResponse, Error> {
    let at = "result";
    let o = obj(v, at)?;
    let kind = req_str(o, "kind", at)?;
    Ok(match kind.as_str() {
        "task" => StreamResponse::Task(decode_task(v, at)?),
        "message" => StreamResponse::Message(decode_message(v, at)?),
        "status-update" => StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: TaskId::new(req_str(o, "taskId", at)?),
            context_id: ContextId::new(opt_str(o, "contextId", at)?.unwrap_or_default()),
            status: decode_status(o.get("status").unwrap_or(&Value::Null), "result.status")?,
            metadata: opt_obj(o, "metadata", at)?,
            generation: 0,
        }),
        "artifact-update" => StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
            task_id: TaskId::new(req_str(o, "taskId", at)?),
            context_id: ContextId::new(opt_str(o, "contextId", at)?.unwrap_or_default()),
            artifact: decode_artifact(
                o.get("artifact").unwrap_or(&Value::Null),
                "result.artifact",
            )?,
            append: opt_bool(o, "append", at)?.unwrap_or(false),
            last_chunk: opt_bool(o, "lastChunk", at)?.unwrap_or(false),
            metadata: opt_obj(o, "metadata", at)?,
            generation: 0,
        }),
        other => {
            return Err(Error::invalid_params(
                "result.kind",
                format!("unknown event kind {other:?}"),
            ));
        }
    })
}

// ---------------------------------------------------------------------------------------------
// Push-notification configs

/// Writes a push config in v0.3's nested form:
/// `{"taskId", "pushNotificationConfig": {"id", "url", "token", "authentication": {"schemes", "credentials"}}}`.
pub fn encode_push_config(c: &TaskPushNotificationConfig) -> Value {
    json!({
        "taskId": c.task_id.as_ref().map_or("", |t| t.as_str()),
        "pushNotificationConfig": encode_inner_push_config(c),
    })
}

pub(super) fn encode_inner_push_config(c: &TaskPushNotificationConfig) -> Value {
    let mut inner = Obj::new();
    put(&mut inner, "id", c.id.clone());
    inner.insert("url".into(), c.url.clone().into());
    put(&mut inner, "token", c.token.clone());
    if let Some(a) = &c.authentication {
        let mut auth = Obj::new();
        auth.insert("schemes".into(), json!([a.scheme]));
        put(&mut auth, "credentials", a.credentials.clone());
        inner.insert("authentication".into(), Value::Object(auth));
    }
    Value::Object(inner)
}

/// Reads a v0.3 `PushNotificationConfig` (the inner object: `id`, `url`, `token`,
/// `authentication.schemes[0]`).
pub fn decode_inner_push_config(v: &Value, at: &str) -> Result<TaskPushNotificationConfig, Error> {
    let o = obj(v, at)?;
    let authentication = match o.get("authentication") {
        None | Some(Value::Null) => None,
        Some(a) => {
            let aat = format!("{at}.authentication");
            let ao = obj(a, &aat)?;
            let schemes = str_list(ao, "schemes", &aat)?;
            Some(AuthenticationInfo {
                scheme: schemes.into_iter().next().ok_or_else(|| {
                    Error::invalid_params(&format!("{aat}.schemes"), "must not be empty")
                })?,
                credentials: opt_str(ao, "credentials", &aat)?,
            })
        }
    };
    Ok(TaskPushNotificationConfig {
        tenant: None,
        id: opt_str(o, "id", at)?,
        task_id: None,
        url: req_str(o, "url", at)?,
        token: opt_str(o, "token", at)?,
        authentication,
    })
}

/// Reads a v0.3 `TaskPushNotificationConfig` (`{"taskId", "pushNotificationConfig": {…}}`).
pub fn decode_push_config(v: &Value, at: &str) -> Result<TaskPushNotificationConfig, Error> {
    let o = obj(v, at)?;
    let inner_at = format!("{at}.pushNotificationConfig");
    let inner = o
        .get("pushNotificationConfig")
        .ok_or_else(|| Error::invalid_params(&inner_at, "is required"))?;
    let mut c = decode_inner_push_config(inner, &inner_at)?;
    c.task_id = Some(TaskId::new(req_str(o, "taskId", at)?));
    Ok(c)
}
