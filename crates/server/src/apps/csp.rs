//! The Content-Security-Policy of an app's sandbox page, built from what its resource declares
//! in `_meta.ui.csp` (SEP-1865) and nothing else: `connectDomains` → `connect-src`,
//! `resourceDomains` → scripts, styles, images, fonts and media, `frameDomains` → `frame-src`,
//! `baseUriDomains` → `base-uri`. Nothing declared means no network at all (`connect-src
//! 'none'`, resources inline or `data:` only). An entry that is not a plain source
//! (`https://host[:port]`, `wss://…`, `https://*.example.com`) is dropped, so a declaration
//! cannot smuggle a keyword (`'unsafe-eval'`, `*`) or another directive (`;`) into the header.
//! The page is sandboxed by the header too (`sandbox allow-scripts`), so opening its URL
//! outside the UI's iframe gives it no origin either.

use serde_json::Value;

/// The header value for a resource whose content `_meta` is `meta`.
pub fn content_security_policy(meta: Option<&Value>) -> String {
    let declared = meta
        .and_then(|meta| meta.get("ui"))
        .and_then(|ui| ui.get("csp"));
    let domains = |key: &str| -> Vec<String> {
        declared
            .and_then(|csp| csp.get(key))
            .and_then(Value::as_array)
            .map(|entries| {
                entries
                    .iter()
                    .filter_map(Value::as_str)
                    .filter(|entry| is_plain_source(entry))
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    };
    let connect = domains("connectDomains");
    let resources = domains("resourceDomains");
    let frames = domains("frameDomains");
    let base_uris = domains("baseUriDomains");
    let with = |base: &str, extra: &[String]| -> String {
        std::iter::once(base.to_owned())
            .chain(extra.iter().cloned())
            .collect::<Vec<_>>()
            .join(" ")
    };
    let or_none = |list: &[String]| {
        if list.is_empty() {
            "'none'".to_owned()
        } else {
            list.join(" ")
        }
    };
    [
        "default-src 'none'".to_owned(),
        format!("script-src {}", with("'self' 'unsafe-inline'", &resources)),
        format!("style-src {}", with("'self' 'unsafe-inline'", &resources)),
        format!("img-src {}", with("'self' data:", &resources)),
        format!("font-src {}", with("'self' data:", &resources)),
        format!("media-src {}", with("'self' data:", &resources)),
        format!("connect-src {}", or_none(&connect)),
        format!("frame-src {}", or_none(&frames)),
        format!("base-uri {}", with("'self'", &base_uris)),
        "form-action 'none'".to_owned(),
        "object-src 'none'".to_owned(),
        "sandbox allow-scripts".to_owned(),
    ]
    .join("; ")
}

/// `scheme://host[:port]` with an optional leading `*.` label, scheme http(s) or ws(s).
fn is_plain_source(entry: &str) -> bool {
    let Some((scheme, rest)) = entry.split_once("://") else {
        return false;
    };
    if !matches!(scheme, "https" | "http" | "wss" | "ws") {
        return false;
    }
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    let (host, port) = match rest.rsplit_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (rest, None),
    };
    let host = host.strip_prefix("*.").unwrap_or(host);
    let host_ok = !host.is_empty()
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
        && !host.starts_with('.');
    let port_ok = port.is_none_or(|port| {
        port == "*"
            || (!port.is_empty() && port.len() <= 5 && port.chars().all(|c| c.is_ascii_digit()))
    });
    host_ok && port_ok
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nothing_declared_means_no_network() {
        let policy = content_security_policy(None);
        assert!(policy.contains("connect-src 'none'"), "{policy}");
        assert!(policy.contains("frame-src 'none'"), "{policy}");
        assert!(policy.starts_with("default-src 'none'"), "{policy}");
        assert!(policy.ends_with("sandbox allow-scripts"), "{policy}");
        assert_eq!(policy, content_security_policy(Some(&json!({"ui": {}}))));
    }

    #[test]
    fn declared_domains_go_to_their_directives_and_nothing_else_gets_in() {
        let meta = json!({"ui": {"csp": {
            "connectDomains": ["https://api.example.com", "wss://live.example.com:8443",
                "'unsafe-eval'", "*", "https://x.com; script-src *", "javascript:alert(1)"],
            "resourceDomains": ["https://*.cdn.example.com"],
            "frameDomains": ["https://maps.example.com/"],
        }}});
        let policy = content_security_policy(Some(&meta));
        assert!(
            policy.contains("connect-src https://api.example.com wss://live.example.com:8443;"),
            "{policy}"
        );
        assert!(
            policy.contains("script-src 'self' 'unsafe-inline' https://*.cdn.example.com;"),
            "{policy}"
        );
        assert!(policy.contains("img-src 'self' data: https://*.cdn.example.com;"));
        assert!(
            policy.contains("frame-src https://maps.example.com/;"),
            "{policy}"
        );
        assert!(
            !policy.contains("unsafe-eval") && !policy.contains("x.com"),
            "{policy}"
        );
        assert_eq!(policy.matches("script-src").count(), 1);
    }
}
