//! `server.apps_origin`: the origin browsers load MCP Apps from. It must be an origin (scheme,
//! host, port; no path, query or credentials) other than the UI's, or an app would share the
//! UI's cookies and storage.

use crate::config::PublicUrl;
use serde::Deserialize;
use switchboard_core::InvalidSetting;

/// An `http(s)://host[:port]` origin, without a trailing slash.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub struct AppsOrigin(String);

impl TryFrom<String> for AppsOrigin {
    type Error = String;

    fn try_from(origin: String) -> Result<Self, Self::Error> {
        Self::parse(&origin).map_err(|invalid| invalid.reason)
    }
}

impl AppsOrigin {
    /// `origin` as an apps origin, or why it cannot be one.
    pub fn parse(origin: &str) -> Result<Self, InvalidSetting> {
        let invalid = |reason: String| InvalidSetting::new("apps_origin", reason);
        let url =
            url::Url::parse(origin).map_err(|error| invalid(format!("not a URL: {error}")))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(invalid("must be an http:// or https:// origin".into()));
        }
        if url.host_str().is_none_or(str::is_empty) {
            return Err(invalid("must name a host".into()));
        }
        if url.path() != "/" || url.query().is_some() || url.fragment().is_some() {
            return Err(invalid(
                "must be an origin only (no path, query or fragment)".into(),
            ));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(invalid("must not carry credentials".into()));
        }
        Ok(Self(url.origin().ascii_serialization()))
    }

    /// Refuses the UI's own origin.
    pub fn validate_against(&self, public_url: &PublicUrl) -> Result<(), InvalidSetting> {
        if public_url.as_url().origin().ascii_serialization() == self.0 {
            return Err(InvalidSetting::new(
                "apps_origin",
                "must differ from public_url's origin (apps must not share the UI's origin)",
            ));
        }
        Ok(())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_origin_other_than_the_ui_is_taken() {
        let origin = AppsOrigin::parse("https://apps.example.com:8443/").unwrap();
        assert_eq!(origin.as_str(), "https://apps.example.com:8443");
        for bad in [
            "ftp://apps.example.com",
            "https://apps.example.com/sub",
            "https://apps.example.com/?a=1",
            "https://user:pw@apps.example.com",
            "not a url",
        ] {
            assert!(AppsOrigin::parse(bad).is_err(), "{bad}");
        }
        let public_url = PublicUrl::parse("http://127.0.0.1:8080").unwrap();
        let same = AppsOrigin::parse("http://127.0.0.1:8080").unwrap();
        assert_eq!(
            same.validate_against(&public_url).unwrap_err().key,
            "apps_origin"
        );
        let other_port = AppsOrigin::parse("http://127.0.0.1:8081").unwrap();
        assert!(other_port.validate_against(&public_url).is_ok());
    }
}
