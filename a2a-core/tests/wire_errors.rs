//! The error table (digest §4.1–§4.2, v1.0.1 columns): each kind's JSON-RPC code, HTTP status,
//! gRPC status and ErrorInfo reason, and the shape of JSON-RPC errors and `google.rpc.Status`
//! bodies.

use a2a_core::*;
use serde_json::{Value, json};

/// (kind, JSON-RPC code, HTTP status, gRPC status, ErrorInfo reason).
const ERROR_TABLE: &[(ErrorKind, i32, u16, &str, &str)] = &[
    // §4.1: standard JSON-RPC codes; reasons as the SDKs use them (not normative).
    (
        ErrorKind::ParseError,
        -32700,
        400,
        "INVALID_ARGUMENT",
        "PARSE_ERROR",
    ),
    (
        ErrorKind::InvalidRequest,
        -32600,
        400,
        "INVALID_ARGUMENT",
        "INVALID_REQUEST",
    ),
    (
        ErrorKind::MethodNotFound,
        -32601,
        404,
        "UNIMPLEMENTED",
        "METHOD_NOT_FOUND",
    ),
    (
        ErrorKind::InvalidParams,
        -32602,
        400,
        "INVALID_ARGUMENT",
        "INVALID_PARAMS",
    ),
    (
        ErrorKind::Internal,
        -32603,
        500,
        "INTERNAL",
        "INTERNAL_ERROR",
    ),
    // §4.2: A2A errors, v1.0.1 HTTP and gRPC columns.
    (
        ErrorKind::TaskNotFound,
        -32001,
        404,
        "NOT_FOUND",
        "TASK_NOT_FOUND",
    ),
    (
        ErrorKind::TaskNotCancelable,
        -32002,
        400,
        "FAILED_PRECONDITION",
        "TASK_NOT_CANCELABLE",
    ),
    (
        ErrorKind::PushNotificationNotSupported,
        -32003,
        400,
        "FAILED_PRECONDITION",
        "PUSH_NOTIFICATION_NOT_SUPPORTED",
    ),
    (
        ErrorKind::UnsupportedOperation,
        -32004,
        400,
        "FAILED_PRECONDITION",
        "UNSUPPORTED_OPERATION",
    ),
    (
        ErrorKind::ContentTypeNotSupported,
        -32005,
        400,
        "INVALID_ARGUMENT",
        "CONTENT_TYPE_NOT_SUPPORTED",
    ),
    (
        ErrorKind::InvalidAgentResponse,
        -32006,
        500,
        "INTERNAL",
        "INVALID_AGENT_RESPONSE",
    ),
    (
        ErrorKind::ExtendedAgentCardNotConfigured,
        -32007,
        400,
        "FAILED_PRECONDITION",
        "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
    ),
    (
        ErrorKind::ExtensionSupportRequired,
        -32008,
        400,
        "FAILED_PRECONDITION",
        "EXTENSION_SUPPORT_REQUIRED",
    ),
    (
        ErrorKind::VersionNotSupported,
        -32009,
        400,
        "FAILED_PRECONDITION",
        "VERSION_NOT_SUPPORTED",
    ),
    // A2A 1.1 (dev-1.1, #1810).
    (
        ErrorKind::TaskGenerationMismatch,
        -32010,
        409,
        "ABORTED",
        "TASK_GENERATION_MISMATCH",
    ),
    // HTTP-level conditions (a2a-go's reasons for 401/403; the JSON-RPC codes are this crate's).
    (
        ErrorKind::Unauthenticated,
        -32098,
        401,
        "UNAUTHENTICATED",
        "UNAUTHENTICATED",
    ),
    (
        ErrorKind::PermissionDenied,
        -32099,
        403,
        "PERMISSION_DENIED",
        "UNAUTHORIZED",
    ),
    (
        ErrorKind::PayloadTooLarge,
        -32600,
        413,
        "RESOURCE_EXHAUSTED",
        "PAYLOAD_TOO_LARGE",
    ),
];

#[test]
fn error_table_matches_the_spec() {
    assert_eq!(ERROR_TABLE.len(), ErrorKind::ALL.len());
    for kind in ErrorKind::ALL {
        let &(_, code, http, grpc, reason) = ERROR_TABLE
            .iter()
            .find(|row| row.0 == kind)
            .unwrap_or_else(|| panic!("{kind:?} is not in the expected table"));
        let row = kind.codes();
        assert_eq!(
            (row.json_rpc, row.http, row.grpc, row.reason),
            (code, http, grpc, reason),
            "{kind:?}"
        );
        assert_eq!(kind.json_rpc_code(), code);
        assert_eq!(kind.http_status(), http);
        assert_eq!(kind.grpc_status(), grpc);
        assert_eq!(kind.reason(), reason);
        assert_eq!(kind.to_string(), reason);
        assert_eq!(ErrorKind::from_reason(reason), Some(kind));
        assert!(!row.message.is_empty());
    }
    // -32600 is shared; the code alone reads as InvalidRequest.
    for &(kind, code, ..) in ERROR_TABLE {
        if kind != ErrorKind::PayloadTooLarge {
            assert_eq!(ErrorKind::from_json_rpc_code(code), Some(kind));
        }
    }
    assert_eq!(
        ErrorKind::from_json_rpc_code(-32600),
        Some(ErrorKind::InvalidRequest)
    );
    assert_eq!(ErrorKind::from_json_rpc_code(-32050), None);
    assert_eq!(
        ErrorKind::from_reason("UNSUPPORTED_CONTENT_TYPE"),
        Some(ErrorKind::ContentTypeNotSupported)
    );
    assert_eq!(ErrorKind::from_reason("NOPE"), None);
}

