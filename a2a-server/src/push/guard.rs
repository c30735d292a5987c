//! The SSRF guard: which webhook addresses are refused, the allow-list, and the resolver
//! that checks the address a connection will actually use.

use super::PushSettings;
use a2a_core::Error;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

/// The longest webhook URL accepted, in bytes: 8,192. RFC 9110 (section 4.1) asks HTTP
/// software to support URIs of at least 8,000 octets, and common servers refuse request lines
/// much longer (nginx's default buffer is 8 KiB), so a longer URL would not be deliverable
/// anyway. The bound keeps a registration's size, and the error messages that quote its URL,
/// small: a caller cannot make the server store and echo a megabyte per webhook.
pub const MAX_WEBHOOK_URL_BYTES: usize = 8 << 10;

impl PushSettings {
    pub(super) fn host_allowed(&self, host: &str) -> bool {
        self.allow.iter().any(|r| match r {
            AllowRule::Host(h) => h.eq_ignore_ascii_case(host.trim_end_matches('.')),
            AllowRule::Net(..) => false,
        })
    }

    /// Whether a webhook may reach `ip`: it is not forbidden, or the allow-list exempts it.
    /// An IPv6 address that embeds an IPv4 one (see [`embedded_ipv4`]) passes only if its
    /// own range is allowed or forbidden by nothing, and each embedded IPv4 address is
    /// allowed too (listed, or not forbidden): an allowed `10.0.0.0/8` also lets
    /// `64:ff9b::a00:1` (NAT64 to 10.0.0.1) through, an allowed `64:ff9b::/96` lets every
    /// NAT64 address through.
    pub(super) fn ip_allowed(&self, ip: IpAddr) -> bool {
        if self.net_allowed(ip) {
            return true;
        }
        match ip {
            IpAddr::V4(v4) => !forbidden_v4(v4),
            IpAddr::V6(v6) => {
                !forbidden_v6_range(v6)
                    && embedded_ipv4(v6)
                        .is_none_or(|v4| !forbidden_v4(v4) || self.net_allowed(IpAddr::V4(v4)))
            }
        }
    }

    /// Whether an allow-list range contains `ip`.
    fn net_allowed(&self, ip: IpAddr) -> bool {
        self.allow.iter().any(|r| match r {
            AllowRule::Net(net, prefix) => in_net(ip, *net, *prefix),
            AllowRule::Host(_) => false,
        })
    }

    /// Checks a webhook URL before registering it: an http(s) URL of at most
    /// [`MAX_WEBHOOK_URL_BYTES`] whose host, if it is an address, is allowed. (Host names are
    /// checked when resolved, at every delivery.)
    pub(crate) fn check_url(&self, url: &str) -> Result<reqwest::Url, Error> {
        let refuse = |why: String| Error::invalid_params("url", why);
        if url.len() > MAX_WEBHOOK_URL_BYTES {
            // Not quoted: the point is not to echo it.
            return Err(refuse(format!(
                "the URL is {} bytes long; webhook URLs are limited to {MAX_WEBHOOK_URL_BYTES} bytes",
                url.len()
            )));
        }
        let parsed =
            reqwest::Url::parse(url).map_err(|e| refuse(format!("{url:?} is not a URL: {e}")))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(refuse(format!("{url:?} must be an http or https URL")));
        }
        let host = parsed
            .host_str()
            .ok_or_else(|| refuse(format!("{url:?} has no host")))?;
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        let refused = match bare.parse::<IpAddr>() {
            Ok(ip) => !self.ip_allowed(ip),
            Err(_) => {
                let name = bare.trim_end_matches('.').to_ascii_lowercase();
                (name == "localhost" || name.ends_with(".localhost")) && !self.host_allowed(&name)
            }
        };
        if refused {
            return Err(refuse(format!(
                "{url:?} points to a loopback, private or reserved address; webhooks there are refused"
            )));
        }
        Ok(parsed)
    }
}

/// An allow-list entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum AllowRule {
    Host(String),
    Net(IpAddr, u8),
}

