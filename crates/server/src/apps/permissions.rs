//! The browser permissions an app's resource declares in `_meta.ui.permissions` (SEP-1865's
//! `McpUiResourcePermissions`: `camera`, `microphone`, `geolocation`, `clipboardWrite`), and the
//! sandbox page's `Permissions-Policy` built from them: a declared feature is left to the
//! frame's `allow` attribute (which the UI sets to what the person allowed), every other one is
//! off whatever the frame says. Unknown names are ignored, so a declaration cannot reach a
//! feature the spec does not name.

use serde_json::Value;

/// The spec's names and the Permissions-Policy features they map to.
const KNOWN: [(&str, &str); 4] = [
    ("camera", "camera"),
    ("microphone", "microphone"),
    ("geolocation", "geolocation"),
    ("clipboardWrite", "clipboard-write"),
];

/// Features off on every sandbox page, declared or not.
const ALWAYS_OFF: [&str; 4] = ["clipboard-read", "display-capture", "usb", "payment"];

/// The spec names the resource whose content `_meta` is `meta` declares, in a fixed order.
pub fn declared_permissions(meta: Option<&Value>) -> Vec<String> {
    let declared = meta
        .and_then(|meta| meta.pointer("/ui/permissions"))
        .and_then(Value::as_object);
    KNOWN
        .iter()
        .filter(|(name, _)| declared.is_some_and(|declared| declared.contains_key(*name)))
        .map(|(name, _)| (*name).to_owned())
        .collect()
}

/// The `Permissions-Policy` header of the sandbox page of that resource.
pub fn permissions_policy(meta: Option<&Value>) -> String {
    let declared = declared_permissions(meta);
    KNOWN
        .iter()
        .map(|(name, feature)| {
            if declared.iter().any(|granted| granted == name) {
                format!("{feature}=*")
            } else {
                format!("{feature}=()")
            }
        })
        .chain(ALWAYS_OFF.iter().map(|feature| format!("{feature}=()")))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_the_declared_known_permissions_are_left_to_the_frame() {
        assert!(declared_permissions(None).is_empty());
        let nothing = permissions_policy(None);
        assert!(nothing.contains("camera=()") && nothing.contains("clipboard-write=()"));
        assert!(!nothing.contains('*'), "{nothing}");
        let meta = json!({"ui": {"permissions": {
            "clipboardWrite": {}, "camera": {}, "usb": {}, "clipboard-read": {}
        }}});
        assert_eq!(
            declared_permissions(Some(&meta)),
            ["camera", "clipboardWrite"]
        );
        let policy = permissions_policy(Some(&meta));
        assert!(policy.contains("camera=*"), "{policy}");
        assert!(policy.contains("clipboard-write=*"), "{policy}");
        assert!(policy.contains("microphone=()"), "{policy}");
        assert!(
            policy.contains("usb=()") && policy.contains("clipboard-read=()"),
            "{policy}"
        );
    }
}
