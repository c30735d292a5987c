//! The card's security: its requirements and the security schemes (API key, HTTP auth,
//! OAuth 2.0 and its flows, OpenID Connect, mutual TLS), oneofs on the wire.

use crate::serde_util::{empty_as_none, is_false, null_as_default};
use serde::de::Deserializer;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// One alternative of the card's security requirements: every named scheme (with its scopes)
/// must be satisfied.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SecurityRequirement {
    /// Scheme name → required scopes.
    #[serde(default, deserialize_with = "null_as_default")]
    pub schemes: BTreeMap<String, StringList>,
}

impl SecurityRequirement {
    /// A requirement of one scheme with the given scopes.
    pub fn scheme(
        name: impl Into<String>,
        scopes: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        let mut schemes = BTreeMap::new();
        schemes.insert(name.into(), StringList::new(scopes));
        Self { schemes }
    }
}

/// A list of strings, `{"list": [...]}` on the wire. The bare-array form `[...]` (a2a-go) is
/// accepted on input.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct StringList {
    /// The strings.
    pub list: Vec<String>,
}

impl StringList {
    /// A list of the given strings.
    pub fn new(items: impl IntoIterator<Item = impl Into<String>>) -> Self {
        Self {
            list: items.into_iter().map(Into::into).collect(),
        }
    }
}

impl<'de> Deserialize<'de> for StringList {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Form {
            Bare(Vec<String>),
            Wrapped {
                #[serde(default, deserialize_with = "null_as_default")]
                list: Vec<String>,
            },
        }
        Ok(match Form::deserialize(d)? {
            Form::Bare(list) | Form::Wrapped { list } => StringList { list },
        })
    }
}

/// A security scheme (a oneof: exactly one member key on the wire). On input, extra keys are
/// ignored (so hybrid v1.0/v0.3 cards parse), and a v0.3 OpenAPI-style scheme
/// (`{"type": "apiKey", …}`) is translated.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", remote = "SecurityScheme")]
pub enum SecurityScheme {
    /// `{"apiKeySecurityScheme": …}`
    #[serde(alias = "api_key_security_scheme")]
    ApiKeySecurityScheme(ApiKeySecurityScheme),
    /// `{"httpAuthSecurityScheme": …}`
    #[serde(alias = "http_auth_security_scheme")]
    HttpAuthSecurityScheme(HttpAuthSecurityScheme),
    /// `{"oauth2SecurityScheme": …}`
    #[serde(alias = "oauth2_security_scheme")]
    Oauth2SecurityScheme(OAuth2SecurityScheme),
    /// `{"openIdConnectSecurityScheme": …}`
    #[serde(alias = "open_id_connect_security_scheme")]
    OpenIdConnectSecurityScheme(OpenIdConnectSecurityScheme),
    /// `{"mtlsSecurityScheme": …}`
    #[serde(alias = "mtls_security_scheme")]
    MtlsSecurityScheme(MutualTlsSecurityScheme),
}

impl SecurityScheme {
    /// An HTTP bearer-token scheme.
    pub fn bearer() -> Self {
        SecurityScheme::HttpAuthSecurityScheme(HttpAuthSecurityScheme {
            description: None,
            scheme: "Bearer".to_owned(),
            bearer_format: None,
        })
    }

    /// An API key in a header (`location` = `header`).
    pub fn api_key_header(name: impl Into<String>) -> Self {
        SecurityScheme::ApiKeySecurityScheme(ApiKeySecurityScheme {
            description: None,
            location: "header".to_owned(),
            name: name.into(),
        })
    }
}

/// An API key sent in a query parameter, header or cookie.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiKeySecurityScheme {
    /// Description.
    #[serde(
        default,
        deserialize_with = "empty_as_none",
        skip_serializing_if = "Option::is_none"
    )]
    pub description: Option<String>,
    /// `query`, `header` or `cookie`. REQUIRED.
    #[serde(default, deserialize_with = "null_as_default")]
    pub location: String,
    /// The parameter, header or cookie name. REQUIRED.
    #[serde(default, deserialize_with = "null_as_default")]
    pub name: String,
}

