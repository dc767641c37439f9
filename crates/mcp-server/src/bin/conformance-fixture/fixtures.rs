//! The fixed data the conformance suite expects of a server (its fixture specification lists
//! these names, payload shapes and schemas): a 1×1 PNG, a tiny WAV, the JSON Schema 2020-12
//! tool schema, and the elicitation forms of SEP-1034 (defaults) and SEP-1330 (enums).

use serde_json::{Value, json};

/// A 1×1 red PNG, base64.
pub const TEST_IMAGE_BASE64: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

/// A minimal WAV file, base64.
pub const TEST_AUDIO_BASE64: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

pub const WATCHED_RESOURCE_URI: &str = "test://watched-resource";

/// The input schema of `json_schema_2020_12_tool`: `$schema`, `$defs` (with an `$anchor`) and
/// a `$ref`, composition (`allOf`/`anyOf`), conditionals (`if`/`then`/`else`) and
/// `additionalProperties` must all reach the client unchanged.
pub fn json_schema_2020_12() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "address",
                "type": "object",
                "properties": { "street": { "type": "string" }, "city": { "type": "string" } }
            }
        },
        "properties": {
            "name": { "type": "string" },
            "address": { "$ref": "#/$defs/address" }
        },
        "allOf": [{ "anyOf": [{ "required": ["name"] }, { "required": ["address"] }, { "maxProperties": 0 }] }],
        "if": { "properties": { "name": { "const": "with-address" } }, "required": ["name"] },
        "then": { "required": ["address"] },
        "else": {},
        "additionalProperties": false
    })
}

/// SEP-1034: a default for every primitive type.
pub fn elicitation_with_defaults() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": { "type": "string", "description": "User name", "default": "John Doe" },
            "age": { "type": "integer", "description": "User age", "default": 30 },
            "score": { "type": "number", "description": "User score", "default": 95.5 },
            "status": {
                "type": "string",
                "description": "User status",
                "enum": ["active", "inactive", "pending"],
                "default": "active"
            },
            "verified": { "type": "boolean", "description": "Verification status", "default": true }
        },
        "required": []
    })
}

/// SEP-1330: the five enum shapes (untitled/titled single select, legacy enumNames,
/// untitled/titled multi select).
pub fn elicitation_with_enums() -> Value {
    json!({
        "type": "object",
        "properties": {
            "untitledSingle": {
                "type": "string",
                "description": "Select one option",
                "enum": ["option1", "option2", "option3"]
            },
            "titledSingle": {
                "type": "string",
                "description": "Select one option with titles",
                "oneOf": [
                    { "const": "value1", "title": "First Option" },
                    { "const": "value2", "title": "Second Option" },
                    { "const": "value3", "title": "Third Option" }
                ]
            },
            "legacyEnum": {
                "type": "string",
                "description": "Select one option (legacy)",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"]
            },
            "untitledMulti": {
                "type": "array",
                "description": "Select multiple options",
                "minItems": 1,
                "maxItems": 3,
                "items": { "type": "string", "enum": ["option1", "option2", "option3"] }
            },
            "titledMulti": {
                "type": "array",
                "description": "Select multiple options with titles",
                "minItems": 1,
                "maxItems": 3,
                "items": {
                    "anyOf": [
                        { "const": "value1", "title": "First Choice" },
                        { "const": "value2", "title": "Second Choice" },
                        { "const": "value3", "title": "Third Choice" }
                    ]
                }
            }
        },
        "required": []
    })
}

/// A simple one-field form for `test_elicitation`.
pub fn elicitation_response_form() -> Value {
    json!({
        "type": "object",
        "properties": { "response": { "type": "string", "description": "User's response" } },
        "required": ["response"]
    })
}

/// A tool argument the client must mirror in an `Mcp-Param-Region` header (SEP-2243).
pub fn custom_header_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "region": { "type": "string", "description": "Deployment region", "x-mcp-header": "Region" }
        },
        "required": ["region"]
    })
}
