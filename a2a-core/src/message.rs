//! Messages and their parts.

use crate::ids::{ContextId, MessageId, TaskId};
use crate::proto_enum::proto_enum;
use crate::serde_util::{empty_as_none, null_as_default, object_only, present};
use base64::Engine as _;
use serde::de::Error as _;
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// Free-form extension data (`google.protobuf.Struct`): a JSON object.
pub type Metadata = Map<String, Value>;

proto_enum! {
    /// Who sent a message.
    pub enum Role {
        /// Not set: invalid in a message.
        #[default]
        Unspecified = (0, "ROLE_UNSPECIFIED"),
        /// The client (a user, or an agent acting as a client).
        User = (1, "ROLE_USER"),
        /// The remote agent.
        Agent = (2, "ROLE_AGENT"),
    }
}

/// One unit of communication between a client and an agent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", remote = "Self")]
pub struct Message {
    /// Created by the sender; unique per message. REQUIRED.
    #[serde(default, alias = "message_id", deserialize_with = "null_as_default")]
    pub message_id: MessageId,
    /// The context this message belongs to.
    #[serde(
        default,
        alias = "context_id",
        deserialize_with = "empty_as_none",
        skip_serializing_if = "Option::is_none"
    )]
    pub context_id: Option<ContextId>,
    /// The task this message belongs to (a client sets it to continue a task).
    #[serde(
        default,
        alias = "task_id",
        deserialize_with = "empty_as_none",
        skip_serializing_if = "Option::is_none"
    )]
    pub task_id: Option<TaskId>,
    /// Who sent it. REQUIRED.
    #[serde(default)]
    pub role: Role,
    /// The content: at least one part. REQUIRED.
    #[serde(default, deserialize_with = "null_as_default")]
    pub parts: Vec<Part>,
    /// Extension data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// URIs of the extensions that contributed to this message.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub extensions: Vec<String>,
    /// Tasks this message refers to (follow-ups, refinements).
    #[serde(
        default,
        alias = "reference_task_ids",
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub reference_task_ids: Vec<TaskId>,
}

object_only!(Message);

impl Message {
    /// A message with a fresh random id and the given role and parts.
    pub fn new(role: Role, parts: impl IntoIterator<Item = Part>) -> Self {
        Self {
            message_id: MessageId::random(),
            context_id: None,
            task_id: None,
            role,
            parts: parts.into_iter().collect(),
            metadata: None,
            extensions: Vec::new(),
            reference_task_ids: Vec::new(),
        }
    }

    /// A user message holding one text part: `Message::user_text("hello")`.
    pub fn user_text(text: impl Into<String>) -> Self {
        Self::new(Role::User, [Part::text(text)])
    }

    /// An agent message holding one text part.
    pub fn agent_text(text: impl Into<String>) -> Self {
        Self::new(Role::Agent, [Part::text(text)])
    }

    /// Sets the task id (to continue an existing task).
    #[must_use]
    pub fn with_task_id(mut self, id: impl Into<TaskId>) -> Self {
        self.task_id = Some(id.into());
        self
    }

    /// Sets the context id.
    #[must_use]
    pub fn with_context_id(mut self, id: impl Into<ContextId>) -> Self {
        self.context_id = Some(id.into());
        self
    }

    /// Sets the message id.
    #[must_use]
    pub fn with_message_id(mut self, id: impl Into<MessageId>) -> Self {
        self.message_id = id.into();
        self
    }

    /// Sets the metadata.
    #[must_use]
    pub fn with_metadata(mut self, metadata: Metadata) -> Self {
        self.metadata = Some(metadata);
        self
    }

    /// Appends a part.
    #[must_use]
    pub fn with_part(mut self, part: Part) -> Self {
        self.parts.push(part);
        self
    }

    /// All text parts joined with newlines (empty if there are none).
    pub fn text(&self) -> String {
        join_text(&self.parts)
    }
}

/// Joins the text of every text part with `\n`.
pub(crate) fn join_text(parts: &[Part]) -> String {
    let mut out = String::new();
    for text in parts.iter().filter_map(Part::as_text) {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(text);
    }
    out
}

/// The content of a [`Part`]: exactly one of text, inline bytes, a URL, or structured data.
#[derive(Clone, Debug, PartialEq)]
pub enum PartContent {
    /// `{"text": "..."}`
    Text(String),
    /// `{"raw": "<base64>"}`: inline file bytes.
    Raw(Vec<u8>),
    /// `{"url": "..."}`: a reference to file content.
    Url(String),
    /// `{"data": <any JSON>}`: structured data.
    Data(Value),
}

impl PartContent {
    /// The wire key of this content (`text`, `raw`, `url` or `data`).
    pub fn key(&self) -> &'static str {
        match self {
            PartContent::Text(_) => "text",
            PartContent::Raw(_) => "raw",
            PartContent::Url(_) => "url",
            PartContent::Data(_) => "data",
        }
    }
}

/// A piece of content in a message or artifact. On the wire it is one flat object with exactly
/// one content key (`text`, `raw`, `url`, `data`) and optional `mediaType`, `filename`,
/// `metadata`. A part with no content or with two cannot be deserialized.
#[derive(Clone, Debug, PartialEq)]
pub struct Part {
    /// The content.
    pub content: PartContent,
    /// The media type of the content (e.g. `text/plain`, `image/png`).
    pub media_type: Option<String>,
    /// A file name for the content.
    pub filename: Option<String>,
    /// Extension data.
    pub metadata: Option<Metadata>,
}

