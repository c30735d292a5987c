//! The HTTP+JSON binding's route table, the one copy both sides use: a client builds a
//! request's path from it ([`Route::path`]), a server matches a request's path against it
//! ([`match_path`]).
//!
//! | method | path | operation | rest of the request |
//! |---|---|---|---|
//! | POST | `/message:send` | SendMessage | body |
//! | POST | `/message:stream` | SendStreamingMessage (SSE) | body |
//! | GET | `/tasks` | ListTasks | query |
//! | GET | `/tasks/{id}` | GetTask | query |
//! | POST | `/tasks/{id}:cancel` | CancelTask | body |
//! | GET, POST | `/tasks/{id}:subscribe` | SubscribeToTask (SSE) | none |
//! | POST | `/tasks/{taskId}/pushNotificationConfigs` | CreateTaskPushNotificationConfig | body |
//! | GET | `/tasks/{taskId}/pushNotificationConfigs` | ListTaskPushNotificationConfigs | query |
//! | GET | `/tasks/{taskId}/pushNotificationConfigs/{id}` | GetTaskPushNotificationConfig | query |
//! | DELETE | `/tasks/{taskId}/pushNotificationConfigs/{id}` | DeleteTaskPushNotificationConfig | query |
//! | GET | `/extendedAgentCard` | GetExtendedAgentCard | query |
//!
//! Every path also exists under a leading `/{tenant}` segment. Path fields and the tenant are
//! percent-encoded; a `:verb` suffix counts only when its colon is not encoded, so an id may
//! contain `:` (sent as `%3A`).
//!
//! ```
//! use a2a_core::Method;
//! use a2a_core::http_json::{self, HttpMethod};
//!
//! let route = http_json::route(Method::CancelTask);
//! let path = route.path(Some("acme"), |_| "t 1");
//! assert_eq!((route.http_method, path.as_str()), (HttpMethod::Post, "/acme/tasks/t%201:cancel"));
//!
//! let found = http_json::match_path(&path).unwrap();
//! assert_eq!(found.tenant.as_deref(), Some("acme"));
//! assert_eq!(found.fields, [("id", "t 1".to_owned())]);
//! assert_eq!(found.route(HttpMethod::Post).unwrap().method, Method::CancelTask);
//! assert_eq!(found.allow(), "POST");
//! ```

use crate::Method;
use std::fmt::Write as _;

/// An HTTP method the binding uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HttpMethod {
    /// `GET`
    Get,
    /// `POST`
    Post,
    /// `DELETE`
    Delete,
}

impl HttpMethod {
    /// The method's name: `GET`, `POST`, `DELETE`.
    pub const fn as_str(self) -> &'static str {
        match self {
            HttpMethod::Get => "GET",
            HttpMethod::Post => "POST",
            HttpMethod::Delete => "DELETE",
        }
    }

    /// Reads a method name (exactly, as HTTP method names are case-sensitive); `None` for a
    /// method the binding does not use.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "GET" => Some(HttpMethod::Get),
            "POST" => Some(HttpMethod::Post),
            "DELETE" => Some(HttpMethod::Delete),
            _ => None,
        }
    }
}

/// Where the fields of a request that are not in the path travel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rest {
    /// In a JSON body (an empty body reads as `{}`).
    Body,
    /// In the query string.
    Query,
    /// Nowhere: the path carries the whole request.
    None,
}

/// One row of the table: an operation, its HTTP method and path template.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Route {
    /// The operation.
    pub method: Method,
    /// The HTTP method.
    pub http_method: HttpMethod,
    /// The path template, without the tenant: `/tasks/{id}:cancel`. A `{name}` is a field of
    /// the request, one whole segment, or one ending in a `:verb`.
    pub template: &'static str,
    /// Where the request's other fields travel.
    pub rest: Rest,
}

/// The table, from the operation table ([`crate::operation`]): each operation's routes in
/// order, its first the one a client uses. SubscribeToTask has a second (`GET` in the proto,
/// `POST` in the spec text: servers accept both).
pub const ROUTES: [Route; crate::operation::ROUTES.len()] = crate::operation::ROUTES;

/// The route a client uses for `method`.
pub fn route(method: Method) -> &'static Route {
    routes(method)
        .next()
        .expect("every operation has a route in the table")
}

/// Every route of `method`, the one a client uses first.
pub fn routes(method: Method) -> impl Iterator<Item = &'static Route> {
    ROUTES.iter().filter(move |r| r.method == method)
}

/// One segment of a template.
enum Segment<'a> {
    /// A literal: `tasks`, `message:send`.
    Literal(&'a str),
    /// A field, with the verb that follows it in the segment, if any: `{id}:cancel`.
    Field(&'a str, Option<&'a str>),
}

fn segments(template: &str) -> impl Iterator<Item = Segment<'_>> {
    template.split('/').filter(|s| !s.is_empty()).map(|s| {
        match s.strip_prefix('{').and_then(|s| s.split_once('}')) {
            Some((name, verb)) => Segment::Field(name, verb.strip_prefix(':')),
            None => Segment::Literal(s),
        }
    })
}

