//! The consistency rules of a [`Schema`]: valid and unique names, reserved property names,
//! well-formed enum properties, and relationship endpoints that name existing object types.

use super::{PropertyDefinition, PropertyType, RESERVED_PROPERTY_NAMES, Schema};
use crate::error::KgError;
use std::collections::BTreeSet;

impl Schema {
    /// Checks names, uniqueness, enum definitions and relationship endpoints. Every problem is
    /// reported, each naming the type and property at fault.
    pub fn validate(&self) -> Result<(), KgError> {
        let mut problems = Vec::new();
        let mut type_names = BTreeSet::new();
        for object_type in &self.object_types {
            check_name("object type", &object_type.name, &mut problems);
            if !type_names.insert(object_type.name.as_str()) {
                problems.push(format!(
                    "object type '{}' is defined twice",
                    object_type.name
                ));
            }
            check_properties(
                &format!("object type '{}'", object_type.name),
                &object_type.properties,
                &mut problems,
            );
        }
        let mut relationship_names = BTreeSet::new();
        for relationship_type in &self.relationship_types {
            let owner = format!("relationship type '{}'", relationship_type.name);
            check_name("relationship type", &relationship_type.name, &mut problems);
            if !relationship_names.insert(relationship_type.name.as_str()) {
                problems.push(format!("{owner} is defined twice"));
            }
            for (end, names) in [
                ("from_types", &relationship_type.from_types),
                ("to_types", &relationship_type.to_types),
            ] {
                if names.is_empty() {
                    problems.push(format!("{owner}: {end} must name at least one object type"));
                }
                for name in names {
                    if !type_names.contains(name.as_str()) && self.object_type(name).is_none() {
                        problems.push(format!("{owner}: {end} names unknown object type '{name}'"));
                    }
                }
            }
            check_properties(&owner, &relationship_type.properties, &mut problems);
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(KgError::InvalidSchema { problems })
        }
    }
}

fn check_name(kind: &str, name: &str, problems: &mut Vec<String>) {
    let mut chars = name.chars();
    let starts_with_letter = chars.next().is_some_and(|c| c.is_ascii_alphabetic());
    let rest_ok = name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !starts_with_letter || !rest_ok || name.len() > 64 {
        problems.push(format!(
            "{kind} name '{name}' is invalid: use 1-64 letters, digits or '_', starting with a letter"
        ));
    }
}

fn check_properties(owner: &str, properties: &[PropertyDefinition], problems: &mut Vec<String>) {
    let mut seen = BTreeSet::new();
    for property in properties {
        check_name(&format!("{owner}: property"), &property.name, problems);
        if RESERVED_PROPERTY_NAMES.contains(&property.name.as_str()) {
            problems.push(format!(
                "{owner}: property name '{}' is reserved",
                property.name
            ));
        }
        if !seen.insert(property.name.as_str()) {
            problems.push(format!(
                "{owner}: property '{}' is defined twice",
                property.name
            ));
        }
        match (property.property_type, property.enum_values.is_empty()) {
            (PropertyType::Enum, true) => problems.push(format!(
                "{owner}: enum property '{}' needs at least one value in enum_values",
                property.name
            )),
            (PropertyType::Enum, false) => {
                let distinct: BTreeSet<_> = property.enum_values.iter().collect();
                if distinct.len() != property.enum_values.len() {
                    problems.push(format!(
                        "{owner}: enum property '{}' repeats a value",
                        property.name
                    ));
                }
            }
            (other, false) => problems.push(format!(
                "{owner}: property '{}' has enum_values but its type is {other}, not enum",
                property.name
            )),
            (_, true) => {}
        }
    }
}
