//! The schema's history: one [`SchemaVersion`] per accepted change, each identified by the
//! content hash of the schema it produced, plus the changelog entries that led to it.
//!
//! History only grows. Queries answer "what changed since version X / since date D".

use crate::changelog::{ChangelogEntry, SchemaChange};
use crate::error::KgError;
use crate::schema::Schema;
use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};

/// One version of the schema.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SchemaVersion {
    /// The schema's content hash, e.g. `57c52257693ae983`.
    pub version: String,
    /// 1 for the first version, then +1 per change.
    pub sequence: u64,
    pub created_at: DateTime<Utc>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    pub object_type_count: usize,
    pub relationship_type_count: usize,
    pub property_count: usize,
    /// Number of changelog entries this version introduced.
    pub change_count: usize,
}

/// A version together with the full schema it describes (kept so any version can be
/// restored or inspected).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct VersionedSchema {
    #[serde(flatten)]
    pub version: SchemaVersion,
    pub schema: Schema,
}

/// Where a changelog query starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChangelogSince {
    /// After this version (by hash, or by sequence number such as `"2"`).
    Version(String),
    /// At or after this instant (an ISO date means its first instant, UTC).
    Time(DateTime<Utc>),
}

impl ChangelogSince {
    /// Reads `2026-10-15`, `2026-10-15T08:00:00Z`, a version hash or a sequence number.
    pub fn parse(text: &str) -> Result<Self, KgError> {
        let text = text.trim();
        if let Ok(instant) = DateTime::parse_from_rfc3339(text) {
            return Ok(ChangelogSince::Time(instant.with_timezone(&Utc)));
        }
        if let Ok(date) = NaiveDate::parse_from_str(text, "%Y-%m-%d") {
            let midnight = date.and_hms_opt(0, 0, 0).expect("midnight exists");
            return Ok(ChangelogSince::Time(midnight.and_utc()));
        }
        let looks_like_version = !text.is_empty()
            && text.len() <= 64
            && text
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-');
        if looks_like_version {
            return Ok(ChangelogSince::Version(text.to_owned()));
        }
        Err(KgError::invalid_argument(format!(
            "since '{text}' is neither a schema version (hash or sequence number) nor an ISO date such as 2026-10-15"
        )))
    }
}

/// The full history of one graph's schema.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SchemaHistory {
    versions: Vec<VersionedSchema>,
    changelog: Vec<ChangelogEntry>,
}

impl SchemaHistory {
    /// Rebuilds history from persisted parts, checking that they fit together.
    pub fn from_parts(
        versions: Vec<VersionedSchema>,
        changelog: Vec<ChangelogEntry>,
    ) -> Result<Self, KgError> {
        for (index, versioned) in versions.iter().enumerate() {
            if versioned.version.sequence != index as u64 + 1 {
                return Err(KgError::invalid_data(format!(
                    "schema history is out of order: version {} has sequence {} at position {}",
                    versioned.version.version,
                    versioned.version.sequence,
                    index + 1
                )));
            }
        }
        if let Some(entry) = changelog.iter().find(|entry| {
            !versions
                .iter()
                .any(|v| v.version.version == entry.version && v.version.sequence == entry.sequence)
        }) {
            return Err(KgError::invalid_data(format!(
                "changelog entry '{}' refers to unknown version {}",
                entry.change.description, entry.version
            )));
        }
        Ok(Self {
            versions,
            changelog,
        })
    }

    pub fn versions(&self) -> impl DoubleEndedIterator<Item = &SchemaVersion> + ExactSizeIterator {
        self.versions.iter().map(|versioned| &versioned.version)
    }

    pub fn versioned_schemas(&self) -> &[VersionedSchema] {
        &self.versions
    }

    pub fn current(&self) -> Option<&SchemaVersion> {
        self.versions.last().map(|versioned| &versioned.version)
    }

    pub fn changelog(&self) -> &[ChangelogEntry] {
        &self.changelog
    }

    /// The version that recording `schema` with its `changes` would create (nothing changes).
    pub fn prepare(
        &self,
        schema: &Schema,
        changes: Vec<SchemaChange>,
        at: DateTime<Utc>,
        message: Option<String>,
    ) -> (SchemaVersion, Vec<ChangelogEntry>) {
        let version = SchemaVersion {
            version: schema.content_hash(),
            sequence: self.versions.len() as u64 + 1,
            created_at: at,
            message,
            object_type_count: schema.object_types.len(),
            relationship_type_count: schema.relationship_types.len(),
            property_count: schema.property_count(),
            change_count: changes.len(),
        };
        let entries = changes
            .into_iter()
            .map(|change| ChangelogEntry {
                version: version.version.clone(),
                sequence: version.sequence,
                at,
                change,
            })
            .collect();
        (version, entries)
    }

