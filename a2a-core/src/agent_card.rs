//! The agent card (published at `/.well-known/agent-card.json`) and its parts, including the
//! security schemes.

use crate::message::Metadata;
use crate::serde_util::{empty_as_none, is_false, null_as_default};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

mod security;
pub use security::*;

/// Where an agent publishes its card (the same for every binding).
pub const AGENT_CARD_PATH: &str = "/.well-known/agent-card.json";
/// The card path of A2A 0.1–0.2: servers still publish the card there too, and clients try it
/// when the current one is missing.
pub const LEGACY_AGENT_CARD_PATH: &str = "/.well-known/agent.json";
/// The path prefix of the card and what belongs with it (the JWK set of its signing keys):
/// every other path is an A2A binding's.
pub const WELL_KNOWN_PREFIX: &str = "/.well-known/";

/// The protocol binding name of JSON-RPC 2.0 over HTTP.
pub const BINDING_JSONRPC: &str = "JSONRPC";
/// The protocol binding name of the HTTP+JSON (REST) binding.
pub const BINDING_HTTP_JSON: &str = "HTTP+JSON";
/// The protocol binding name of gRPC.
pub const BINDING_GRPC: &str = "GRPC";
/// The protocol version this crate implements.
pub const PROTOCOL_VERSION: &str = "1.0";
/// The older protocol version this crate translates to and from.
pub const PROTOCOL_VERSION_V03: &str = "0.3";
/// The protocol version that adds task generations (long-poll `GetTask`, `ifGenerationMatch`):
/// answers to a request of this version carry the `generation` fields, answers to a 1.0 one
/// do not.
pub const PROTOCOL_VERSION_1_1: &str = "1.1";

/// Whether a protocol version (`"1.1"`, an `A2A-Version` value or an interface's
/// `protocolVersion`) has task generations: 1.1 or a later 1.x.
///
/// ```
/// assert!(a2a_core::has_generations("1.1"));
/// assert!(a2a_core::has_generations("1.2"));
/// assert!(!a2a_core::has_generations("1.0"));
/// assert!(!a2a_core::has_generations("0.3"));
/// assert!(!a2a_core::has_generations("1"));
/// ```
pub fn has_generations(protocol_version: &str) -> bool {
    let mut parts = protocol_version.trim().splitn(3, '.');
    match (parts.next(), parts.next().map(str::parse::<u32>)) {
        (Some("1"), Some(Ok(minor))) => minor >= 1,
        _ => false,
    }
}

/// A self-describing manifest of an agent: who it is, where and how to reach it, what it can do.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCard {
    /// Human-readable name. REQUIRED.
    #[serde(default, deserialize_with = "null_as_default")]
    pub name: String,
    /// What the agent does. REQUIRED.
    #[serde(default, deserialize_with = "null_as_default")]
    pub description: String,
    /// Where and how to reach the agent, in order of preference. REQUIRED.
    #[serde(
        default,
        alias = "supported_interfaces",
        deserialize_with = "null_as_default"
    )]
    pub supported_interfaces: Vec<AgentInterface>,
    /// The organization behind the agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<AgentProvider>,
    /// The agent's own version (not the protocol's). REQUIRED.
    #[serde(default, deserialize_with = "null_as_default")]
    pub version: String,
    /// Documentation for the agent.
    #[serde(
        default,
        alias = "documentation_url",
        skip_serializing_if = "Option::is_none"
    )]
    pub documentation_url: Option<String>,
    /// Optional protocol features the agent supports. REQUIRED (may be `{}`).
    #[serde(default, deserialize_with = "null_as_default")]
    pub capabilities: AgentCapabilities,
    /// Security schemes by name.
    #[serde(
        default,
        alias = "security_schemes",
        deserialize_with = "null_as_default",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub security_schemes: BTreeMap<String, SecurityScheme>,
    /// Alternatives (OR) of scheme sets (AND) a caller must satisfy.
    #[serde(
        default,
        alias = "security_requirements",
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub security_requirements: Vec<SecurityRequirement>,
    /// Media types the agent accepts by default. REQUIRED.
    #[serde(
        default,
        alias = "default_input_modes",
        deserialize_with = "null_as_default"
    )]
    pub default_input_modes: Vec<String>,
    /// Media types the agent produces by default. REQUIRED.
    #[serde(
        default,
        alias = "default_output_modes",
        deserialize_with = "null_as_default"
    )]
    pub default_output_modes: Vec<String>,
    /// What the agent can do. REQUIRED (may be empty).
    #[serde(default, deserialize_with = "null_as_default")]
    pub skills: Vec<AgentSkill>,
    /// JWS signatures of the card.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub signatures: Vec<AgentCardSignature>,
    /// An icon for the agent.
    #[serde(default, alias = "icon_url", skip_serializing_if = "Option::is_none")]
    pub icon_url: Option<String>,
}

