//! Sharing tool catalogs between turns: answers that offer exactly the same tools (same
//! servers, same names, same definitions) hold one `Arc<ToolCatalog>` instead of a copy each —
//! a catalog with full JSON schemas is hundreds of kilobytes, and a thousand open answers on
//! one workspace would otherwise hold a thousand copies. Entries are weak: a catalog lives only
//! while some turn uses it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use switchboard_core::ServerId;
use switchboard_mcp_client::ToolCatalog;

/// One server's part of a fingerprint: id, name, and (tool name, definition hash) pairs.
type ServerPart = (ServerId, String, Vec<(String, String)>);

/// Identifies a catalog's inputs exactly: each server (id, name) with its tools' names and
/// definition hashes, in the order given.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct CatalogFingerprint {
    servers: Vec<ServerPart>,
}

impl CatalogFingerprint {
    pub fn add_server(
        &mut self,
        server_id: &ServerId,
        server_name: &str,
        tools: &[(String, String)],
    ) {
        self.servers
            .push((server_id.clone(), server_name.to_owned(), tools.to_vec()));
    }
}

#[derive(Debug, Default)]
pub struct CatalogCache {
    entries: Mutex<HashMap<CatalogFingerprint, Weak<ToolCatalog>>>,
}

impl CatalogCache {
    /// The live catalog with this fingerprint, or the one `build` makes (then shared).
    pub fn get_or_build(
        &self,
        fingerprint: CatalogFingerprint,
        build: impl FnOnce() -> ToolCatalog,
    ) -> Arc<ToolCatalog> {
        let Ok(mut entries) = self.entries.lock() else {
            return Arc::new(build());
        };
        if let Some(shared) = entries.get(&fingerprint).and_then(Weak::upgrade) {
            return shared;
        }
        let built = Arc::new(build());
        entries.retain(|_, entry| entry.strong_count() > 0);
        entries.insert(fingerprint, Arc::downgrade(&built));
        built
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use switchboard_core::ToolDefinition;
    use switchboard_mcp_client::CatalogServer;

    fn fingerprint(hash: &str) -> CatalogFingerprint {
        let mut fingerprint = CatalogFingerprint::default();
        fingerprint.add_server(
            &ServerId::from("s1"),
            "kg",
            &[("schema_version".to_owned(), hash.to_owned())],
        );
        fingerprint
    }

    fn catalog() -> ToolCatalog {
        ToolCatalog::build(
            &[CatalogServer {
                server_id: ServerId::from("s1"),
                server_name: "kg".into(),
                tools: vec![ToolDefinition {
                    name: "schema_version".into(),
                    title: None,
                    description: String::new(),
                    input_schema: json!({"type": "object"}),
                    output_schema: None,
                    annotations: None,
                    meta: Default::default(),
                }],
            }],
            &[],
        )
    }

    #[test]
    fn same_inputs_share_one_catalog_while_it_is_used() {
        let cache = CatalogCache::default();
        let first = cache.get_or_build(fingerprint("h1"), catalog);
        let second = cache.get_or_build(fingerprint("h1"), || panic!("must be shared"));
        assert!(Arc::ptr_eq(&first, &second));
        let changed = cache.get_or_build(fingerprint("h2"), catalog);
        assert!(
            !Arc::ptr_eq(&first, &changed),
            "a changed definition builds anew"
        );
        drop((first, second));
        let mut rebuilt = false;
        cache.get_or_build(fingerprint("h1"), || {
            rebuilt = true;
            catalog()
        });
        assert!(rebuilt, "unused catalogs are not kept");
    }
}
