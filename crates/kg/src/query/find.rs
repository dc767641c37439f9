//! Listing objects of one type with an optional property filter and cursor pagination.
//!
//! Filters are JSON objects keyed by property name: a plain value means equality, an object
//! names one or more operators (`eq`, `ne`, `contains`, `in`, `gt`, `gte`, `lt`, `lte`,
//! `exists`). Cursors are opaque to callers (the hex of the last id returned).

use crate::data::{ObjectRecord, describe_json};
use crate::error::KgError;
use crate::graph::KnowledgeGraph;
use crate::schema::ObjectType;
use serde_json::Value;
use std::cmp::Ordering;
use std::ops::Bound;

pub const DEFAULT_FIND_LIMIT: usize = 20;
pub const MAX_FIND_LIMIT: usize = 100;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FilterOperator {
    Eq,
    Ne,
    Contains,
    In,
    Gt,
    Gte,
    Lt,
    Lte,
    Exists,
}

impl FilterOperator {
    const NAMES: &'static str = "eq, ne, contains, in, gt, gte, lt, lte, exists";

    fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "eq" => FilterOperator::Eq,
            "ne" => FilterOperator::Ne,
            "contains" => FilterOperator::Contains,
            "in" => FilterOperator::In,
            "gt" => FilterOperator::Gt,
            "gte" => FilterOperator::Gte,
            "lt" => FilterOperator::Lt,
            "lte" => FilterOperator::Lte,
            "exists" => FilterOperator::Exists,
            _ => return None,
        })
    }
}

#[derive(Clone, Debug, PartialEq)]
struct Condition {
    property: String,
    operator: FilterOperator,
    operand: Value,
}

/// A parsed, schema-checked filter: every condition must hold.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ObjectFilter {
    conditions: Vec<Condition>,
}

impl ObjectFilter {
    /// Parses `filter` for objects of `object_type`, rejecting unknown properties and operators.
    pub fn parse(object_type: &ObjectType, filter: &Value) -> Result<Self, KgError> {
        let Value::Object(entries) = filter else {
            return Err(KgError::invalid_argument(format!(
                "filter must be an object such as {{\"status\": \"draft\"}}, got {}",
                describe_json(filter)
            )));
        };
        let mut conditions = Vec::new();
        for (property, expected) in entries {
            if object_type.property(property).is_none() {
                return Err(KgError::invalid_argument(format!(
                    "filter names unknown property '{property}' of {} (its properties: {})",
                    object_type.name,
                    object_type.property_names().join(", ")
                )));
            }
            match expected {
                Value::Object(operators) if !operators.is_empty() => {
                    for (name, operand) in operators {
                        let operator = FilterOperator::parse(name).ok_or_else(|| {
                            KgError::invalid_argument(format!(
                                "filter on '{property}' uses unknown operator '{name}' (operators: {})",
                                FilterOperator::NAMES
                            ))
                        })?;
                        if operator == FilterOperator::In && !operand.is_array() {
                            return Err(KgError::invalid_argument(format!(
                                "filter on '{property}': 'in' needs an array of values"
                            )));
                        }
                        conditions.push(Condition {
                            property: property.clone(),
                            operator,
                            operand: operand.clone(),
                        });
                    }
                }
                other => conditions.push(Condition {
                    property: property.clone(),
                    operator: FilterOperator::Eq,
                    operand: other.clone(),
                }),
            }
        }
        Ok(Self { conditions })
    }

    pub fn matches(&self, object: &ObjectRecord) -> bool {
        self.conditions.iter().all(|condition| {
            let actual = object.properties.get(&condition.property);
            evaluate(condition.operator, actual, &condition.operand)
        })
    }
}