/// HTTP authentication (RFC 7235), e.g. `Bearer` or `Basic`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HttpAuthSecurityScheme {
    /// Description.
    #[serde(
        default,
        deserialize_with = "empty_as_none",
        skip_serializing_if = "Option::is_none"
    )]
    pub description: Option<String>,
    /// The scheme name (`Bearer`, `Basic`, …). REQUIRED.
    #[serde(default, deserialize_with = "null_as_default")]
    pub scheme: String,
    /// A hint of the bearer token's format (e.g. `JWT`).
    #[serde(
        default,
        alias = "bearer_format",
        deserialize_with = "empty_as_none",
        skip_serializing_if = "Option::is_none"
    )]
    pub bearer_format: Option<String>,
}

/// OAuth 2.0.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OAuth2SecurityScheme {
    /// Description.
    #[serde(
        default,
        deserialize_with = "empty_as_none",
        skip_serializing_if = "Option::is_none"
    )]
    pub description: Option<String>,
    /// The flow. REQUIRED.
    pub flows: OAuthFlows,
    /// RFC 8414 authorization-server metadata URL.
    #[serde(
        default,
        alias = "oauth2_metadata_url",
        deserialize_with = "empty_as_none",
        skip_serializing_if = "Option::is_none"
    )]
    pub oauth2_metadata_url: Option<String>,
}

/// OpenID Connect.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenIdConnectSecurityScheme {
    /// Description.
    #[serde(
        default,
        deserialize_with = "empty_as_none",
        skip_serializing_if = "Option::is_none"
    )]
    pub description: Option<String>,
    /// The OpenID Connect discovery URL. REQUIRED.
    #[serde(
        default,
        alias = "open_id_connect_url",
        deserialize_with = "null_as_default"
    )]
    pub open_id_connect_url: String,
}

/// Mutual TLS.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MutualTlsSecurityScheme {
    /// Description.
    #[serde(
        default,
        deserialize_with = "empty_as_none",
        skip_serializing_if = "Option::is_none"
    )]
    pub description: Option<String>,
}

/// The OAuth 2.0 flow of a scheme (a oneof: one flow per scheme object). On input, an object
/// with several flows (v0.3) is read as its first known flow.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", remote = "OAuthFlows")]
pub enum OAuthFlows {
    /// Authorization code flow.
    #[serde(alias = "authorization_code")]
    AuthorizationCode(AuthorizationCodeOAuthFlow),
    /// Client credentials flow.
    #[serde(alias = "client_credentials")]
    ClientCredentials(ClientCredentialsOAuthFlow),
    /// Implicit flow (deprecated).
    Implicit(ImplicitOAuthFlow),
    /// Password flow (deprecated).
    Password(PasswordOAuthFlow),
    /// Device code flow (RFC 8628).
    #[serde(alias = "device_code")]
    DeviceCode(DeviceCodeOAuthFlow),
}

/// Scope name → description.
pub type Scopes = BTreeMap<String, String>;

/// The OAuth 2.0 authorization code flow.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthorizationCodeOAuthFlow {
    /// REQUIRED.
    #[serde(
        default,
        alias = "authorization_url",
        deserialize_with = "null_as_default"
    )]
    pub authorization_url: String,
    /// REQUIRED.
    #[serde(default, alias = "token_url", deserialize_with = "null_as_default")]
    pub token_url: String,
    /// Refresh URL.
    #[serde(
        default,
        alias = "refresh_url",
        deserialize_with = "empty_as_none",
        skip_serializing_if = "Option::is_none"
    )]
    pub refresh_url: Option<String>,
    /// REQUIRED.
    #[serde(default, deserialize_with = "null_as_default")]
    pub scopes: Scopes,
    /// PKCE is required.
    #[serde(default, alias = "pkce_required", skip_serializing_if = "is_false")]
    pub pkce_required: bool,
}

/// The OAuth 2.0 client credentials flow.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientCredentialsOAuthFlow {
    /// REQUIRED.
    #[serde(default, alias = "token_url", deserialize_with = "null_as_default")]
    pub token_url: String,
    /// Refresh URL.
    #[serde(
        default,
        alias = "refresh_url",
        deserialize_with = "empty_as_none",
        skip_serializing_if = "Option::is_none"
    )]
    pub refresh_url: Option<String>,
    /// REQUIRED.
    #[serde(default, deserialize_with = "null_as_default")]
    pub scopes: Scopes,
}

