//! Input checks shared by the area modules. Each failure names the field it refuses.

use crate::error::StoreError;
use serde_json::Value;

/// A short identifier-like name: 1–64 of `A–Z a–z 0–9 _ -`.
pub(crate) fn identifier_name(field: &'static str, value: &str) -> Result<(), StoreError> {
    if value.is_empty() || value.len() > 64 {
        return Err(StoreError::invalid(
            field,
            "must be 1 to 64 characters long",
        ));
    }
    if !value
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err(StoreError::invalid(
            field,
            format!("'{value}' may contain only letters, digits, '_' and '-'"),
        ));
    }
    Ok(())
}

/// Free text that must not be blank, up to `max_chars` characters, without U+0000 (which
/// PostgreSQL cannot store).
pub(crate) fn display_text(
    field: &'static str,
    value: &str,
    max_chars: usize,
) -> Result<(), StoreError> {
    if value.trim().is_empty() {
        return Err(StoreError::invalid(field, "must not be empty"));
    }
    no_nul(field, value)?;
    if value.chars().count() > max_chars {
        return Err(StoreError::invalid(
            field,
            format!("must be at most {max_chars} characters long"),
        ));
    }
    Ok(())
}

/// Configuration text (a URL, a command, an argument) without U+0000: PostgreSQL cannot store
/// it, and no URL or process could use it, so it is refused rather than replaced.
pub(crate) fn no_nul(field: &'static str, value: &str) -> Result<(), StoreError> {
    if value.contains('\0') {
        return Err(StoreError::invalid(
            field,
            "must not contain NUL characters (U+0000)",
        ));
    }
    Ok(())
}

/// [`no_nul`] for every string and object key of a JSON value.
pub(crate) fn no_nul_in_json(field: &'static str, value: &Value) -> Result<(), StoreError> {
    match value {
        Value::String(text) => no_nul(field, text),
        Value::Array(items) => items
            .iter()
            .try_for_each(|item| no_nul_in_json(field, item)),
        Value::Object(map) => map.iter().try_for_each(|(key, item)| {
            no_nul(field, key)?;
            no_nul_in_json(field, item)
        }),
        Value::Null | Value::Bool(_) | Value::Number(_) => Ok(()),
    }
}

/// A page size: 1 to `max` (`limit` is the field it is refused as).
pub(crate) fn page_limit(limit: i64, max: i64) -> Result<(), StoreError> {
    if limit < 1 || limit > max {
        return Err(StoreError::invalid(
            "limit",
            format!("must be between 1 and {max}"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifier_names_refuse_spaces_and_empty_values() {
        identifier_name("name", "git-hub_2").unwrap();
        assert!(identifier_name("name", "").is_err());
        let error = identifier_name("name", "a b").unwrap_err();
        assert!(error.to_string().starts_with("invalid name"), "{error}");
        assert!(identifier_name("name", &"x".repeat(65)).is_err());
    }

    #[test]
    fn display_text_refuses_blank_and_long_values() {
        display_text("title", "Hello", 10).unwrap();
        assert!(display_text("title", "   ", 10).is_err());
        assert!(display_text("title", "12345678901", 10).is_err());
        let nul = display_text("name", "a\0b", 10).unwrap_err();
        assert!(nul.to_string().contains("U+0000"), "{nul}");
    }

    #[test]
    fn page_limits_are_one_to_max() {
        page_limit(1, 500).unwrap();
        page_limit(500, 500).unwrap();
        for refused in [0, -1, 501] {
            let error = page_limit(refused, 500).unwrap_err();
            assert!(
                error.to_string().contains("must be between 1 and 500"),
                "{error}"
            );
        }
    }

    #[test]
    fn configuration_text_refuses_nul_at_any_depth() {
        no_nul("url", "https://a/b").unwrap();
        no_nul_in_json("connection", &serde_json::json!({"a": ["b", 1, null]})).unwrap();
        assert!(no_nul("command", "np\0x").is_err());
        for value in [
            serde_json::json!({"a": ["b\0"]}),
            serde_json::json!({"a\0": 1}),
        ] {
            let error = no_nul_in_json("connection", &value).unwrap_err();
            assert!(error.to_string().contains("U+0000"), "{error}");
        }
    }
}