impl AgentCard {
    /// Starts building a card: `AgentCard::builder("Echo", "Repeats what you say")`.
    pub fn builder(name: impl Into<String>, description: impl Into<String>) -> AgentCardBuilder {
        AgentCardBuilder {
            card: AgentCard {
                name: name.into(),
                description: description.into(),
                version: "0.1.0".to_owned(),
                default_input_modes: vec!["text/plain".to_owned()],
                default_output_modes: vec!["text/plain".to_owned()],
                ..AgentCard::default()
            },
        }
    }

    /// The first interface of the given binding and protocol version.
    pub fn interface(&self, binding: &str, protocol_version: &str) -> Option<&AgentInterface> {
        self.supported_interfaces
            .iter()
            .find(|i| i.protocol_binding == binding && i.protocol_version == protocol_version)
    }

    /// Finds a skill by id.
    pub fn skill(&self, id: &str) -> Option<&AgentSkill> {
        self.skills.iter().find(|s| s.id == id)
    }
}

/// Builds an [`AgentCard`] with sensible defaults (version `0.1.0`, `text/plain` in and out).
#[derive(Debug, Clone)]
#[must_use]
pub struct AgentCardBuilder {
    card: AgentCard,
}

impl AgentCardBuilder {
    /// The agent's own version.
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.card.version = version.into();
        self
    }

    /// Adds an interface (binding + URL), protocol version 1.0.
    pub fn interface(mut self, binding: impl Into<String>, url: impl Into<String>) -> Self {
        self.card
            .supported_interfaces
            .push(AgentInterface::new(binding, url));
        self
    }

    /// The organization behind the agent.
    pub fn provider(mut self, organization: impl Into<String>, url: impl Into<String>) -> Self {
        self.card.provider = Some(AgentProvider {
            organization: organization.into(),
            url: url.into(),
        });
        self
    }

    /// Documentation URL.
    pub fn documentation_url(mut self, url: impl Into<String>) -> Self {
        self.card.documentation_url = Some(url.into());
        self
    }

    /// Icon URL.
    pub fn icon_url(mut self, url: impl Into<String>) -> Self {
        self.card.icon_url = Some(url.into());
        self
    }

    /// Declares streaming support.
    pub fn streaming(mut self, on: bool) -> Self {
        self.card.capabilities.streaming = Some(on);
        self
    }

    /// Declares push-notification support.
    pub fn push_notifications(mut self, on: bool) -> Self {
        self.card.capabilities.push_notifications = Some(on);
        self
    }

    /// Declares an extended agent card for authenticated callers.
    pub fn extended_agent_card(mut self, on: bool) -> Self {
        self.card.capabilities.extended_agent_card = Some(on);
        self
    }

    /// Declares a supported extension.
    pub fn extension(mut self, extension: AgentExtension) -> Self {
        self.card.capabilities.extensions.push(extension);
        self
    }

    /// Adds a skill.
    pub fn skill(mut self, skill: AgentSkill) -> Self {
        self.card.skills.push(skill);
        self
    }

    /// Replaces the default input media types.
    pub fn input_modes(mut self, modes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.card.default_input_modes = modes.into_iter().map(Into::into).collect();
        self
    }

    /// Replaces the default output media types.
    pub fn output_modes(mut self, modes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.card.default_output_modes = modes.into_iter().map(Into::into).collect();
        self
    }

    /// Adds a named security scheme.
    pub fn security_scheme(mut self, name: impl Into<String>, scheme: SecurityScheme) -> Self {
        self.card.security_schemes.insert(name.into(), scheme);
        self
    }

    /// Adds a security requirement (one alternative).
    pub fn security_requirement(mut self, requirement: SecurityRequirement) -> Self {
        self.card.security_requirements.push(requirement);
        self
    }

    /// The card.
    pub fn build(self) -> AgentCard {
        self.card
    }
}

/// One way to reach the agent: a URL, a protocol binding and a protocol version.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentInterface {
    /// Absolute URL (for gRPC `host:port`). REQUIRED.
    #[serde(default, deserialize_with = "null_as_default")]
    pub url: String,
    /// `JSONRPC`, `GRPC`, `HTTP+JSON`, or a URI for a custom binding. REQUIRED.
    #[serde(
        default,
        alias = "protocol_binding",
        deserialize_with = "null_as_default"
    )]
    pub protocol_binding: String,
    /// An opaque routing value that clients copy into every request to this interface.
    #[serde(
        default,
        deserialize_with = "empty_as_none",
        skip_serializing_if = "Option::is_none"
    )]
    pub tenant: Option<String>,
    /// `Major.Minor`, e.g. `1.0`. REQUIRED.
    #[serde(
        default,
        alias = "protocol_version",
        deserialize_with = "null_as_default"
    )]
    pub protocol_version: String,
}

impl AgentInterface {
    /// An interface of protocol version 1.0.
    pub fn new(binding: impl Into<String>, url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            protocol_binding: binding.into(),
            tenant: None,
            protocol_version: PROTOCOL_VERSION.to_owned(),
        }
    }

    /// Sets the protocol version.
    #[must_use]
    pub fn with_protocol_version(mut self, version: impl Into<String>) -> Self {
        self.protocol_version = version.into();
        self
    }

    /// Sets the tenant.
    #[must_use]
    pub fn with_tenant(mut self, tenant: impl Into<String>) -> Self {
        self.tenant = Some(tenant.into());
        self
    }
}

