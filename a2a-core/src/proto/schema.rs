//! The messages of `lf.a2a.v1` (and the few `google.rpc` ones errors carry), written from the
//! spec's `a2a.proto`: each field's number, its ProtoJSON name, its type and its presence. The
//! codec walks these tables; nothing else in the crate knows a field number.

/// A protobuf message type.
#[derive(Debug)]
pub struct MessageType {
    /// The fully-qualified name, e.g. `lf.a2a.v1.Task`.
    pub name: &'static str,
    /// The fields, in the order their ProtoJSON names are presented when decoding.
    pub fields: &'static [Field],
}

/// One field of a message.
#[derive(Debug)]
pub struct Field {
    /// The field number.
    pub number: u32,
    /// The ProtoJSON (lowerCamelCase) name.
    pub json: &'static str,
    /// The type.
    pub kind: Kind,
    /// Presence and cardinality.
    pub presence: Presence,
}

/// A field's type. `google.protobuf.Struct`, `Value` and `Timestamp` have their own kinds
/// because ProtoJSON writes them as plain JSON objects, values and RFC 3339 strings.
#[derive(Clone, Copy, Debug)]
pub enum Kind {
    /// `string`
    String,
    /// `bytes` (base64 in JSON)
    Bytes,
    /// `bool`
    Bool,
    /// `int32`
    Int32,
    /// `int64` (a decimal string in ProtoJSON)
    Int64,
    /// An enum, written by name in JSON.
    Enum(&'static EnumType),
    /// A message.
    Message(&'static MessageType),
    /// `google.protobuf.Struct`: a JSON object.
    Struct,
    /// `google.protobuf.Value`: any JSON value.
    Value,
    /// `google.protobuf.Timestamp`: an RFC 3339 string.
    Timestamp,
    /// `map<string, V>`: a JSON object.
    Map(&'static Kind),
}

/// Presence and cardinality of a field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Presence {
    /// A proto3 scalar without `optional`: its default (`""`, `0`, `false`, the enum's 0) is
    /// not written, and an absent one is absent in JSON.
    Implicit,
    /// Like [`Presence::Implicit`] on the wire, but REQUIRED by the spec: an absent string,
    /// number or boolean reads as its default, which ProtoJSON writes.
    Required,
    /// `optional`, a oneof member, or a message: written whenever set, even at its default.
    Explicit,
    /// `repeated` (REQUIRED repeated fields read as `[]` when absent).
    Repeated,
    /// `repeated`, REQUIRED: read as `[]` when absent.
    RepeatedRequired,
}

/// An enum type: its values by number and name.
#[derive(Debug)]
pub struct EnumType {
    /// The fully-qualified name.
    pub name: &'static str,
    /// `(number, name)` pairs.
    pub values: &'static [(i32, &'static str)],
}

impl EnumType {
    /// The name of `number`.
    pub fn name_of(&self, number: i32) -> Option<&'static str> {
        self.values
            .iter()
            .find(|(n, _)| *n == number)
            .map(|(_, name)| *name)
    }

    /// The number of `name`.
    pub fn number_of(&self, name: &str) -> Option<i32> {
        self.values
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(number, _)| *number)
    }
}

impl MessageType {
    /// The field with ProtoJSON name `json`.
    pub fn field(&self, json: &str) -> Option<&'static Field>
    where
        Self: 'static,
    {
        self.fields.iter().find(|f| f.json == json)
    }

    /// The index of the field named `json`, looked for from index `from` on (then from the
    /// start): a type that writes its fields in the proto's order finds each at once.
    pub(crate) fn position_from(&self, json: &str, from: usize) -> Option<usize> {
        let n = self.fields.len();
        (from.min(n)..n)
            .chain(0..from.min(n))
            .find(|&i| self.fields[i].json == json)
    }
}

use Kind::{Bool, Bytes, Int32, Int64, Map, Struct, Timestamp, Value};
use Presence::{Explicit, Implicit, Repeated, RepeatedRequired, Required};

