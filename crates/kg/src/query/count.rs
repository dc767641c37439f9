//! Counting objects of a type, optionally grouped by one property's value — the `count_objects`
//! tool's answer ("how many documents per status?"). A plain count is read off the type index,
//! so it costs nothing however many objects there are; only grouping visits the objects.

use crate::error::KgError;
use crate::graph::KnowledgeGraph;
use serde_json::Value;
use std::collections::HashMap;

/// The count for one value of the `group_by` property (`Value::Null` for objects without it).
#[derive(Clone, Debug, PartialEq)]
pub struct GroupCount {
    pub value: Value,
    pub count: usize,
}

#[derive(Clone, Debug, PartialEq)]
pub struct CountResult {
    pub total: usize,
    /// Largest groups first, ties by value; empty without `group_by`.
    pub groups: Vec<GroupCount>,
}

impl KnowledgeGraph {
    pub fn count_objects(
        &self,
        type_name: &str,
        group_by: Option<&str>,
    ) -> Result<CountResult, KgError> {
        let object_type = self.schema.require_object_type(type_name)?;
        let total = self.object_count_of_type(type_name);
        let Some(property) = group_by else {
            return Ok(CountResult {
                total,
                groups: Vec::new(),
            });
        };
        if object_type.property(property).is_none() {
            return Err(KgError::invalid_argument(format!(
                "group_by names unknown property '{property}' of {type_name} (its properties: {})",
                object_type.property_names().join(", ")
            )));
        }
        let mut counts: HashMap<String, (Value, usize)> = HashMap::new();
        for id in self.object_ids_of_type(type_name) {
            let value = self.objects[id]
                .properties
                .get(property)
                .cloned()
                .unwrap_or(Value::Null);
            let key = value.to_string();
            counts.entry(key).or_insert((value, 0)).1 += 1;
        }
        let mut groups: Vec<(String, GroupCount)> = counts
            .into_iter()
            .map(|(key, (value, count))| (key, GroupCount { value, count }))
            .collect();
        groups
            .sort_by(|(key_a, a), (key_b, b)| b.count.cmp(&a.count).then_with(|| key_a.cmp(key_b)));
        Ok(CountResult {
            total,
            groups: groups.into_iter().map(|(_, group)| group).collect(),
        })
    }
}