/// The OAuth 2.0 implicit flow (deprecated).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImplicitOAuthFlow {
    /// Authorization URL.
    #[serde(
        default,
        alias = "authorization_url",
        deserialize_with = "empty_as_none",
        skip_serializing_if = "Option::is_none"
    )]
    pub authorization_url: Option<String>,
    /// Refresh URL.
    #[serde(
        default,
        alias = "refresh_url",
        deserialize_with = "empty_as_none",
        skip_serializing_if = "Option::is_none"
    )]
    pub refresh_url: Option<String>,
    /// Scopes.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub scopes: Scopes,
}

/// The OAuth 2.0 resource-owner password flow (deprecated).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PasswordOAuthFlow {
    /// Token URL.
    #[serde(
        default,
        alias = "token_url",
        deserialize_with = "empty_as_none",
        skip_serializing_if = "Option::is_none"
    )]
    pub token_url: Option<String>,
    /// Refresh URL.
    #[serde(
        default,
        alias = "refresh_url",
        deserialize_with = "empty_as_none",
        skip_serializing_if = "Option::is_none"
    )]
    pub refresh_url: Option<String>,
    /// Scopes.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub scopes: Scopes,
}

/// The OAuth 2.0 device authorization flow (RFC 8628).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeviceCodeOAuthFlow {
    /// REQUIRED.
    #[serde(
        default,
        alias = "device_authorization_url",
        deserialize_with = "null_as_default"
    )]
    pub device_authorization_url: String,
    /// REQUIRED.
    #[serde(default, alias = "token_url", deserialize_with = "null_as_default")]
    pub token_url: String,
    /// Refresh URL.
    #[serde(
        default,
        alias = "refresh_url",
        deserialize_with = "empty_as_none",
        skip_serializing_if = "Option::is_none"
    )]
    pub refresh_url: Option<String>,
    /// REQUIRED.
    #[serde(default, deserialize_with = "null_as_default")]
    pub scopes: Scopes,
}

/// Reads a oneof object that may carry extra keys: the first key that `T`'s derived
/// deserializer accepts as a variant wins.
fn first_member<'de, D, T>(
    d: D,
    keys: &[&str],
    fallback: impl FnOnce(&Map<String, Value>) -> Option<T>,
    derived: impl Fn(Value) -> Result<T, serde_json::Error>,
    what: &str,
) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
{
    use serde::de::Error as _;
    let map = Map::<String, Value>::deserialize(d)?;
    for key in keys {
        if let Some(inner) = map.get(*key) {
            let mut one = Map::new();
            one.insert((*key).to_owned(), inner.clone());
            return derived(Value::Object(one)).map_err(D::Error::custom);
        }
    }
    fallback(&map).ok_or_else(|| {
        D::Error::custom(format!(
            "{what} must have one of the keys {}",
            keys.join(", ")
        ))
    })
}

impl Serialize for SecurityScheme {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        SecurityScheme::serialize(self, s)
    }
}

impl<'de> Deserialize<'de> for SecurityScheme {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        first_member(
            d,
            &[
                "apiKeySecurityScheme",
                "api_key_security_scheme",
                "httpAuthSecurityScheme",
                "http_auth_security_scheme",
                "oauth2SecurityScheme",
                "oauth2_security_scheme",
                "openIdConnectSecurityScheme",
                "open_id_connect_security_scheme",
                "mtlsSecurityScheme",
                "mtls_security_scheme",
            ],
            |m| crate::v03::decode_scheme(&Value::Object(m.clone())),
            SecurityScheme::deserialize,
            "a security scheme",
        )
    }
}

impl Serialize for OAuthFlows {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        OAuthFlows::serialize(self, s)
    }
}

impl<'de> Deserialize<'de> for OAuthFlows {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        first_member(
            d,
            &[
                "authorizationCode",
                "authorization_code",
                "clientCredentials",
                "client_credentials",
                "deviceCode",
                "device_code",
                "implicit",
                "password",
            ],
            |_| None,
            OAuthFlows::deserialize,
            "OAuth flows",
        )
    }
}
