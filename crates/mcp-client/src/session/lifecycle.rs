//! Which handshake a connect attempt makes: our `Lifecycle` mapped onto rmcp's
//! `ClientLifecycleMode`, and — when a server's answer to `server/discover` lists versions
//! without ours but with some of the `initialize` generation — which of those `initialize`
//! offers instead. What is sent and when each applies is in `PROTOCOL.md`; the attempts
//! themselves are `live::connect`'s.

use rmcp::model::ProtocolVersion;
use rmcp::service::ClientLifecycleMode;

/// How the handshake is done on this connect.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Lifecycle {
    /// Probe with `server/discover`, fall back to `initialize` (first contact).
    Auto,
    /// The version this upstream negotiated last time.
    Remembered(String),
    /// Plain `initialize` (after a probe timed out: some servers ignore unknown methods).
    LegacyInitialize,
    /// Plain `initialize` with a version the server listed in its answer to `server/discover`,
    /// which named no version we offer there (see [`initialize_fallback`]).
    Listed(ProtocolVersion),
}

/// rmcp's mode for `lifecycle`, and the version our handler states in `initialize`.
pub(crate) fn lifecycle_mode(lifecycle: &Lifecycle) -> (ClientLifecycleMode, ProtocolVersion) {
    match lifecycle {
        Lifecycle::Auto => (
            ClientLifecycleMode::Auto {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                legacy_version: Some(ProtocolVersion::LATEST_WITH_INITIALIZE),
            },
            ProtocolVersion::LATEST_WITH_INITIALIZE,
        ),
        Lifecycle::LegacyInitialize => (
            ClientLifecycleMode::Initialize,
            ProtocolVersion::LATEST_WITH_INITIALIZE,
        ),
        Lifecycle::Listed(version) => (ClientLifecycleMode::Initialize, version.clone()),
        Lifecycle::Remembered(version) => {
            let version = known_version(version);
            if version.has_initialize() {
                (ClientLifecycleMode::Initialize, version)
            } else {
                (
                    ClientLifecycleMode::Discover {
                        preferred_versions: vec![version.clone()],
                    },
                    version,
                )
            }
        }
    }
}

/// The `initialize` version to offer a server whose answer to `server/discover` (a discover
/// result, or an `UNSUPPORTED_PROTOCOL_VERSION` error) listed `server_supported` and none of
/// the versions we asked for: the newest version of the `initialize` generation among them
/// that rmcp knows. `None` when it lists none (it speaks nothing this client knows).
pub(crate) fn initialize_fallback(server_supported: &[ProtocolVersion]) -> Option<ProtocolVersion> {
    ProtocolVersion::KNOWN_VERSIONS
        .iter()
        .filter(|known| known.has_initialize() && server_supported.contains(known))
        .max_by(|left, right| left.as_str().cmp(right.as_str()))
        .cloned()
}

fn known_version(text: &str) -> ProtocolVersion {
    ProtocolVersion::KNOWN_VERSIONS
        .iter()
        .find(|known| known.as_str() == text)
        .cloned()
        .unwrap_or(ProtocolVersion::LATEST_WITH_INITIALIZE)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn versions(texts: &[&str]) -> Vec<ProtocolVersion> {
        serde_json::from_value(serde_json::json!(texts)).unwrap()
    }

    #[test]
    fn the_fallback_is_the_newest_listed_initialize_version_we_know() {
        for (listed, expected) in [
            (&["2025-11-25"][..], Some("2025-11-25")),
            (&["2025-03-26", "2025-06-18"][..], Some("2025-06-18")),
            // Unknown versions are passed over, whichever generation their date suggests.
            (
                &["2031-01-01", "2025-03-26", "2025-10-01"][..],
                Some("2025-03-26"),
            ),
            (&["2024-11-05"][..], Some("2024-11-05")),
            (&["2031-01-01", "2024-01-01"][..], None),
            // Only stateless versions (were one ours, rmcp would have chosen it).
            (&["2026-07-28"][..], None),
            (&[][..], None),
        ] {
            assert_eq!(
                initialize_fallback(&versions(listed))
                    .as_ref()
                    .map(ProtocolVersion::as_str),
                expected,
                "{listed:?}"
            );
        }
    }

    #[test]
    fn a_listed_version_is_offered_in_a_plain_initialize() {
        let (mode, version) = lifecycle_mode(&Lifecycle::Listed(ProtocolVersion::V_2025_06_18));
        assert!(matches!(mode, ClientLifecycleMode::Initialize));
        assert_eq!(version, ProtocolVersion::V_2025_06_18);
    }
}