impl Route {
    /// The names of the path's fields, in order: `["taskId", "id"]`.
    pub fn fields(&self) -> impl Iterator<Item = &'static str> {
        segments(self.template).filter_map(|s| match s {
            Segment::Field(name, _) => Some(name),
            Segment::Literal(_) => None,
        })
    }

    /// The request path: the tenant (when there is a non-empty one) as the first segment, then
    /// the template with each field's value from `field(name)`, percent-encoded.
    pub fn path<S: AsRef<str>>(
        &self,
        tenant: Option<&str>,
        mut field: impl FnMut(&'static str) -> S,
    ) -> String {
        let mut path = String::new();
        if let Some(t) = tenant.filter(|t| !t.is_empty()) {
            path.push('/');
            path.push_str(&percent_encode(t));
        }
        for segment in segments(self.template) {
            path.push('/');
            match segment {
                Segment::Literal(s) => path.push_str(s),
                Segment::Field(name, verb) => {
                    path.push_str(&percent_encode(field(name).as_ref()));
                    if let Some(verb) = verb {
                        path.push(':');
                        path.push_str(verb);
                    }
                }
            }
        }
        path
    }

    /// Matches path segments (still percent-encoded, without a tenant), giving the fields.
    fn match_segments(&self, raw: &[&str]) -> Option<Vec<(&'static str, String)>> {
        let mut fields = Vec::new();
        let mut raw = raw.iter();
        for segment in segments(self.template) {
            let s = raw.next()?;
            match segment {
                Segment::Literal(l) => {
                    if *s != l && percent_decode(s) != l {
                        return None;
                    }
                }
                Segment::Field(name, None) => fields.push((name, percent_decode(s))),
                Segment::Field(name, Some(verb)) => {
                    let value = s.strip_suffix(verb)?.strip_suffix(':')?;
                    fields.push((name, percent_decode(value)));
                }
            }
        }
        raw.next().is_none().then_some(fields)
    }
}

/// A request path matched against the table: the tenant, the path's fields, and the routes
/// with this path (one per HTTP method it accepts).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathMatch {
    /// The tenant segment, decoded, if the path has one.
    pub tenant: Option<String>,
    /// The path's fields, decoded, in order: `[("taskId", "t-1"), ("id", "c-1")]`.
    pub fields: Vec<(&'static str, String)>,
    template: &'static str,
}

impl PathMatch {
    /// The routes with this path.
    pub fn routes(&self) -> impl Iterator<Item = &'static Route> + '_ {
        ROUTES.iter().filter(|r| r.template == self.template)
    }

    /// The route for `method` at this path; `None` when the path does not accept it.
    pub fn route(&self, method: HttpMethod) -> Option<&'static Route> {
        self.routes().find(|r| r.http_method == method)
    }

    /// The HTTP methods this path accepts, for an `Allow` header: `GET, POST`.
    pub fn allow(&self) -> String {
        let mut methods: Vec<HttpMethod> = self.routes().map(|r| r.http_method).collect();
        methods.sort_unstable();
        methods.dedup();
        let mut allow = String::new();
        for m in methods {
            if !allow.is_empty() {
                allow.push_str(", ");
            }
            allow.push_str(m.as_str());
        }
        allow
    }
}

/// Matches a request path to the table. A path that matches a route as it is has no tenant;
/// otherwise its first segment is the tenant. Empty segments are skipped. `None` if no route
/// has this path.
pub fn match_path(path: &str) -> Option<PathMatch> {
    let raw: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let find = |raw: &[&str]| {
        // A template is listed once per HTTP method; the first that matches decides. A
        // template whose field ends in a `:verb` is tried before the others, so `/tasks/x:cancel`
        // is CancelTask, not GetTask of `x:cancel` (an id with a colon is sent as `%3A`).
        let verb = |r: &&Route| r.template.contains("}:");
        let verbs = ROUTES.iter().filter(verb);
        verbs
            .chain(ROUTES.iter().filter(|r| !verb(r)))
            .find_map(|r| Some((r.template, r.match_segments(raw)?)))
    };
    if let Some((template, fields)) = find(&raw) {
        return Some(PathMatch {
            tenant: None,
            fields,
            template,
        });
    }
    let (tenant, rest) = raw.split_first()?;
    let (template, fields) = find(rest)?;
    Some(PathMatch {
        tenant: Some(percent_decode(tenant)),
        fields,
        template,
    })
}

/// Percent-encodes everything but the unreserved characters (`A-Z a-z 0-9 - . _ ~`).
pub fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// Decodes a query string's key or value (`application/x-www-form-urlencoded`): `+` is a
/// space, then [`percent_decode`].
pub fn query_decode(s: &str) -> String {
    percent_decode(&s.replace('+', " "))
}