impl AllowRule {
    pub(super) fn parse(s: &str) -> Result<Self, String> {
        let s = s.trim();
        let (addr, prefix) = match s.split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (s, None),
        };
        if let Ok(ip) = addr.trim_matches(['[', ']']).parse::<IpAddr>() {
            let max = if ip.is_ipv4() { 32 } else { 128 };
            let prefix = match prefix {
                Some(p) => p
                    .parse::<u8>()
                    .ok()
                    .filter(|p| *p <= max)
                    .ok_or_else(|| format!("{s:?}: bad prefix length"))?,
                None => max,
            };
            return Ok(AllowRule::Net(ip, prefix));
        }
        if prefix.is_some() || s.is_empty() || s.contains(['/', ':', ' ']) {
            return Err(format!("{s:?} is neither a host name nor an address range"));
        }
        Ok(AllowRule::Host(s.to_ascii_lowercase()))
    }
}

fn in_net(ip: IpAddr, net: IpAddr, prefix: u8) -> bool {
    match (ip, net) {
        (IpAddr::V4(a), IpAddr::V4(n)) => {
            let mask = if prefix == 0 {
                0
            } else {
                u32::MAX << (32 - u32::from(prefix))
            };
            u32::from(a) & mask == u32::from(n) & mask
        }
        (IpAddr::V6(a), IpAddr::V6(n)) => {
            let mask = if prefix == 0 {
                0
            } else {
                u128::MAX << (128 - u32::from(prefix))
            };
            u128::from(a) & mask == u128::from(n) & mask
        }
        (IpAddr::V6(a), IpAddr::V4(_)) => a
            .to_ipv4_mapped()
            .is_some_and(|v4| in_net(IpAddr::V4(v4), net, prefix)),
        _ => false,
    }
}

/// Addresses a webhook must not reach: loopback, private (RFC 1918, unique local), link-local
/// (including 169.254.169.254, cloud metadata), unspecified, multicast, broadcast, shared
/// (CGNAT), documentation and other reserved ranges, the NAT64 local-use prefix
/// `64:ff9b:1::/48`; and IPv6 addresses that embed such an IPv4 address (IPv4-mapped,
/// IPv4-compatible, IPv4-translated, NAT64 `64:ff9b::/96`, 6to4, Teredo, ISATAP), since the
/// network hands those to the embedded address.
pub fn is_forbidden(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => forbidden_v4(v4),
        IpAddr::V6(v6) => forbidden_v6_range(v6) || embedded_ipv4(v6).is_some_and(forbidden_v4),
    }
}

fn forbidden_v4(v4: Ipv4Addr) -> bool {
    let o = v4.octets();
    v4.is_loopback()
        || v4.is_private()
        || v4.is_link_local()
        || v4.is_unspecified()
        || v4.is_multicast()
        || v4.is_broadcast()
        || v4.is_documentation()
        || o[0] == 0
        || (o[0] == 100 && (64..128).contains(&o[1]))
        || o[0] >= 240
        || (o[0] == 192 && o[1] == 0 && o[2] == 0)
        || (o[0] == 198 && (18..20).contains(&o[1]))
}

/// IPv6 ranges refused for themselves (whatever they embed).
fn forbidden_v6_range(v6: Ipv6Addr) -> bool {
    let s = v6.segments();
    v6.is_loopback()
        || v6.is_unspecified()
        || v6.is_multicast()
        || (s[0] & 0xfe00) == 0xfc00 // unique local
        || (s[0] & 0xffc0) == 0xfe80 // link-local
        || (s[0] & 0xffc0) == 0xfec0 // site-local
        || (s[0] == 0x2001 && s[1] == 0x0db8) // documentation
        || (s[0] == 0x0100 && s[1..4] == [0, 0, 0]) // discard-only, 100::/64
        || s[..3] == [0x64, 0xff9b, 1] // NAT64 local-use (see `embedded_ipv4`)
}

