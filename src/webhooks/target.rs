//! Where a webhook may send (CONTRACT.md 15): http(s) URLs whose addresses are public. A
//! webhook is a request the server makes for an API caller, so without this a caller could
//! make the server reach its own network (SSRF). The url is checked at create and PATCH (an
//! address written in it, and `localhost`), and every delivery checks again every address
//! the name resolves to, then connects only to those ([`CheckedResolver`]), so a name that
//! resolves to a public address when created and a private one later (DNS rebinding) is
//! refused.

use std::{
    net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr},
    sync::Arc,
};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use url::{Host, Url};

use super::URL_CHARS;
use crate::error::{Error, Result};

/// Why `ip` is not a public unicast address, if it isn't: what a webhook may not reach
/// unless `webhooks.allow_private_targets` is set.
pub(crate) fn refused(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => refused_v4(v4),
        IpAddr::V6(v6) => refused_v6(v6),
    }
}

fn refused_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, ..] = ip.octets();
    Some(if ip.is_loopback() {
        "loopback"
    } else if ip.is_private() {
        "private"
    } else if a == 100 && (64..128).contains(&b) {
        "shared (CGNAT)"
    } else if ip.is_link_local() {
        "link-local"
    } else if a == 0 {
        "unspecified"
    } else if ip.is_broadcast() || ip.is_multicast() || a >= 240 {
        "not unicast"
    } else {
        return None;
    })
}

fn refused_v6(ip: Ipv6Addr) -> Option<&'static str> {
    // An IPv4 address in IPv6 clothes (`::ffff:a.b.c.d`, or NAT64's `64:ff9b::a.b.c.d`)
    // reaches that IPv4 address.
    if let Some(v4) = ip.to_ipv4_mapped() {
        return refused_v4(v4);
    }
    let segments = ip.segments();
    if segments[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        let [a, b] = segments[6].to_be_bytes();
        let [c, d] = segments[7].to_be_bytes();
        return refused_v4(Ipv4Addr::new(a, b, c, d));
    }
    Some(if ip.is_loopback() {
        "loopback"
    } else if ip.is_unspecified() {
        "unspecified"
    } else if segments[0] & 0xfe00 == 0xfc00 {
        "unique-local"
    } else if segments[0] & 0xffc0 == 0xfe80 || segments[0] & 0xffc0 == 0xfec0 {
        "link-local"
    } else if ip.is_multicast() {
        "not unicast"
    } else {
        return None;
    })
}

fn url_error(expected: &str) -> Error {
    Error::validation("url", expected)
}

/// `text` as the webhook's url (normalised, as it will be requested): http or https, a
/// host, at most [`URL_CHARS`] characters, and (unless `allow_private`) no refused address
/// written in it and no `localhost`. A name is resolved only at delivery.
pub(crate) fn checked_url(text: &str, allow_private: bool) -> Result<String> {
    if text.chars().count() > URL_CHARS {
        return Err(url_error(&format!(
            "an http(s) URL of at most {URL_CHARS} characters"
        )));
    }
    let url = Url::parse(text).map_err(|_| url_error("an absolute http(s) URL"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(url_error("an http or https URL"));
    }
    let refusal = match url.host() {
        None => return Err(url_error("an http(s) URL with a host")),
        Some(Host::Ipv4(ip)) => refused(IpAddr::V4(ip)),
        Some(Host::Ipv6(ip)) => refused(IpAddr::V6(ip)),
        Some(Host::Domain(name)) => is_localhost(name).then_some("loopback"),
    };
    match refusal {
        Some(kind) if !allow_private => Err(url_error(&format!(
            "a URL of a public address (this one is {kind})"
        ))),
        _ => Ok(url.to_string()),
    }
}

fn is_localhost(name: &str) -> bool {
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    name == "localhost" || name.ends_with(".localhost")
}

/// What a delivery may not send to, known before resolving: an address written in the url
/// that is refused (`None` when it may go, or names a host to resolve).
pub(crate) fn refused_literal(url: &str, allow_private: bool) -> Option<String> {
    if allow_private {
        return None;
    }
    let host = Url::parse(url).ok()?.host()?.to_owned();
    let kind = match host {
        Host::Ipv4(ip) => refused(IpAddr::V4(ip)),
        Host::Ipv6(ip) => refused(IpAddr::V6(ip)),
        Host::Domain(_) => None,
    }?;
    Some(format!("refused: the url's address is {kind}"))
}

/// The resolver of the delivery client: resolves a name with the system's resolver, and
/// refuses it when any address it gives is refused (unless private targets are allowed);
/// the connection then goes to one of the addresses checked here, never to a second
/// answer of the name.
pub(crate) struct CheckedResolver {
    pub allow_private: bool,
}

impl Resolve for CheckedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let allow_private = self.allow_private;
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let addrs: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            if let Some(kind) = addrs
                .iter()
                .find_map(|a| refused(a.ip()))
                .filter(|_| !allow_private)
            {
                return Err(refusal(kind));
            }
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

fn refusal(kind: &str) -> Box<dyn std::error::Error + Send + Sync> {
    format!("refused: the name resolves to a {kind} address").into()
}

/// The resolver to give the delivery client.
pub(crate) fn resolver(allow_private: bool) -> Arc<CheckedResolver> {
    Arc::new(CheckedResolver { allow_private })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_public_unicast_addresses_pass() {
        for refused_one in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "100.64.0.1",
            "100.127.255.255",
            "169.254.169.254",
            "0.0.0.0",
            "255.255.255.255",
            "224.0.0.1",
            "::1",
            "::",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "64:ff9b::a9fe:a9fe",
            "ff02::1",
        ] {
            let ip: IpAddr = refused_one.parse().unwrap();
            assert!(refused(ip).is_some(), "{refused_one} must be refused");
        }
        for public in [
            "93.184.215.14",
            "172.32.0.1",
            "100.128.0.1",
            "8.8.8.8",
            "2606:4700::1111",
            "::ffff:8.8.8.8",
        ] {
            let ip: IpAddr = public.parse().unwrap();
            assert_eq!(refused(ip), None, "{public} is public");
        }
    }

    #[test]
    fn urls_are_http_and_name_no_refused_address() {
        for bad in [
            "ftp://example.com/",
            "example.com/hook",
            "http://",
            "mailto:someone@example.com",
            "http://127.0.0.1:8080/x",
            "http://0x7f.1/",
            "http://2130706433/",
            "http://[::1]/",
            "http://[::ffff:192.168.0.1]/",
            "http://localhost/",
            "http://api.LOCALHOST./",
            "http://10.0.0.1/",
        ] {
            let refused = checked_url(bad, false);
            assert!(
                matches!(&refused, Err(Error::Validation { field, .. }) if field == "url"),
                "{bad}: {refused:?}"
            );
        }
        assert_eq!(
            checked_url("HTTPS://Example.com", false).unwrap(),
            "https://example.com/"
        );
        assert!(checked_url("http://127.0.0.1:9/", true).is_ok());
        let long = format!("https://example.com/{}", "a".repeat(URL_CHARS));
        assert!(checked_url(&long, false).is_err());
        assert!(refused_literal("http://[::1]:80/", false).is_some());
        assert!(refused_literal("http://[::1]:80/", true).is_none());
        assert!(refused_literal("https://example.com/", false).is_none());
    }
}
