//! Redaction of secret-looking values before they reach logs, the audit log or an API answer.

use serde_json::Value;

/// The placeholder written in place of a secret.
pub const REDACTED: &str = "[REDACTED]";

/// True for object keys that conventionally hold credentials (`apiKey`, `access_token`,
/// `password`, `Authorization`, `client_secret`…). Matching ignores case, `-` and `_`.
pub fn is_secret_key(key: &str) -> bool {
    let normalized: String = key
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect();
    const EXACT: [&str; 4] = ["token", "authorization", "cookie", "auth"];
    const CONTAINS: [&str; 9] = [
        "apikey",
        "accesstoken",
        "refreshtoken",
        "idtoken",
        "password",
        "passwd",
        "secret",
        "credential",
        "privatekey",
    ];
    EXACT.contains(&normalized.as_str())
        || normalized.ends_with("token")
        || CONTAINS.iter().any(|needle| normalized.contains(needle))
}

/// Returns a copy of `value` with every secret-keyed value replaced by [`REDACTED`],
/// at any depth.
pub fn redact_json(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, inner)| {
                    let replaced = if is_secret_key(key) && !inner.is_null() {
                        Value::String(REDACTED.to_owned())
                    } else {
                        redact_json(inner)
                    };
                    (key.clone(), replaced)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(redact_json).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn redacts_known_secret_keys_at_any_depth() {
        let input = json!({
            "query": "roadmap",
            "apiKey": "k1",
            "nested": {"access_token": "t", "Authorization": "Bearer x", "items": [{"password": "p"}]},
            "credentials": {"user": "u"},
            "token_count": 3
        });
        let output = redact_json(&input);
        assert_eq!(output["query"], "roadmap");
        assert_eq!(output["apiKey"], REDACTED);
        assert_eq!(output["nested"]["access_token"], REDACTED);
        assert_eq!(output["nested"]["Authorization"], REDACTED);
        assert_eq!(output["nested"]["items"][0]["password"], REDACTED);
        assert_eq!(output["credentials"], REDACTED);
        assert_eq!(output["token_count"], 3);
    }
}