fn evaluate(operator: FilterOperator, actual: Option<&Value>, operand: &Value) -> bool {
    match operator {
        FilterOperator::Exists => actual.is_some() == operand.as_bool().unwrap_or(true),
        FilterOperator::Eq => actual.is_some_and(|value| values_equal(value, operand)),
        FilterOperator::Ne => !actual.is_some_and(|value| values_equal(value, operand)),
        FilterOperator::In => operand.as_array().is_some_and(|candidates| {
            actual.is_some_and(|value| candidates.iter().any(|c| values_equal(value, c)))
        }),
        FilterOperator::Contains => match (actual.and_then(Value::as_str), operand.as_str()) {
            (Some(text), Some(needle)) => text.to_lowercase().contains(&needle.to_lowercase()),
            _ => false,
        },
        FilterOperator::Gt | FilterOperator::Gte | FilterOperator::Lt | FilterOperator::Lte => {
            let Some(ordering) = actual.and_then(|value| compare(value, operand)) else {
                return false;
            };
            match operator {
                FilterOperator::Gt => ordering == Ordering::Greater,
                FilterOperator::Gte => ordering != Ordering::Less,
                FilterOperator::Lt => ordering == Ordering::Less,
                _ => ordering != Ordering::Greater,
            }
        }
    }
}

fn values_equal(left: &Value, right: &Value) -> bool {
    match (left.as_f64(), right.as_f64()) {
        (Some(a), Some(b)) => a == b,
        _ => left == right,
    }
}

fn compare(left: &Value, right: &Value) -> Option<Ordering> {
    match (left, right) {
        (Value::Number(a), Value::Number(b)) => a.as_f64()?.partial_cmp(&b.as_f64()?),
        (Value::String(a), Value::String(b)) => Some(a.cmp(b)),
        _ => None,
    }
}

/// One page of objects.
#[derive(Debug, Clone, PartialEq)]
pub struct FindPage<'a> {
    pub objects: Vec<&'a ObjectRecord>,
    /// How many objects of the type match the filter in all.
    pub total_matching: usize,
    /// Pass back as `cursor` for the next page; `None` on the last page.
    pub next_cursor: Option<String>,
}

impl KnowledgeGraph {
    /// Objects of `type_name` matching `filter`, `limit` at a time (1..=100, default 20).
    pub fn find_objects(
        &self,
        type_name: &str,
        filter: Option<&Value>,
        limit: Option<usize>,
        cursor: Option<&str>,
    ) -> Result<FindPage<'_>, KgError> {
        let object_type = self.schema.require_object_type(type_name)?;
        let filter = match filter {
            Some(Value::Null) | None => ObjectFilter::default(),
            Some(filter) => ObjectFilter::parse(object_type, filter)?,
        };
        let limit = limit.unwrap_or(DEFAULT_FIND_LIMIT);
        if limit == 0 || limit > MAX_FIND_LIMIT {
            return Err(KgError::invalid_argument(format!(
                "limit must be between 1 and {MAX_FIND_LIMIT}, got {limit}"
            )));
        }
        let after = cursor.map(decode_cursor).transpose()?;
        let Some(ids) = self.objects_by_type.get(type_name) else {
            return Ok(FindPage {
                objects: Vec::new(),
                total_matching: 0,
                next_cursor: None,
            });
        };
        let total_matching = ids
            .iter()
            .filter(|id| filter.matches(&self.objects[*id]))
            .count();
        let lower = match &after {
            Some(after) => Bound::Excluded(after.clone()),
            None => Bound::Unbounded,
        };
        let mut page: Vec<&ObjectRecord> = ids
            .range((lower, Bound::Unbounded))
            .map(|id| &self.objects[id])
            .filter(|object| filter.matches(object))
            .take(limit + 1)
            .collect();
        let next_cursor = if page.len() > limit {
            page.truncate(limit);
            page.last().map(|object| encode_cursor(&object.id))
        } else {
            None
        };
        Ok(FindPage {
            objects: page,
            total_matching,
            next_cursor,
        })
    }
}

fn encode_cursor(last_id: &str) -> String {
    hex::encode(last_id.as_bytes())
}

fn decode_cursor(cursor: &str) -> Result<String, KgError> {
    hex::decode(cursor)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .ok_or_else(|| KgError::invalid_argument("cursor is not one returned by find_objects"))
}