/// One message type: `message!(TASK = "lf.a2a.v1.Task" { 1 "id" String Required, … })`.
macro_rules! message {
    ($(#[$doc:meta])* $name:ident = $full:literal { $($number:literal $json:literal $kind:expr, $presence:ident;)* }) => {
        $(#[$doc])*
        pub static $name: MessageType = MessageType {
            name: $full,
            fields: &[$(Field { number: $number, json: $json, kind: $kind, presence: $presence }),*],
        };
    };
}

const STRING: Kind = Kind::String;

const fn msg(ty: &'static MessageType) -> Kind {
    Kind::Message(ty)
}

/// `lf.a2a.v1.TaskState`.
pub static TASK_STATE: EnumType = EnumType {
    name: "lf.a2a.v1.TaskState",
    values: &[
        (0, "TASK_STATE_UNSPECIFIED"),
        (1, "TASK_STATE_SUBMITTED"),
        (2, "TASK_STATE_WORKING"),
        (3, "TASK_STATE_COMPLETED"),
        (4, "TASK_STATE_FAILED"),
        (5, "TASK_STATE_CANCELED"),
        (6, "TASK_STATE_INPUT_REQUIRED"),
        (7, "TASK_STATE_REJECTED"),
        (8, "TASK_STATE_AUTH_REQUIRED"),
    ],
};

/// `lf.a2a.v1.Role`.
pub static ROLE: EnumType = EnumType {
    name: "lf.a2a.v1.Role",
    values: &[(0, "ROLE_UNSPECIFIED"), (1, "ROLE_USER"), (2, "ROLE_AGENT")],
};

message!(
    /// `lf.a2a.v1.SendMessageConfiguration`
    SEND_MESSAGE_CONFIGURATION = "lf.a2a.v1.SendMessageConfiguration" {
    1 "acceptedOutputModes" STRING, Repeated;
    2 "taskPushNotificationConfig" msg(&TASK_PUSH_NOTIFICATION_CONFIG), Explicit;
    3 "historyLength" Int32, Explicit;
    4 "returnImmediately" Bool, Implicit;
    5 "ifGenerationMatch" Int64, Explicit;
});

message!(
    /// `lf.a2a.v1.Task`
    TASK = "lf.a2a.v1.Task" {
    1 "id" STRING, Required;
    2 "contextId" STRING, Required;
    3 "status" msg(&TASK_STATUS), Explicit;
    4 "artifacts" msg(&ARTIFACT), Repeated;
    5 "history" msg(&MESSAGE), Repeated;
    6 "metadata" Struct, Explicit;
    7 "generation" Int64, Implicit;
});

message!(
    /// `lf.a2a.v1.TaskStatus`
    TASK_STATUS = "lf.a2a.v1.TaskStatus" {
    1 "state" Kind::Enum(&TASK_STATE), Implicit;
    2 "message" msg(&MESSAGE), Explicit;
    3 "timestamp" Timestamp, Explicit;
});

message!(
    /// `lf.a2a.v1.Part` (its content is the oneof `text`, `raw`, `url`, `data`)
    PART = "lf.a2a.v1.Part" {
    1 "text" STRING, Explicit;
    2 "raw" Bytes, Explicit;
    3 "url" STRING, Explicit;
    4 "data" Value, Explicit;
    5 "metadata" Struct, Explicit;
    6 "filename" STRING, Implicit;
    7 "mediaType" STRING, Implicit;
});

message!(
    /// `lf.a2a.v1.Message`
    MESSAGE = "lf.a2a.v1.Message" {
    1 "messageId" STRING, Required;
    2 "contextId" STRING, Implicit;
    3 "taskId" STRING, Implicit;
    4 "role" Kind::Enum(&ROLE), Implicit;
    5 "parts" msg(&PART), RepeatedRequired;
    6 "metadata" Struct, Explicit;
    7 "extensions" STRING, Repeated;
    8 "referenceTaskIds" STRING, Repeated;
});

message!(
    /// `lf.a2a.v1.Artifact`
    ARTIFACT = "lf.a2a.v1.Artifact" {
    1 "artifactId" STRING, Required;
    2 "name" STRING, Implicit;
    3 "description" STRING, Implicit;
    4 "parts" msg(&PART), RepeatedRequired;
    5 "metadata" Struct, Explicit;
    6 "extensions" STRING, Repeated;
});

message!(
    /// `lf.a2a.v1.TaskStatusUpdateEvent`
    TASK_STATUS_UPDATE_EVENT = "lf.a2a.v1.TaskStatusUpdateEvent" {
    1 "taskId" STRING, Required;
    2 "contextId" STRING, Required;
    3 "status" msg(&TASK_STATUS), Explicit;
    4 "metadata" Struct, Explicit;
    5 "generation" Int64, Implicit;
});

message!(
    /// `lf.a2a.v1.TaskArtifactUpdateEvent`
    TASK_ARTIFACT_UPDATE_EVENT = "lf.a2a.v1.TaskArtifactUpdateEvent" {
    1 "taskId" STRING, Required;
    2 "contextId" STRING, Required;
    3 "artifact" msg(&ARTIFACT), Explicit;
    4 "append" Bool, Implicit;
    5 "lastChunk" Bool, Implicit;
    6 "metadata" Struct, Explicit;
    7 "generation" Int64, Implicit;
});

message!(
    /// `lf.a2a.v1.AuthenticationInfo`
    AUTHENTICATION_INFO = "lf.a2a.v1.AuthenticationInfo" {
    1 "scheme" STRING, Required;
    2 "credentials" STRING, Implicit;
});

message!(
    /// `lf.a2a.v1.AgentInterface`
    AGENT_INTERFACE = "lf.a2a.v1.AgentInterface" {
    1 "url" STRING, Required;
    2 "protocolBinding" STRING, Required;
    3 "tenant" STRING, Implicit;
    4 "protocolVersion" STRING, Required;
});

message!(
    /// `lf.a2a.v1.AgentCard`
    AGENT_CARD = "lf.a2a.v1.AgentCard" {
    1 "name" STRING, Required;
    2 "description" STRING, Required;
    3 "supportedInterfaces" msg(&AGENT_INTERFACE), RepeatedRequired;
    4 "provider" msg(&AGENT_PROVIDER), Explicit;
    5 "version" STRING, Required;
    6 "documentationUrl" STRING, Explicit;
    7 "capabilities" msg(&AGENT_CAPABILITIES), Explicit;
    8 "securitySchemes" Map(&msg(&SECURITY_SCHEME)), Repeated;
    9 "securityRequirements" msg(&SECURITY_REQUIREMENT), Repeated;
    10 "defaultInputModes" STRING, RepeatedRequired;
    11 "defaultOutputModes" STRING, RepeatedRequired;
    12 "skills" msg(&AGENT_SKILL), RepeatedRequired;
    13 "signatures" msg(&AGENT_CARD_SIGNATURE), Repeated;
    14 "iconUrl" STRING, Explicit;
});

message!(
    /// `lf.a2a.v1.AgentProvider`
    AGENT_PROVIDER = "lf.a2a.v1.AgentProvider" {
    1 "url" STRING, Required;
    2 "organization" STRING, Required;
});

message!(
    /// `lf.a2a.v1.AgentCapabilities`
    AGENT_CAPABILITIES = "lf.a2a.v1.AgentCapabilities" {
    1 "streaming" Bool, Explicit;
    2 "pushNotifications" Bool, Explicit;
    3 "extensions" msg(&AGENT_EXTENSION), Repeated;
    4 "extendedAgentCard" Bool, Explicit;
});

message!(
    /// `lf.a2a.v1.AgentExtension`
    AGENT_EXTENSION = "lf.a2a.v1.AgentExtension" {
    1 "uri" STRING, Implicit;
    2 "description" STRING, Implicit;
    3 "required" Bool, Implicit;
    4 "params" Struct, Explicit;
});

message!(
    /// `lf.a2a.v1.AgentSkill`
    AGENT_SKILL = "lf.a2a.v1.AgentSkill" {
    1 "id" STRING, Required;
    2 "name" STRING, Required;
    3 "description" STRING, Required;
    4 "tags" STRING, RepeatedRequired;
    5 "examples" STRING, Repeated;
    6 "inputModes" STRING, Repeated;
    7 "outputModes" STRING, Repeated;
    8 "securityRequirements" msg(&SECURITY_REQUIREMENT), Repeated;
});

message!(
    /// `lf.a2a.v1.AgentCardSignature`
    AGENT_CARD_SIGNATURE = "lf.a2a.v1.AgentCardSignature" {
    1 "protected" STRING, Required;
    2 "signature" STRING, Required;
    3 "header" Struct, Explicit;
});

message!(
    /// `lf.a2a.v1.TaskPushNotificationConfig`
    TASK_PUSH_NOTIFICATION_CONFIG = "lf.a2a.v1.TaskPushNotificationConfig" {
    1 "tenant" STRING, Implicit;
    2 "id" STRING, Implicit;
    3 "taskId" STRING, Implicit;
    4 "url" STRING, Required;
    5 "token" STRING, Implicit;
    6 "authentication" msg(&AUTHENTICATION_INFO), Explicit;
});

message!(
    /// `lf.a2a.v1.StringList`
    STRING_LIST = "lf.a2a.v1.StringList" {
    1 "list" STRING, RepeatedRequired;
});

message!(
    /// `lf.a2a.v1.SecurityRequirement`
    SECURITY_REQUIREMENT = "lf.a2a.v1.SecurityRequirement" {
    1 "schemes" Map(&msg(&STRING_LIST)), Repeated;
});

message!(
    /// `lf.a2a.v1.SecurityScheme` (a oneof)
    SECURITY_SCHEME = "lf.a2a.v1.SecurityScheme" {
    1 "apiKeySecurityScheme" msg(&API_KEY_SECURITY_SCHEME), Explicit;
    2 "httpAuthSecurityScheme" msg(&HTTP_AUTH_SECURITY_SCHEME), Explicit;
    3 "oauth2SecurityScheme" msg(&OAUTH2_SECURITY_SCHEME), Explicit;
    4 "openIdConnectSecurityScheme" msg(&OPEN_ID_CONNECT_SECURITY_SCHEME), Explicit;
    5 "mtlsSecurityScheme" msg(&MUTUAL_TLS_SECURITY_SCHEME), Explicit;
});

message!(
    /// `lf.a2a.v1.APIKeySecurityScheme`
    API_KEY_SECURITY_SCHEME = "lf.a2a.v1.APIKeySecurityScheme" {
    1 "description" STRING, Implicit;
    2 "location" STRING, Required;
    3 "name" STRING, Required;
});

message!(
    /// `lf.a2a.v1.HTTPAuthSecurityScheme`
    HTTP_AUTH_SECURITY_SCHEME = "lf.a2a.v1.HTTPAuthSecurityScheme" {
    1 "description" STRING, Implicit;
    2 "scheme" STRING, Required;
    3 "bearerFormat" STRING, Implicit;
});

message!(
    /// `lf.a2a.v1.OAuth2SecurityScheme`
    OAUTH2_SECURITY_SCHEME = "lf.a2a.v1.OAuth2SecurityScheme" {
    1 "description" STRING, Implicit;
    2 "flows" msg(&OAUTH_FLOWS), Explicit;
    3 "oauth2MetadataUrl" STRING, Implicit;
});

message!(
    /// `lf.a2a.v1.OpenIdConnectSecurityScheme`
    OPEN_ID_CONNECT_SECURITY_SCHEME = "lf.a2a.v1.OpenIdConnectSecurityScheme" {
    1 "description" STRING, Implicit;
    2 "openIdConnectUrl" STRING, Required;
});

message!(
    /// `lf.a2a.v1.MutualTlsSecurityScheme`
    MUTUAL_TLS_SECURITY_SCHEME = "lf.a2a.v1.MutualTlsSecurityScheme" {
    1 "description" STRING, Implicit;
});

message!(
    /// `lf.a2a.v1.OAuthFlows` (a oneof)
    OAUTH_FLOWS = "lf.a2a.v1.OAuthFlows" {
    1 "authorizationCode" msg(&AUTHORIZATION_CODE_OAUTH_FLOW), Explicit;
    2 "clientCredentials" msg(&CLIENT_CREDENTIALS_OAUTH_FLOW), Explicit;
    3 "implicit" msg(&IMPLICIT_OAUTH_FLOW), Explicit;
    4 "password" msg(&PASSWORD_OAUTH_FLOW), Explicit;
    5 "deviceCode" msg(&DEVICE_CODE_OAUTH_FLOW), Explicit;
});

const SCOPES: Kind = Map(&STRING);

message!(
    /// `lf.a2a.v1.AuthorizationCodeOAuthFlow`
    AUTHORIZATION_CODE_OAUTH_FLOW = "lf.a2a.v1.AuthorizationCodeOAuthFlow" {
    1 "authorizationUrl" STRING, Required;
    2 "tokenUrl" STRING, Required;
    3 "refreshUrl" STRING, Implicit;
    4 "scopes" SCOPES, RepeatedRequired;
    5 "pkceRequired" Bool, Implicit;
});

message!(
    /// `lf.a2a.v1.ClientCredentialsOAuthFlow`
    CLIENT_CREDENTIALS_OAUTH_FLOW = "lf.a2a.v1.ClientCredentialsOAuthFlow" {
    1 "tokenUrl" STRING, Required;
    2 "refreshUrl" STRING, Implicit;
    3 "scopes" SCOPES, RepeatedRequired;
});

message!(
    /// `lf.a2a.v1.ImplicitOAuthFlow`
    IMPLICIT_OAUTH_FLOW = "lf.a2a.v1.ImplicitOAuthFlow" {
    1 "authorizationUrl" STRING, Implicit;
    2 "refreshUrl" STRING, Implicit;
    3 "scopes" SCOPES, Repeated;
});

message!(
    /// `lf.a2a.v1.PasswordOAuthFlow`
    PASSWORD_OAUTH_FLOW = "lf.a2a.v1.PasswordOAuthFlow" {
    1 "tokenUrl" STRING, Implicit;
    2 "refreshUrl" STRING, Implicit;
    3 "scopes" SCOPES, Repeated;
});

message!(
    /// `lf.a2a.v1.DeviceCodeOAuthFlow`
    DEVICE_CODE_OAUTH_FLOW = "lf.a2a.v1.DeviceCodeOAuthFlow" {
    1 "deviceAuthorizationUrl" STRING, Required;
    2 "tokenUrl" STRING, Required;
    3 "refreshUrl" STRING, Implicit;
    4 "scopes" SCOPES, RepeatedRequired;
});

message!(
    /// `lf.a2a.v1.SendMessageRequest`
    SEND_MESSAGE_REQUEST = "lf.a2a.v1.SendMessageRequest" {
    1 "tenant" STRING, Implicit;
    2 "message" msg(&MESSAGE), Explicit;
    3 "configuration" msg(&SEND_MESSAGE_CONFIGURATION), Explicit;
    4 "metadata" Struct, Explicit;
});

message!(
    /// `lf.a2a.v1.GetTaskRequest`
    GET_TASK_REQUEST = "lf.a2a.v1.GetTaskRequest" {
    1 "tenant" STRING, Implicit;
    2 "id" STRING, Required;
    3 "historyLength" Int32, Explicit;
    4 "currentGeneration" Int64, Explicit;
});

message!(
    /// `lf.a2a.v1.ListTasksRequest`
    LIST_TASKS_REQUEST = "lf.a2a.v1.ListTasksRequest" {
    1 "tenant" STRING, Implicit;
    2 "contextId" STRING, Implicit;
    3 "status" Kind::Enum(&TASK_STATE), Implicit;
    4 "pageSize" Int32, Explicit;
    5 "pageToken" STRING, Implicit;
    6 "historyLength" Int32, Explicit;
    7 "statusTimestampAfter" Timestamp, Explicit;
    8 "includeArtifacts" Bool, Explicit;
});

message!(
    /// `lf.a2a.v1.ListTasksResponse`
    LIST_TASKS_RESPONSE = "lf.a2a.v1.ListTasksResponse" {
    1 "tasks" msg(&TASK), RepeatedRequired;
    2 "nextPageToken" STRING, Required;
    3 "pageSize" Int32, Required;
    4 "totalSize" Int32, Required;
});

message!(
    /// `lf.a2a.v1.CancelTaskRequest`
    CANCEL_TASK_REQUEST = "lf.a2a.v1.CancelTaskRequest" {
    1 "tenant" STRING, Implicit;
    2 "id" STRING, Required;
    3 "metadata" Struct, Explicit;
});

message!(
    /// `lf.a2a.v1.GetTaskPushNotificationConfigRequest`
    GET_TASK_PUSH_NOTIFICATION_CONFIG_REQUEST = "lf.a2a.v1.GetTaskPushNotificationConfigRequest" {
    1 "tenant" STRING, Implicit;
    2 "taskId" STRING, Required;
    3 "id" STRING, Required;
});

message!(
    /// `lf.a2a.v1.DeleteTaskPushNotificationConfigRequest`
    DELETE_TASK_PUSH_NOTIFICATION_CONFIG_REQUEST = "lf.a2a.v1.DeleteTaskPushNotificationConfigRequest" {
    1 "tenant" STRING, Implicit;
    2 "taskId" STRING, Required;
    3 "id" STRING, Required;
});

message!(
    /// `lf.a2a.v1.SubscribeToTaskRequest`
    SUBSCRIBE_TO_TASK_REQUEST = "lf.a2a.v1.SubscribeToTaskRequest" {
    1 "tenant" STRING, Implicit;
    2 "id" STRING, Required;
});

message!(
    /// `lf.a2a.v1.ListTaskPushNotificationConfigsRequest`
    LIST_TASK_PUSH_NOTIFICATION_CONFIGS_REQUEST = "lf.a2a.v1.ListTaskPushNotificationConfigsRequest" {
    4 "tenant" STRING, Implicit;
    1 "taskId" STRING, Required;
    2 "pageSize" Int32, Implicit;
    3 "pageToken" STRING, Implicit;
});

message!(
    /// `lf.a2a.v1.GetExtendedAgentCardRequest`
    GET_EXTENDED_AGENT_CARD_REQUEST = "lf.a2a.v1.GetExtendedAgentCardRequest" {
    1 "tenant" STRING, Implicit;
});

message!(
    /// `lf.a2a.v1.SendMessageResponse` (a oneof)
    SEND_MESSAGE_RESPONSE = "lf.a2a.v1.SendMessageResponse" {
    1 "task" msg(&TASK), Explicit;
    2 "message" msg(&MESSAGE), Explicit;
});

message!(
    /// `lf.a2a.v1.StreamResponse` (a oneof)
    STREAM_RESPONSE = "lf.a2a.v1.StreamResponse" {
    1 "task" msg(&TASK), Explicit;
    2 "message" msg(&MESSAGE), Explicit;
    3 "statusUpdate" msg(&TASK_STATUS_UPDATE_EVENT), Explicit;
    4 "artifactUpdate" msg(&TASK_ARTIFACT_UPDATE_EVENT), Explicit;
});

message!(
    /// `lf.a2a.v1.ListTaskPushNotificationConfigsResponse`
    LIST_TASK_PUSH_NOTIFICATION_CONFIGS_RESPONSE = "lf.a2a.v1.ListTaskPushNotificationConfigsResponse" {
    1 "configs" msg(&TASK_PUSH_NOTIFICATION_CONFIG), Repeated;
    // Not REQUIRED in the proto, but always written in our JSON.
    2 "nextPageToken" STRING, Required;
});

message!(
    /// `google.protobuf.Empty`
    EMPTY = "google.protobuf.Empty" {});

message!(
    /// `google.rpc.ErrorInfo`
    ERROR_INFO = "google.rpc.ErrorInfo" {
    1 "reason" STRING, Implicit;
    2 "domain" STRING, Implicit;
    3 "metadata" Map(&STRING), Repeated;
});

message!(
    /// `google.rpc.BadRequest`
    BAD_REQUEST = "google.rpc.BadRequest" {
    1 "fieldViolations" msg(&FIELD_VIOLATION), Repeated;
});

message!(
    /// `google.rpc.BadRequest.FieldViolation`
    FIELD_VIOLATION = "google.rpc.BadRequest.FieldViolation" {
    1 "field" STRING, Implicit;
    2 "description" STRING, Implicit;
    3 "reason" STRING, Implicit;
});
