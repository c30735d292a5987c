//! Strategies over the wire model, shared by the property tests (`proptest.rs`) and the fuzz
//! suites (`fuzz_*.rs`).
//!
//! Each strategy takes a `v03` flag that restricts it to what v0.3 can carry: no `mediaType` or
//! `filename` on text and data parts (v0.3 has them on files only), no empty metadata object on
//! a non-object data part (v0.3 wraps it and flags it in the metadata), no UNSPECIFIED role, no
//! device-code flow or PKCE flag, interfaces that all speak 0.3 with no tenant, and an
//! `extendedAgentCard` flag that is either unset or true.

// Each test crate that includes this file uses a different subset of it.
#![allow(dead_code)]

use a2a_core::v03::DATA_PART_COMPAT;
use a2a_core::*;
use proptest::collection::{btree_map, btree_set, vec};
use proptest::option;
use proptest::prelude::*;
use serde_json::{Map, Value};

// ---------------------------------------------------------------------------------------------
// Strategies: scalars and JSON

/// Any short string, including empty and non-ASCII ones.
pub(crate) fn text() -> BoxedStrategy<String> {
    prop_oneof!["[a-zA-Z0-9 ]{0,8}", "\\PC{0,6}"].boxed()
}

/// A short non-empty string (for fields where `""` means "unset").
pub(crate) fn word() -> BoxedStrategy<String> {
    "[a-zA-Z0-9._:/-]{1,10}".boxed()
}

/// Any JSON value. Floats are dyadic fractions, which print and parse back exactly.
pub(crate) fn json_value() -> BoxedStrategy<Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (-1_000_000i64..1_000_000, 0..6i32)
            .prop_map(|(m, e)| Value::from(m as f64 / f64::from(2i32.pow(e as u32)))),
        text().prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..4).prop_map(Value::Array),
            btree_map(text(), inner, 0..4).prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
    .boxed()
}

/// Optional metadata (`None`, `{}` or a small object). Never holds v0.3's compat flag.
pub(crate) fn metadata() -> BoxedStrategy<Option<Metadata>> {
    option::of(
        btree_map(
            text().prop_filter("reserved key", |k| k != DATA_PART_COMPAT),
            json_value(),
            0..3,
        )
        .prop_map(|m| m.into_iter().collect::<Map<_, _>>()),
    )
    .boxed()
}

pub(crate) fn timestamp() -> BoxedStrategy<Timestamp> {
    // 1906 to 2100, millisecond precision.
    (-2_000_000_000_000i64..4_102_444_800_000)
        .prop_map(|ms| Timestamp::from_unix_millis(ms).unwrap())
        .boxed()
}

pub(crate) fn state() -> BoxedStrategy<TaskState> {
    prop_oneof![
        4 => proptest::sample::select(TaskState::ALL.to_vec()),
        1 => "TASK_STATE_X[A-Z_]{1,6}".prop_map(|s| TaskState::from_wire(&s)),
        1 => (9i64..1000).prop_map(TaskState::from_number),
    ]
    .boxed()
}

pub(crate) fn role(v03: bool) -> BoxedStrategy<Role> {
    let known = if v03 {
        vec![Role::User, Role::Agent]
    } else {
        Role::ALL.to_vec()
    };
    prop_oneof![
        4 => proptest::sample::select(known),
        1 => "ROLE_X[A-Z_]{1,6}".prop_map(|s| Role::from_wire(&s)),
    ]
    .boxed()
}

// ---------------------------------------------------------------------------------------------
// Strategies: messages and tasks