/// The IPv4 addresses an IPv6 address hands traffic to, for every form that embeds one:
///
/// - IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible `::a.b.c.d` (deprecated, still routed by
///   some stacks), IPv4-translated `::ffff:0:a.b.c.d` (SIIT): the last 32 bits;
/// - NAT64, the well-known prefix `64:ff9b::/96`: the last 32 bits;
/// - 6to4 `2002:a.b.c.d::/48`: bits 16 to 47;
/// - Teredo `2001:0::/32`: the client, the last 32 bits inverted (the server address, bits 32
///   to 63, only relays);
/// - ISATAP interface ids (`…:0:5efe:a.b.c.d`, with the universal/group bits either way, under
///   any prefix): the last 32 bits, the tunnel end point inside the site, which is why it is
///   checked like the destination.
///
/// (The NAT64 local-use prefix `64:ff9b:1::/48` of RFC 8215 is refused as a whole instead:
/// its operator chooses where in the address the IPv4 one sits, and what it translates to is
/// the operator's own network.)
pub(crate) fn embedded_ipv4(v6: Ipv6Addr) -> Option<Ipv4Addr> {
    let bits = u128::from(v6);
    let s = v6.segments();
    // `width` bits of the address from bit `from` (0 = the most significant).
    let field =
        |from: u32, width: u32| ((bits >> (128 - from - width)) & ((1 << width) - 1)) as u32;
    let compatible_or_mapped = s[..5] == [0; 5] && (s[5] == 0 || s[5] == 0xffff);
    let translated = s[..4] == [0; 4] && s[4] == 0xffff && s[5] == 0;
    let nat64 = s[..6] == [0x64, 0xff9b, 0, 0, 0, 0];
    let isatap = (s[4] & 0xfcff) == 0 && s[5] == 0x5efe;
    if s[0] == 0x2002 {
        Some(Ipv4Addr::from(field(16, 32))) // 6to4
    } else if s[0] == 0x2001 && s[1] == 0 {
        Some(Ipv4Addr::from(!field(96, 32))) // Teredo client
    } else if compatible_or_mapped || translated || nat64 || isatap {
        Some(Ipv4Addr::from(field(96, 32)))
    } else {
        None
    }
}

/// Resolves webhook host names, keeping only addresses the guard allows: the check happens on
/// the address the connection will use, so DNS rebinding cannot slip past it. (The host of
/// [`PushSettings::proxy`] is exempt: it is the operator's choice.)
pub(super) struct GuardedResolver(pub(super) Arc<PushSettings>);