#[test]
fn json_rpc_errors_carry_error_info_first() {
    for kind in ErrorKind::ALL {
        let err = Error::from_kind(kind);
        let obj = err.to_json_rpc();
        let json = serde_json::to_value(&obj).unwrap();
        assert_eq!(json["code"], kind.json_rpc_code());
        assert_eq!(json["message"], kind.codes().message);
        assert_eq!(
            json["data"][0],
            json!({"@type": ERROR_INFO_TYPE, "reason": kind.reason(), "domain": "a2a-protocol.org"}),
            "{kind:?}"
        );
        let back = Error::from_json_rpc(serde_json::from_value(json).unwrap());
        assert_eq!(back.kind(), Some(kind));
        assert_eq!(back, err);
        assert!(back.is(kind));
        assert_eq!(back.http_status(), kind.http_status());
    }
    assert_eq!(ERROR_INFO_TYPE, "type.googleapis.com/google.rpc.ErrorInfo");
    assert_eq!(ERROR_DOMAIN, "a2a-protocol.org");
}

#[test]
fn status_bodies_have_the_spec_shape_and_round_trip_the_kind() {
    for kind in ErrorKind::ALL {
        let err = Error::new(kind, "something happened").with_metadata("taskId", "t-1");
        let body = err.to_status_body();
        assert_eq!(
            body,
            json!({"error": {
                "code": kind.http_status(),
                "status": kind.grpc_status(),
                "message": "something happened",
                "details": [{"@type": ERROR_INFO_TYPE, "reason": kind.reason(),
                             "domain": ERROR_DOMAIN, "metadata": {"taskId": "t-1"}}]
            }}),
            "{kind:?}"
        );
        let back = Error::from_status_body(&body).unwrap();
        assert_eq!(back.kind(), Some(kind));
        assert_eq!(back.code, kind.json_rpc_code());
        assert_eq!(back, err);
    }
    // Without ErrorInfo, the HTTP status is the only hint.
    for (http, kind) in [
        (400, Some(ErrorKind::InvalidParams)),
        (401, Some(ErrorKind::Unauthenticated)),
        (403, Some(ErrorKind::PermissionDenied)),
        (404, Some(ErrorKind::TaskNotFound)),
        (413, Some(ErrorKind::PayloadTooLarge)),
        (500, Some(ErrorKind::Internal)),
    ] {
        let e = Error::from_status_body(&json!({"error": {"code": http, "message": "m"}})).unwrap();
        assert_eq!(e.kind(), kind, "{http}");
    }
    assert!(Error::from_status_body(&json!({"message": "not a status"})).is_none());
}

#[test]
fn invalid_params_errors_name_the_field_in_a_bad_request_detail() {
    let err = Error::invalid_params("message.parts", "must contain at least one part");
    assert_eq!(err.message, "message.parts: must contain at least one part");
    let data = serde_json::to_value(err.to_json_rpc()).unwrap()["data"].clone();
    assert_eq!(data[0]["reason"], "INVALID_PARAMS");
    assert_eq!(
        data[1],
        json!({"@type": BAD_REQUEST_TYPE, "fieldViolations": [
            {"field": "message.parts", "description": "must contain at least one part"}]})
    );
    // A non-array `data` from a lenient peer is kept as one detail.
    let e = Error::from_json_rpc(ErrorObject {
        code: -32001,
        message: "nope".into(),
        data: Some(json!({"taskId": "t"})),
    });
    assert_eq!(e.details, [json!({"taskId": "t"})]);
    assert_eq!(e.kind(), Some(ErrorKind::TaskNotFound));
    assert_eq!(e.to_string(), "TASK_NOT_FOUND (-32001): nope");
    let unknown = Error::from_json_rpc(ErrorObject {
        code: -1,
        message: "x".into(),
        data: None,
    });
    assert_eq!(unknown.kind(), None);
    assert_eq!(unknown.http_status(), 500);
    assert_eq!(unknown.to_json_rpc().data, None);
}

/// Found by the fuzz suite: serde's derived structs also read arrays (fields by position), so
/// `"message": []` was a message of defaults. A message is read only from an object.
#[test]
fn a_message_given_as_an_array_is_invalid_params() {
    let req = a2a_core::jsonrpc::RawRequest::parse(
        br#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":[]}}"#,
    )
    .unwrap();
    let e = req.params_as::<SendMessageRequest>().unwrap_err();
    assert_eq!(e.code, -32602);
    assert!(e.message.contains("JSON object"), "{}", e.message);
    assert!(serde_json::from_str::<Message>("[]").is_err());
    assert!(serde_json::from_str::<Message>(r#"["m-1"]"#).is_err());
}

/// Found by the fuzz suite: without serde_json's `float_roundtrip`, a number in metadata could
/// read back one ulp off after a trip through JSON (so a stored task changed on every load).
#[test]
fn numbers_in_metadata_survive_a_trip_through_json() {
    let v = json!({"x": 1.5025460453979299e86});
    let text = serde_json::to_string(&v).unwrap();
    assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), v);
}