pub(crate) fn part(v03: bool) -> BoxedStrategy<Part> {
    let content = prop_oneof![
        text().prop_map(PartContent::Text),
        vec(any::<u8>(), 0..48).prop_map(PartContent::Raw),
        text().prop_map(PartContent::Url),
        json_value().prop_map(PartContent::Data),
    ];
    (content, option::of(word()), option::of(word()), metadata())
        .prop_map(move |(content, media_type, filename, metadata)| {
            let is_file = matches!(content, PartContent::Raw(_) | PartContent::Url(_));
            let keep = !v03 || is_file;
            // A wrapped (non-object) data part carries the compat flag in its metadata, so v0.3
            // cannot tell an empty metadata object from none there.
            let wrapped = matches!(&content, PartContent::Data(d) if !d.is_object());
            let metadata = metadata.filter(|m| !(v03 && wrapped && m.is_empty()));
            Part {
                content,
                media_type: media_type.filter(|_| keep),
                filename: filename.filter(|_| keep),
                metadata,
            }
        })
        .boxed()
}

pub(crate) fn message(v03: bool) -> BoxedStrategy<Message> {
    (
        text(),
        option::of(word()),
        option::of(word()),
        role(v03),
        vec(part(v03), 1..4),
        metadata(),
        vec(word(), 0..3),
        vec(word(), 0..3),
    )
        .prop_map(
            |(id, context_id, task_id, role, parts, metadata, extensions, refs)| Message {
                message_id: MessageId::new(id),
                context_id: context_id.map(ContextId::new),
                task_id: task_id.map(TaskId::new),
                role,
                parts,
                metadata,
                extensions,
                reference_task_ids: refs.into_iter().map(TaskId::new).collect(),
            },
        )
        .boxed()
}

pub(crate) fn artifact(v03: bool) -> BoxedStrategy<Artifact> {
    (
        text(),
        option::of(word()),
        option::of(word()),
        vec(part(v03), 1..4),
        metadata(),
        vec(word(), 0..3),
    )
        .prop_map(
            |(id, name, description, parts, metadata, extensions)| Artifact {
                artifact_id: ArtifactId::new(id),
                name,
                description,
                parts,
                metadata,
                extensions,
            },
        )
        .boxed()
}

pub(crate) fn status(v03: bool) -> BoxedStrategy<TaskStatus> {
    (state(), option::of(message(v03)), option::of(timestamp()))
        .prop_map(|(state, message, timestamp)| TaskStatus {
            state,
            message: message.map(Box::new),
            timestamp,
        })
        .boxed()
}

pub(crate) fn task(v03: bool) -> BoxedStrategy<Task> {
    (
        word(),
        text(),
        status(v03),
        vec(artifact(v03), 0..3),
        vec(message(v03), 0..3),
        metadata(),
        // A2A 1.1's int64 generation (0: unset); v0.3 has none.
        if v03 {
            Just(0i64).boxed()
        } else {
            (0..=i64::MAX).boxed()
        },
    )
        .prop_map(
            |(id, context_id, status, artifacts, history, metadata, generation)| Task {
                id: TaskId::new(id),
                context_id: ContextId::new(context_id),
                status,
                artifacts,
                history,
                metadata,
                generation,
            },
        )
        .boxed()
}

pub(crate) fn stream_response(v03: bool) -> BoxedStrategy<StreamResponse> {
    let status_update = (word(), text(), status(v03), metadata()).prop_map(
        |(task_id, context_id, status, metadata)| {
            StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
                task_id: TaskId::new(task_id),
                context_id: ContextId::new(context_id),
                status,
                metadata,
                generation: 0,
            })
        },
    );
    let artifact_update = (
        word(),
        text(),
        artifact(v03),
        any::<bool>(),
        any::<bool>(),
        metadata(),
    )
        .prop_map(
            |(task_id, context_id, artifact, append, last_chunk, metadata)| {
                StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
                    task_id: TaskId::new(task_id),
                    context_id: ContextId::new(context_id),
                    artifact,
                    append,
                    last_chunk,
                    metadata,
                    generation: 0,
                })
            },
        );
    prop_oneof![
        task(v03).prop_map(StreamResponse::Task),
        message(v03).prop_map(StreamResponse::Message),
        status_update,
        artifact_update,
    ]
    .boxed()
}

// ---------------------------------------------------------------------------------------------
// Strategies: agent cards

