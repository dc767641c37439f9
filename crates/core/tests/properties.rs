//! Property tests of the invariants other crates build on (security and reliability at scale,
//! target 2): the pin hash does not depend on key order, a value only changes its hash when its
//! content changes, and redaction never lets a value under a secret key through while leaving
//! everything else alone. Each property runs 10,000 generated cases.

use proptest::prelude::*;
use serde_json::{Map, Value};
use switchboard_core::canonical::{canonical_json, canonical_sha256};
use switchboard_core::redact::{REDACTED, is_secret_key, redact_json};

const CASES: u32 = 10_000;

/// Keys as upstreams write them: short words, some with `_`/`-`, some with U+0000 or unicode.
fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z_][a-zA-Z0-9_-]{0,8}",
        "[a-z]{1,4}\u{0}?[a-z]{0,3}",
        "\\PC{1,6}",
    ]
}

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |number| number.is_finite())
            .prop_map(Value::from),
        "\\PC{0,12}".prop_map(Value::String),
    ]
}

/// Arbitrary JSON up to four levels deep.
fn json() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..6)
                .prop_map(|entries| Value::Object(entries.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// The same value with every object's keys in a different order (a rotation then a reversal,
/// driven by `seed`, so the objects of a nested value are reordered differently).
fn reorder(value: &Value, seed: usize) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> = map
                .iter()
                .enumerate()
                .map(|(index, (key, item))| (key.clone(), reorder(item, seed + index + 1)))
                .collect();
            if !entries.is_empty() {
                let shift = seed % entries.len();
                entries.rotate_left(shift);
                if seed % 2 == 1 {
                    entries.reverse();
                }
            }
            Value::Object(entries.into_iter().collect())
        }
        Value::Array(items) => Value::Array(
            items
                .iter()
                .enumerate()
                .map(|(index, item)| reorder(item, seed + index))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn has_secret_entry(value: &Value) -> bool {
    match value {
        Value::Object(map) => map
            .iter()
            .any(|(key, item)| (is_secret_key(key) && !item.is_null()) || has_secret_entry(item)),
        Value::Array(items) => items.iter().any(has_secret_entry),
        _ => false,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES))]

    #[test]
    fn pin_hash_ignores_key_order(value in json(), seed in 0usize..64) {
        let reordered = reorder(&value, seed);
        prop_assert_eq!(canonical_sha256(&value), canonical_sha256(&reordered));
        prop_assert_eq!(
            serde_json::to_string(&canonical_json(&value)).unwrap(),
            serde_json::to_string(&canonical_json(&reordered)).unwrap()
        );
    }

    #[test]
    fn canonical_form_is_a_fixed_point_and_keeps_the_content(value in json()) {
        let canonical = canonical_json(&value);
        prop_assert_eq!(&canonical_json(&canonical), &canonical);
        // Only U+0000 is rewritten: a value without it keeps its content (order aside).
        if !serde_json::to_string(&value).unwrap().contains("\\u0000") {
            prop_assert_eq!(&canonical, &value);
        }
    }

    #[test]
    fn a_changed_string_changes_the_hash(
        value in json(),
        key in "[a-z]{1,6}",
        first in "\\PC{0,8}",
        second in "\\PC{0,8}",
    ) {
        prop_assume!(first != second && !first.contains('\0') && !second.contains('\0'));
        let with = |text: &str| {
            let mut map = Map::new();
            map.insert("rest".to_owned(), value.clone());
            map.insert(key.clone(), Value::String(text.to_owned()));
            Value::Object(map)
        };
        prop_assert_ne!(canonical_sha256(&with(&first)), canonical_sha256(&with(&second)));
    }

    #[test]
    fn redaction_never_leaks_a_value_under_a_secret_key(
        value in json(),
        secret_key in prop_oneof![
            Just("apiKey"), Just("access_token"), Just("Authorization"), Just("client-secret"),
            Just("PASSWORD"), Just("refreshToken"), Just("x_private_key"), Just("cookie"),
        ],
        canary in "[A-Za-z0-9]{24}",
        depth in 0usize..4,
        as_object in any::<bool>(),
    ) {
        let canary = format!("canary-{canary}");
        // The secret may be a string or a whole object holding it (`credentials: {...}`).
        let secret = if as_object {
            serde_json::json!({ "inner": canary.clone(), "list": [canary.clone()] })
        } else {
            Value::String(canary.clone())
        };
        let mut planted = serde_json::json!({ secret_key: secret });
        for level in 0..depth {
            planted = serde_json::json!({ format!("level{level}"): [planted] });
        }
        let document = serde_json::json!({ "payload": value, "nested": planted });
        let text = serde_json::to_string(&redact_json(&document)).unwrap();
        prop_assert!(!text.contains(&canary), "the canary leaked: {}", text);
        prop_assert!(text.contains(REDACTED));
    }

    #[test]
    fn redaction_leaves_a_value_without_secret_keys_alone(value in json()) {
        prop_assume!(!has_secret_entry(&value));
        prop_assert_eq!(redact_json(&value), value);
    }
}
