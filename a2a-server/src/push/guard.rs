//! The SSRF guard: which webhook addresses are refused, the allow-list, and the resolver
//! that checks the address a connection will actually use.

use super::PushSettings;
use a2a_core::Error;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

impl PushSettings {
    pub(super) fn host_allowed(&self, host: &str) -> bool {
        self.allow.iter().any(|r| match r {
            AllowRule::Host(h) => h.eq_ignore_ascii_case(host.trim_end_matches('.')),
            AllowRule::Net(..) => false,
        })
    }

    pub(super) fn ip_allowed(&self, ip: IpAddr) -> bool {
        !is_forbidden(ip)
            || self.allow.iter().any(|r| match r {
                AllowRule::Net(net, prefix) => in_net(ip, *net, *prefix),
                AllowRule::Host(_) => false,
            })
    }

    /// Checks a webhook URL before registering it: an http(s) URL whose host, if it is an
    /// address, is allowed. (Host names are checked when resolved, at every delivery.)
    pub(crate) fn check_url(&self, url: &str) -> Result<reqwest::Url, Error> {
        let refuse = |why: String| Error::invalid_params("url", why);
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
/// (CGNAT), documentation and other reserved ranges.
pub fn is_forbidden(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
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
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_forbidden(IpAddr::V4(v4));
            }
            let first = v6.segments()[0];
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00 // unique local
                || (first & 0xffc0) == 0xfe80 // link-local
                || (first & 0xffc0) == 0xfec0 // site-local
                || first == 0x2001 && v6.segments()[1] == 0x0db8 // documentation
        }
    }
}

/// Resolves webhook host names, keeping only addresses the guard allows: the check happens on
/// the address the connection will use, so DNS rebinding cannot slip past it.
pub(super) struct GuardedResolver(pub(super) Arc<PushSettings>);

impl reqwest::dns::Resolve for GuardedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let settings = self.0.clone();
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let addrs: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let all = settings.host_allowed(&host);
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