pub(crate) fn scopes() -> BoxedStrategy<Scopes> {
    btree_map(word(), text(), 0..3).boxed()
}

pub(crate) fn flows(v03: bool) -> BoxedStrategy<OAuthFlows> {
    let authorization_code = (word(), word(), option::of(word()), scopes(), any::<bool>())
        .prop_map(
            move |(authorization_url, token_url, refresh_url, scopes, pkce)| {
                OAuthFlows::AuthorizationCode(AuthorizationCodeOAuthFlow {
                    authorization_url,
                    token_url,
                    refresh_url,
                    scopes,
                    pkce_required: pkce && !v03,
                })
            },
        );
    let client_credentials =
        (word(), option::of(word()), scopes()).prop_map(|(token_url, refresh_url, scopes)| {
            OAuthFlows::ClientCredentials(ClientCredentialsOAuthFlow {
                token_url,
                refresh_url,
                scopes,
            })
        });
    let implicit = (option::of(word()), option::of(word()), scopes()).prop_map(
        |(authorization_url, refresh_url, scopes)| {
            OAuthFlows::Implicit(ImplicitOAuthFlow {
                authorization_url,
                refresh_url,
                scopes,
            })
        },
    );
    let password = (option::of(word()), option::of(word()), scopes()).prop_map(
        |(token_url, refresh_url, scopes)| {
            OAuthFlows::Password(PasswordOAuthFlow {
                token_url,
                refresh_url,
                scopes,
            })
        },
    );
    let device_code = (word(), word(), option::of(word()), scopes()).prop_map(
        |(device_authorization_url, token_url, refresh_url, scopes)| {
            OAuthFlows::DeviceCode(DeviceCodeOAuthFlow {
                device_authorization_url,
                token_url,
                refresh_url,
                scopes,
            })
        },
    );
    if v03 {
        // v0.3 has no device-code flow.
        prop_oneof![authorization_code, client_credentials, implicit, password].boxed()
    } else {
        prop_oneof![
            authorization_code,
            client_credentials,
            implicit,
            password,
            device_code
        ]
        .boxed()
    }
}

pub(crate) fn security_scheme(v03: bool) -> BoxedStrategy<SecurityScheme> {
    let description = || option::of(word());
    prop_oneof![
        (
            description(),
            proptest::sample::select(vec!["query", "header", "cookie"]),
            word()
        )
            .prop_map(|(description, location, name)| {
                SecurityScheme::ApiKeySecurityScheme(ApiKeySecurityScheme {
                    description,
                    location: location.to_owned(),
                    name,
                })
            }),
        (description(), word(), option::of(word())).prop_map(
            |(description, scheme, bearer_format)| {
                SecurityScheme::HttpAuthSecurityScheme(HttpAuthSecurityScheme {
                    description,
                    scheme,
                    bearer_format,
                })
            }
        ),
        (description(), flows(v03), option::of(word())).prop_map(
            |(description, flows, oauth2_metadata_url)| {
                SecurityScheme::Oauth2SecurityScheme(OAuth2SecurityScheme {
                    description,
                    flows,
                    oauth2_metadata_url,
                })
            }
        ),
        (description(), word()).prop_map(|(description, open_id_connect_url)| {
            SecurityScheme::OpenIdConnectSecurityScheme(OpenIdConnectSecurityScheme {
                description,
                open_id_connect_url,
            })
        }),
        description().prop_map(|description| {
            SecurityScheme::MtlsSecurityScheme(MutualTlsSecurityScheme { description })
        }),
    ]
    .boxed()
}

pub(crate) fn security_requirement() -> BoxedStrategy<SecurityRequirement> {
    btree_map(word(), vec(word(), 0..3).prop_map(StringList::new), 0..3)
        .prop_map(|schemes| SecurityRequirement { schemes })
        .boxed()
}