/// Decodes `%XX` escapes; a `%` not followed by two hex digits stays as it is, and bytes that
/// are not UTF-8 become U+FFFD.
pub fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        // Two hex digits (`u8::from_str_radix` alone would also take a sign: `%+1`).
        let hex = bytes
            .get(i + 1..i + 3)
            .filter(|h| h.iter().all(u8::is_ascii_hexdigit));
        if let (b'%', Some(h)) = (bytes[i], hex) {
            let digit = |c: u8| (c as char).to_digit(16).unwrap_or_default() as u8;
            out.push((digit(h[0]) << 4) | digit(h[1]));
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values that need encoding: spaces, slashes, colons (also a verb's), `%`, non-ASCII.
    const AWKWARD: [&str; 7] = [
        "t-1",
        "t 1",
        "a/b",
        "x:cancel",
        "x:subscribe",
        "100%25 ü",
        "tasks",
    ];

    #[test]
    fn every_operation_has_a_route() {
        for m in Method::ALL {
            assert_eq!(route(m).method, m);
        }
    }

    #[test]
    fn every_route_built_then_matched_gives_back_its_operation_and_fields() {
        for route in &ROUTES {
            for tenant in [None, Some("acme"), Some("a b/c:d")] {
                for value in AWKWARD {
                    let values: Vec<String> = route
                        .fields()
                        .enumerate()
                        .map(|(i, name)| format!("{value}{i}{name}"))
                        .collect();
                    let mut next = values.iter();
                    let path = route.path(tenant, |_| next.next().expect("a value").clone());
                    let found = match_path(&path).unwrap_or_else(|| panic!("{path} matches"));
                    assert_eq!(found.tenant.as_deref(), tenant, "{path}");
                    let names: Vec<_> = route.fields().collect();
                    let expected: Vec<_> = names.into_iter().zip(values.clone()).collect();
                    assert_eq!(found.fields, expected, "{path}");
                    assert_eq!(found.route(route.http_method), Some(route), "{path}");
                }
            }
        }
    }

    #[test]
    fn a_path_lists_the_methods_it_accepts() {
        let allow = |path: &str| match_path(path).map(|m| m.allow());
        assert_eq!(allow("/message:send").as_deref(), Some("POST"));
        assert_eq!(allow("/tasks").as_deref(), Some("GET"));
        assert_eq!(allow("/tasks/t-1").as_deref(), Some("GET"));
        assert_eq!(allow("/tasks/t-1:cancel").as_deref(), Some("POST"));
        assert_eq!(allow("/tasks/t-1:subscribe").as_deref(), Some("GET, POST"));
        assert_eq!(
            allow("/acme/tasks/t/pushNotificationConfigs").as_deref(),
            Some("GET, POST")
        );
        assert_eq!(
            allow("/tasks/t/pushNotificationConfigs/c").as_deref(),
            Some("GET, DELETE")
        );
        let found = match_path("/tasks/t-1:cancel").unwrap();
        assert_eq!(found.route(HttpMethod::Get), None);
    }

    #[test]
    fn paths_are_told_apart_by_verb_suffix_and_tenant() {
        use HttpMethod::{Get, Post};
        #[rustfmt::skip]
        let cases = [
            ("/message:send", Post, Method::SendMessage, None, None),
            ("/tasks/t-1", Get, Method::GetTask, None, Some("t-1")),
            ("/tasks/t-1:subscribe", Post, Method::SubscribeToTask, None, Some("t-1")),
            ("/acme/tasks", Get, Method::ListTasks, Some("acme"), None),
            ("//acme//tasks/t%201:cancel/", Post, Method::CancelTask, Some("acme"), Some("t 1")),
            // An encoded colon is part of the id, not a verb.
            ("/tasks/t%3Acancel", Get, Method::GetTask, None, Some("t:cancel")),
            ("/acme/message:stream", Post, Method::SendStreamingMessage, Some("acme"), None),
        ];
        for (path, verb, method, tenant, id) in cases {
            let found = match_path(path).unwrap_or_else(|| panic!("{path} matches"));
            assert_eq!(found.route(verb).map(|r| r.method), Some(method), "{path}");
            assert_eq!(found.tenant.as_deref(), tenant, "{path}");
            let fields: Vec<_> = id.map(|id| ("id", id.to_owned())).into_iter().collect();
            assert_eq!(found.fields, fields, "{path}");
        }
        assert_eq!(match_path("/nothing/here/at/all/x"), None);
        assert_eq!(match_path("/"), None);
    }

    #[test]
    fn percent_decoding_keeps_what_is_not_an_escape() {
        assert_eq!(percent_decode("a%20b%2"), "a b%2");
        assert_eq!(percent_decode("%zz%C3%BC"), "%zzü");
        assert_eq!(percent_decode(&percent_encode("ü /:%")), "ü /:%");
        assert_eq!(query_decode("a+b%2B%"), "a b+%");
        assert_eq!(percent_decode("%+1%-1%41"), "%+1%-1A");
    }
}