impl reqwest::dns::Resolve for GuardedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let settings = self.0.clone();
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let addrs: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let proxy = settings.proxy.as_ref().and_then(|p| p.host_str());
            let all = settings.host_allowed(&host) || proxy == Some(host.as_str());
            let allowed: Vec<SocketAddr> = addrs
                .into_iter()
                .filter(|a| all || settings.ip_allowed(a.ip()))
                .collect();
            if allowed.is_empty() {
                return Err(format!(
                    "webhook host {host} resolves only to refused (private or reserved) addresses"
                )
                .into());
            }
            Ok(Box::new(allowed.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// Checks a webhook's host name before its request goes to [`PushSettings::proxy`], which
/// resolves the name again itself: it must resolve, and only to allowed addresses (the proxy
/// may use any of them). Addresses in the URL are checked by [`PushSettings::check_url`].
pub(super) async fn check_host(settings: &PushSettings, url: &reqwest::Url) -> Result<(), String> {
    let Some(host) = url.host_str() else {
        return Ok(());
    };
    if host.starts_with('[') || host.parse::<IpAddr>().is_ok() || settings.host_allowed(host) {
        return Ok(());
    }
    let addrs: Vec<IpAddr> = tokio::net::lookup_host((host, 0))
        .await
        .map_err(|e| format!("webhook host {host} does not resolve: {e}"))?
        .map(|a| a.ip())
        .collect();
    check_resolved(settings, host, &addrs)
}

/// [`check_host`] once resolved: `Err` unless every address is allowed (and there is one).
fn check_resolved(settings: &PushSettings, host: &str, addrs: &[IpAddr]) -> Result<(), String> {
    match addrs.iter().find(|ip| !settings.ip_allowed(**ip)) {
        _ if addrs.is_empty() => Err(format!("webhook host {host} has no address")),
        Some(ip) => Err(format!(
            "webhook host {host} resolves to the refused (private or reserved) address {ip}; \
             it is not handed to the proxy"
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn webhook_urls_are_limited_in_length_and_the_refusal_does_not_echo_them() {
        let url = |len: usize| {
            let base = "https://hooks.example.com/a2a?k=";
            format!("{base}{}", "a".repeat(len - base.len()))
        };
        let settings = PushSettings::default();
        assert!(settings.check_url(&url(MAX_WEBHOOK_URL_BYTES)).is_ok());
        let long = url(MAX_WEBHOOK_URL_BYTES + 1);
        let error = settings
            .check_url(&long)
            .expect_err("one byte over the limit");
        assert_eq!(
            error.code,
            a2a_core::ErrorKind::InvalidParams.json_rpc_code()
        );
        assert!(error.message.contains("8192 bytes"), "{}", error.message);
        assert!(error.message.len() < 200, "{}", error.message);
        let huge = url(1 << 20);
        assert!(settings.check_url(&huge).is_err());
    }

    #[test]
    fn private_loopback_link_local_and_reserved_addresses_are_forbidden() {
        for bad in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "224.0.0.1",
            "255.255.255.255",
            "100.64.0.1",
            "::1",
            "::",
            "fe80::1",
            "fc00::1",
            "fd12::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
        ] {
            assert!(is_forbidden(bad.parse().unwrap()), "{bad} must be refused");
        }
        for good in ["8.8.8.8", "172.32.0.1", "93.184.216.34", "2606:4700::1111"] {
            assert!(
                !is_forbidden(good.parse().unwrap()),
                "{good} must be allowed"
            );
        }
    }

    /// IPv6 forms that hand traffic to an embedded IPv4 address: (address, the IPv4 address
    /// it reaches).
    const EMBEDDING: &[(&str, &str)] = &[
        ("::127.0.0.1", "127.0.0.1"),        // IPv4-compatible
        ("::10.0.0.1", "10.0.0.1"),          // IPv4-compatible
        ("::ffff:127.0.0.1", "127.0.0.1"),   // IPv4-mapped
        ("::ffff:0:127.0.0.1", "127.0.0.1"), // IPv4-translated
        ("::ffff:0:169.254.169.254", "169.254.169.254"),
        ("64:ff9b::7f00:1", "127.0.0.1"), // NAT64, well-known prefix
        ("64:ff9b::a9fe:a9fe", "169.254.169.254"), // NAT64 to cloud metadata
        ("2002:7f00:1::1", "127.0.0.1"),  // 6to4
        ("2002:c0a8:101::", "192.168.1.1"), // 6to4
        ("2001:0:4136:e378:8000:63bf:80ff:fffe", "127.0.0.1"), // Teredo client
        ("2001:0:4136:e378:8000:63bf:f5ff:fffe", "10.0.0.1"), // Teredo client
        ("2001:db9::5efe:7f00:1", "127.0.0.1"), // ISATAP
        ("2001:db9::200:5efe:a00:1", "10.0.0.1"), // ISATAP, universal bit
    ];

    #[test]
    fn ipv6_addresses_embedding_a_forbidden_ipv4_address_are_forbidden() {
        for (v6, v4) in EMBEDDING {
            let ip: Ipv6Addr = v6.parse().unwrap();
            let v4: Ipv4Addr = v4.parse().unwrap();
            assert_eq!(embedded_ipv4(ip), Some(v4), "{v6}");
            assert!(is_forbidden(IpAddr::V6(ip)), "{v6} must be refused");
            assert!(!PushSettings::default().ip_allowed(IpAddr::V6(ip)), "{v6}");
            let url = format!("http://[{v6}]:8080/hook");
            assert!(PushSettings::default().check_url(&url).is_err(), "{url}");
        }
        // The same forms around public IPv4 addresses are fine.
        for good in [
            "::8.8.8.8",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
            "2002:808:808::1",
            "2001:0:4136:e378:8000:63bf:f7f7:f7f7", // Teredo client 8.8.8.8
            "2001:db9::5efe:808:808",
        ] {
            let ip: IpAddr = good.parse().unwrap();
            assert!(!is_forbidden(ip), "{good} must be allowed");
            assert!(PushSettings::default().ip_allowed(ip), "{good}");
        }
    }

    #[test]
    fn the_nat64_local_use_prefix_is_refused_as_a_whole_unless_allowed() {
        // Wherever its operator puts the IPv4 address (/96, /48, /56, /64 forms of 127.0.0.1,
        // 192.168.0.1, 10.0.0.1, and of the public 8.8.8.8).
        for v6 in [
            "64:ff9b:1::7f00:1",
            "64:ff9b:1:7f00:0:100::",
            "64:ff9b:1:c0:a8:1::",
            "64:ff9b:1:0:a:0:100:0",
            "64:ff9b:1::808:808",
        ] {
            let ip: IpAddr = v6.parse().unwrap();
            assert!(is_forbidden(ip), "{v6} must be refused");
            let url = format!("http://[{v6}]/hook");
            assert!(PushSettings::default().check_url(&url).is_err(), "{url}");
            let allowed = PushSettings::default().allow("64:ff9b:1::/48").unwrap();
            assert!(allowed.check_url(&url).is_ok(), "{url}");
        }
    }

    #[test]
    fn the_allow_list_exempts_embedded_addresses_by_their_ipv4_or_ipv6_range() {
        let v4 = PushSettings::default()
            .allow("127.0.0.1")
            .unwrap()
            .allow("10.0.0.0/8")
            .unwrap();
        for (v6, embedded) in EMBEDDING {
            let ip: IpAddr = v6.parse().unwrap();
            let exempt = *embedded == "127.0.0.1" || embedded.starts_with("10.");
            assert_eq!(v4.ip_allowed(ip), exempt, "{v6} (to {embedded})");
        }
        // An allowed IPv6 range exempts what it contains, whatever that embeds; but not
        // the loopback address embedded elsewhere.
        let nat64 = PushSettings::default().allow("64:ff9b::/96").unwrap();
        assert!(nat64.ip_allowed("64:ff9b::7f00:1".parse().unwrap()));
        assert!(nat64.check_url("http://[64:ff9b::a00:1]/hook").is_ok());
        assert!(!nat64.ip_allowed("2002:7f00:1::1".parse().unwrap()));
        assert!(!nat64.ip_allowed("::1".parse().unwrap()));
        let ula = PushSettings::default().allow("fd00::/8").unwrap();
        assert!(ula.ip_allowed("fd12::1".parse().unwrap()));
        assert!(!ula.ip_allowed("fe80::1".parse().unwrap()));
    }

    #[test]
    fn the_allow_list_exempts_hosts_and_ranges() {
        let s = PushSettings::default()
            .allow("127.0.0.1")
            .unwrap()
            .allow("10.0.0.0/8")
            .unwrap()
            .allow("hooks.internal")
            .unwrap();
        assert!(s.ip_allowed("127.0.0.1".parse().unwrap()));
        assert!(!s.ip_allowed("127.0.0.2".parse().unwrap()));
        assert!(s.ip_allowed("10.9.8.7".parse().unwrap()));
        assert!(!s.ip_allowed("192.168.0.1".parse().unwrap()));
        assert!(s.host_allowed("HOOKS.internal"));
        assert!(s.check_url("http://127.0.0.1:9/h").is_ok());
        assert!(s.check_url("http://192.168.0.1/h").is_err());
        assert!(s.check_url("ftp://example.com/h").is_err());
        assert!(
            PushSettings::default()
                .check_url("http://localhost:8080/h")
                .is_err()
        );
        assert!(PushSettings::default().check_url("http://[::1]/h").is_err());
        assert!(
            PushSettings::default()
                .check_url("https://hooks.example.com/a2a")
                .is_ok()
        );
        assert!(PushSettings::default().allow("10.0.0.0/33").is_err());
        assert!(PushSettings::default().allow("not a host").is_err());
    }

    #[test]
    fn a_proxied_host_must_resolve_to_allowed_addresses_only() {
        let s = PushSettings::default();
        let ips = |list: &[&str]| list.iter().map(|a| a.parse().unwrap()).collect::<Vec<_>>();
        assert!(check_resolved(&s, "h", &ips(&["93.184.216.34"])).is_ok());
        assert!(check_resolved(&s, "h", &ips(&["127.0.0.1"])).is_err());
        assert!(check_resolved(&s, "h", &ips(&["64:ff9b::7f00:1"])).is_err());
        // One refused address is enough: the proxy may pick it.
        assert!(check_resolved(&s, "h", &ips(&["93.184.216.34", "10.0.0.1"])).is_err());
        assert!(check_resolved(&s, "h", &[]).is_err());
        let allowed = PushSettings::default().allow("10.0.0.0/8").unwrap();
        assert!(check_resolved(&allowed, "h", &ips(&["93.184.216.34", "10.0.0.1"])).is_ok());
    }

    #[tokio::test]
    async fn a_proxied_host_is_resolved_and_checked_before_the_proxy_sees_it() {
        let s = PushSettings::default();
        let url = |u: &str| reqwest::Url::parse(u).unwrap();
        // `localhost` resolves to loopback everywhere (the name check of `check_url` aside).
        let err = check_host(&s, &url("http://localhost:9/hook"))
            .await
            .unwrap_err();
        assert!(err.contains("refused"), "{err}");
        assert!(
            check_host(&s, &url("http://nothing.invalid/hook"))
                .await
                .is_err()
        );
        let allowed = PushSettings::default().allow("localhost").unwrap();
        assert!(
            check_host(&allowed, &url("http://localhost:9/hook"))
                .await
                .is_ok()
        );
    }
}