pub(crate) fn binding() -> BoxedStrategy<String> {
    prop_oneof![
        Just(BINDING_JSONRPC.to_owned()),
        Just(BINDING_HTTP_JSON.to_owned()),
        Just(BINDING_GRPC.to_owned()),
        Just("https://bindings.example/custom".to_owned()),
    ]
    .boxed()
}

pub(crate) fn interfaces(v03: bool) -> BoxedStrategy<Vec<AgentInterface>> {
    if v03 {
        // Distinct (url, binding) pairs, all 0.3, no tenant.
        btree_set((word(), binding()), 0..4)
            .prop_map(|pairs| {
                pairs
                    .into_iter()
                    .map(|(url, binding)| {
                        AgentInterface::new(binding, url)
                            .with_protocol_version(PROTOCOL_VERSION_V03)
                    })
                    .collect()
            })
            .boxed()
    } else {
        let version = prop_oneof![Just("1.0"), Just("0.3"), Just("2.1")];
        vec(
            (text(), binding(), option::of(word()), version).prop_map(
                |(url, protocol_binding, tenant, version)| AgentInterface {
                    url,
                    protocol_binding,
                    tenant,
                    protocol_version: version.to_owned(),
                },
            ),
            0..4,
        )
        .boxed()
    }
}

pub(crate) fn capabilities(v03: bool) -> BoxedStrategy<AgentCapabilities> {
    let extension = (
        option::of(word()),
        option::of(word()),
        any::<bool>(),
        metadata(),
    )
        .prop_map(|(uri, description, required, params)| AgentExtension {
            uri,
            description,
            required,
            params,
        });
    let extended = if v03 {
        prop_oneof![Just(None), Just(Some(true))].boxed()
    } else {
        option::of(any::<bool>()).boxed()
    };
    (
        option::of(any::<bool>()),
        option::of(any::<bool>()),
        vec(extension, 0..3),
        extended,
    )
        .prop_map(
            |(streaming, push_notifications, extensions, extended_agent_card)| AgentCapabilities {
                streaming,
                push_notifications,
                extensions,
                extended_agent_card,
            },
        )
        .boxed()
}

pub(crate) fn skill() -> BoxedStrategy<AgentSkill> {
    (
        text(),
        text(),
        text(),
        vec(text(), 0..3),
        vec(text(), 0..3),
        vec(word(), 0..2),
        vec(word(), 0..2),
        vec(security_requirement(), 0..2),
    )
        .prop_map(
            |(id, name, description, tags, examples, input_modes, output_modes, reqs)| AgentSkill {
                id,
                name,
                description,
                tags,
                examples,
                input_modes,
                output_modes,
                security_requirements: reqs,
            },
        )
        .boxed()
}

pub(crate) fn agent_card(v03: bool) -> BoxedStrategy<AgentCard> {
    let provider = option::of(
        (text(), text()).prop_map(|(url, organization)| AgentProvider { url, organization }),
    );
    let signature = (word(), word(), metadata()).prop_map(|(protected, signature, header)| {
        AgentCardSignature {
            protected,
            signature,
            header,
        }
    });
    let head = (
        text(),
        text(),
        interfaces(v03),
        provider,
        text(),
        option::of(text()),
        capabilities(v03),
    );
    let tail = (
        btree_map(word(), security_scheme(v03), 0..4),
        vec(security_requirement(), 0..3),
        vec(word(), 0..3),
        vec(word(), 0..3),
        vec(skill(), 0..3),
        vec(signature, 0..2),
        option::of(text()),
    );
    (head, tail)
        .prop_map(
            |(
                (name, description, supported_interfaces, provider, version, docs, capabilities),
                (schemes, requirements, input, output, skills, signatures, icon_url),
            )| AgentCard {
                name,
                description,
                supported_interfaces,
                provider,
                version,
                documentation_url: docs,
                capabilities,
                security_schemes: schemes,
                security_requirements: requirements,
                default_input_modes: input,
                default_output_modes: output,
                skills,
                signatures,
                icon_url,
            },
        )
        .boxed()
}