/// The organization behind an agent.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentProvider {
    /// The organization's URL. REQUIRED.
    #[serde(default, deserialize_with = "null_as_default")]
    pub url: String,
    /// The organization's name. REQUIRED.
    #[serde(default, deserialize_with = "null_as_default")]
    pub organization: String,
}

/// Optional protocol features an agent supports. Unset means "no".
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCapabilities {
    /// SendStreamingMessage and SubscribeToTask are available.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streaming: Option<bool>,
    /// The push-notification operations are available.
    #[serde(
        default,
        alias = "push_notifications",
        skip_serializing_if = "Option::is_none"
    )]
    pub push_notifications: Option<bool>,
    /// Protocol extensions the agent supports.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub extensions: Vec<AgentExtension>,
    /// GetExtendedAgentCard is available to authenticated callers.
    #[serde(
        default,
        alias = "extended_agent_card",
        skip_serializing_if = "Option::is_none"
    )]
    pub extended_agent_card: Option<bool>,
}

impl AgentCapabilities {
    /// Whether streaming is declared.
    pub fn streaming(&self) -> bool {
        self.streaming == Some(true)
    }

    /// Whether push notifications are declared.
    pub fn push_notifications(&self) -> bool {
        self.push_notifications == Some(true)
    }

    /// Whether the extended agent card is declared.
    pub fn extended_agent_card(&self) -> bool {
        self.extended_agent_card == Some(true)
    }
}

/// A protocol extension an agent supports.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AgentExtension {
    /// The extension's URI (it carries its version).
    #[serde(
        default,
        deserialize_with = "empty_as_none",
        skip_serializing_if = "Option::is_none"
    )]
    pub uri: Option<String>,
    /// What the extension is for.
    #[serde(
        default,
        deserialize_with = "empty_as_none",
        skip_serializing_if = "Option::is_none"
    )]
    pub description: Option<String>,
    /// Clients must request this extension (`A2A-Extensions`) to talk to the agent.
    #[serde(default, skip_serializing_if = "is_false")]
    pub required: bool,
    /// Extension-specific configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Metadata>,
}

impl AgentExtension {
    /// An extension with the given URI.
    pub fn new(uri: impl Into<String>) -> Self {
        Self {
            uri: Some(uri.into()),
            ..Self::default()
        }
    }

    /// Sets the description.
    #[must_use]
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Marks the extension required.
    #[must_use]
    pub fn with_required(mut self, required: bool) -> Self {
        self.required = required;
        self
    }
}

/// A capability of an agent.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentSkill {
    /// Unique id. REQUIRED.
    #[serde(default, deserialize_with = "null_as_default")]
    pub id: String,
    /// Human-readable name. REQUIRED.
    #[serde(default, deserialize_with = "null_as_default")]
    pub name: String,
    /// What the skill does. REQUIRED.
    #[serde(default, deserialize_with = "null_as_default")]
    pub description: String,
    /// Keywords. REQUIRED.
    #[serde(default, deserialize_with = "null_as_default")]
    pub tags: Vec<String>,
    /// Example prompts.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub examples: Vec<String>,
    /// Media types accepted (overrides the card's defaults).
    #[serde(
        default,
        alias = "input_modes",
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub input_modes: Vec<String>,
    /// Media types produced (overrides the card's defaults).
    #[serde(
        default,
        alias = "output_modes",
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub output_modes: Vec<String>,
    /// Security requirements of this skill.
    #[serde(
        default,
        alias = "security_requirements",
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub security_requirements: Vec<SecurityRequirement>,
}

impl AgentSkill {
    /// A skill with id, name and description, and no tags.
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        description: impl Into<String>,
    ) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            description: description.into(),
            ..Self::default()
        }
    }

    /// Adds tags.
    #[must_use]
    pub fn with_tags(mut self, tags: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.tags.extend(tags.into_iter().map(Into::into));
        self
    }

    /// Adds examples.
    #[must_use]
    pub fn with_examples(mut self, examples: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.examples.extend(examples.into_iter().map(Into::into));
        self
    }

    /// Sets the input media types.
    #[must_use]
    pub fn with_input_modes(mut self, modes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.input_modes = modes.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the output media types.
    #[must_use]
    pub fn with_output_modes(mut self, modes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.output_modes = modes.into_iter().map(Into::into).collect();
        self
    }
}

/// A JWS signature of the card (RFC 7515, detached payload).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AgentCardSignature {
    /// Base64url of the protected header JSON. REQUIRED.
    #[serde(default, deserialize_with = "null_as_default")]
    pub protected: String,
    /// Base64url of the signature. REQUIRED.
    #[serde(default, deserialize_with = "null_as_default")]
    pub signature: String,
    /// The unprotected header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header: Option<Metadata>,
}