impl Part {
    fn of(content: PartContent) -> Self {
        Self {
            content,
            media_type: None,
            filename: None,
            metadata: None,
        }
    }

    /// A text part.
    pub fn text(text: impl Into<String>) -> Self {
        Self::of(PartContent::Text(text.into()))
    }

    /// An inline file part (bytes, base64 on the wire).
    pub fn raw(bytes: impl Into<Vec<u8>>) -> Self {
        Self::of(PartContent::Raw(bytes.into()))
    }

    /// A file reference part.
    pub fn url(url: impl Into<String>) -> Self {
        Self::of(PartContent::Url(url.into()))
    }

    /// A structured data part (any JSON value).
    pub fn data(data: impl Into<Value>) -> Self {
        Self::of(PartContent::Data(data.into()))
    }

    /// Sets the media type.
    #[must_use]
    pub fn with_media_type(mut self, media_type: impl Into<String>) -> Self {
        self.media_type = Some(media_type.into());
        self
    }

    /// Sets the file name.
    #[must_use]
    pub fn with_filename(mut self, filename: impl Into<String>) -> Self {
        self.filename = Some(filename.into());
        self
    }

    /// Sets the metadata.
    #[must_use]
    pub fn with_metadata(mut self, metadata: Metadata) -> Self {
        self.metadata = Some(metadata);
        self
    }

    /// The text, if this is a text part.
    pub fn as_text(&self) -> Option<&str> {
        match &self.content {
            PartContent::Text(t) => Some(t),
            _ => None,
        }
    }

    /// The structured data, if this is a data part.
    pub fn as_data(&self) -> Option<&Value> {
        match &self.content {
            PartContent::Data(v) => Some(v),
            _ => None,
        }
    }
}

/// Encodes bytes as ProtoJSON does: standard alphabet, padded.
pub(crate) fn encode_base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Decodes base64 in the standard or URL-safe alphabet, padded or not.
pub(crate) fn decode_base64(s: &str) -> Result<Vec<u8>, base64::DecodeError> {
    use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
    const CFG: GeneralPurposeConfig =
        GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent);
    const STD: GeneralPurpose = GeneralPurpose::new(&base64::alphabet::STANDARD, CFG);
    const URL: GeneralPurpose = GeneralPurpose::new(&base64::alphabet::URL_SAFE, CFG);
    if s.contains(['-', '_']) {
        URL.decode(s)
    } else {
        STD.decode(s)
    }
}

impl Serialize for Part {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let len = 1
            + usize::from(self.media_type.is_some())
            + usize::from(self.filename.is_some())
            + usize::from(self.metadata.is_some());
        let mut map = s.serialize_map(Some(len))?;
        match &self.content {
            PartContent::Text(t) => map.serialize_entry("text", t)?,
            PartContent::Raw(b) => map.serialize_entry("raw", &encode_base64(b))?,
            PartContent::Url(u) => map.serialize_entry("url", u)?,
            PartContent::Data(d) => map.serialize_entry("data", d)?,
        }
        // In the proto's field order, so that the protobuf encoding is the canonical one.
        if let Some(m) = &self.metadata {
            map.serialize_entry("metadata", m)?;
        }
        if let Some(f) = &self.filename {
            map.serialize_entry("filename", f)?;
        }
        if let Some(m) = &self.media_type {
            map.serialize_entry("mediaType", m)?;
        }
        map.end()
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PartWire {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    raw: Option<String>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default, deserialize_with = "present")]
    data: Option<Value>,
    #[serde(default, alias = "media_type", deserialize_with = "empty_as_none")]
    media_type: Option<String>,
    #[serde(default, deserialize_with = "empty_as_none")]
    filename: Option<String>,
    #[serde(default)]
    metadata: Option<Metadata>,
}

impl<'de> Deserialize<'de> for Part {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let w = PartWire::deserialize(d)?;
        let mut contents = Vec::with_capacity(1);
        if let Some(t) = w.text {
            contents.push(PartContent::Text(t));
        }
        if let Some(r) = w.raw {
            let bytes = decode_base64(&r)
                .map_err(|e| D::Error::custom(format!("part `raw` is not valid base64: {e}")))?;
            contents.push(PartContent::Raw(bytes));
        }
        if let Some(u) = w.url {
            contents.push(PartContent::Url(u));
        }
        if let Some(v) = w.data {
            contents.push(PartContent::Data(v));
        }
        if contents.len() != 1 {
            let keys: Vec<_> = contents.iter().map(PartContent::key).collect();
            return Err(D::Error::custom(if keys.is_empty() {
                "a part must have exactly one of `text`, `raw`, `url`, `data`; it has none"
                    .to_owned()
            } else {
                format!(
                    "a part must have exactly one of `text`, `raw`, `url`, `data`; it has {}",
                    keys.join(" and ")
                )
            }));
        }
        Ok(Part {
            content: contents.pop().expect("one content"),
            media_type: w.media_type,
            filename: w.filename,
            metadata: w.metadata,
        })
    }
}