    /// Appends a prepared version. Panics if it is not the next sequence number (a prepared
    /// version must be committed before another is prepared).
    pub fn push(&mut self, versioned: VersionedSchema, entries: Vec<ChangelogEntry>) {
        assert_eq!(
            versioned.version.sequence,
            self.versions.len() as u64 + 1,
            "schema versions are committed in order"
        );
        self.changelog.extend(entries);
        self.versions.push(versioned);
    }

    /// Prepares and appends a version for `schema` with its `changes`; returns it.
    pub fn record(
        &mut self,
        schema: &Schema,
        changes: Vec<SchemaChange>,
        at: DateTime<Utc>,
        message: Option<String>,
    ) -> (SchemaVersion, Vec<ChangelogEntry>) {
        let (version, entries) = self.prepare(schema, changes, at, message);
        self.push(
            VersionedSchema {
                version: version.clone(),
                schema: schema.clone(),
            },
            entries.clone(),
        );
        (version, entries)
    }

    /// Finds a version by hash (the newest one with that hash) or by sequence number.
    pub fn find_version(&self, version: &str) -> Result<&SchemaVersion, KgError> {
        let by_hash = self.versions().rev().find(|v| v.version == version);
        let by_sequence = || {
            version
                .parse::<u64>()
                .ok()
                .and_then(|sequence| self.versions().find(|v| v.sequence == sequence))
        };
        by_hash
            .or_else(by_sequence)
            .ok_or_else(|| KgError::UnknownVersion {
                version: version.to_owned(),
                known: self
                    .versions()
                    .rev()
                    .take(10)
                    .map(|v| v.version.clone())
                    .collect(),
            })
    }

    /// Changes after `since` (all changes when `None`), newest first, at most `limit`; also
    /// returns how many matched in total.
    pub fn changes_since(
        &self,
        since: Option<&ChangelogSince>,
        limit: usize,
    ) -> Result<(Vec<&ChangelogEntry>, usize), KgError> {
        let matching: Vec<&ChangelogEntry> = match since {
            None => self.changelog.iter().collect(),
            Some(ChangelogSince::Time(instant)) => self
                .changelog
                .iter()
                .filter(|entry| entry.at >= *instant)
                .collect(),
            Some(ChangelogSince::Version(version)) => {
                let sequence = self.find_version(version)?.sequence;
                self.changelog
                    .iter()
                    .filter(|entry| entry.sequence > sequence)
                    .collect()
            }
        };
        let total = matching.len();
        Ok((matching.into_iter().rev().take(limit).collect(), total))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::changelog::diff_schemas;
    use crate::schema::ObjectType;
    use chrono::TimeZone;

    fn at(day: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 10, day, 12, 0, 0).unwrap()
    }

    fn history_of_three() -> SchemaHistory {
        let mut history = SchemaHistory::default();
        let mut schema = Schema::default();
        for (day, name) in [(1, "Document"), (5, "Project"), (9, "Team")] {
            let before = schema.clone();
            schema.object_types.push(ObjectType::new(name, "", vec![]));
            schema.normalize();
            history.record(&schema, diff_schemas(&before, &schema), at(day), None);
        }
        history
    }

    #[test]
    fn since_version_excludes_that_version_and_accepts_sequence_numbers() {
        let history = history_of_three();
        let first = history.versions().next().unwrap().version.clone();
        let (entries, total) = history
            .changes_since(Some(&ChangelogSince::Version(first)), 10)
            .unwrap();
        assert_eq!(total, 2);
        assert_eq!(
            entries[0].change.description,
            "Added object type Team (0 properties)"
        );
        assert_eq!(
            entries[1].change.description,
            "Added object type Project (0 properties)"
        );
        let (by_sequence, _) = history
            .changes_since(Some(&ChangelogSince::parse("2").unwrap()), 10)
            .unwrap();
        assert_eq!(by_sequence.len(), 1);
    }

    #[test]
    fn since_date_includes_changes_on_that_day_and_limit_keeps_the_newest() {
        let history = history_of_three();
        let since = ChangelogSince::parse("2026-10-05").unwrap();
        let (entries, total) = history.changes_since(Some(&since), 1).unwrap();
        assert_eq!(total, 2);
        assert_eq!(entries.len(), 1);
        assert_eq!(entries[0].change.type_name.as_deref(), Some("Team"));
        let (none, _) = history
            .changes_since(
                Some(&ChangelogSince::parse("2026-10-10T00:00:00Z").unwrap()),
                10,
            )
            .unwrap();
        assert!(none.is_empty());
    }

    #[test]
    fn unknown_version_lists_known_ones_and_garbage_is_rejected() {
        let history = history_of_three();
        let error = history
            .changes_since(Some(&ChangelogSince::Version("deadbeef".into())), 10)
            .unwrap_err();
        assert!(matches!(&error, KgError::UnknownVersion { known, .. } if known.len() == 3));
        assert!(
            error
                .to_string()
                .starts_with("unknown schema version 'deadbeef'; known versions, newest first: ")
        );
        assert!(ChangelogSince::parse("last tuesday!").is_err());
    }
}
