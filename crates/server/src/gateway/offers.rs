//! The gateway's cached offers: what one caller (workspace, person, token, bud) is offered —
//! the turn's catalog, its call targets, the tools an admin rule sets to `ALWAYS_DENY`, and
//! (listed at first use) its servers' resources, resource templates and prompts —
//! built once and reused by every `tools/list` and `tools/call` until [`GatewayChanges`]
//! moves (an upstream's list, a policy, a switch) or the offer is [`MAX_AGE`] old. Building
//! one reads the bud, the servers, their tool lists, secrets and rules from the store; a call
//! that rebuilt it every time spent most of its time there.
//!
//! At `/gateway/servers/{server}/mcp` the offer is one server's, under its own names
//! ([`GatewayNaming::Original`]): tools are listed by the upstream's name and
//! [`Offer::catalog_name`] maps a called name back to the catalog's `server__tool`.
//!
//! The key holds the bearer token because the catalog's call targets carry it (our own kg
//! endpoint is reached with the caller's token); a token refused by the guard never gets here.
//! Entries are few (one per token and bud in use) and bounded by [`MAX_ENTRIES`].

use super::changes::GatewayChanges;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use switchboard_chat::tools::TurnTools;
use switchboard_chat::{GatewayListing, GatewayNaming};
use switchboard_core::{ToolSpec, UserId, WorkspaceId};
use switchboard_mcp_server::gateway::GatewayList;
use switchboard_store::BudRecord;
use tokio::sync::OnceCell;

/// An offer is rebuilt after this long even if nothing said it changed.
pub const MAX_AGE: Duration = Duration::from_secs(60);
/// More cached offers than this and the oldest half are dropped.
const MAX_ENTRIES: usize = 4096;

/// What one caller is offered.
#[derive(Debug)]
pub struct Offer {
    pub tools: TurnTools,
    pub bud: Option<BudRecord>,
    pub naming: GatewayNaming,
    /// The names listed: the catalog minus [`Self::denied`], in the catalog's order.
    pub listed: Vec<ToolSpec>,
    /// Names an admin rule refuses outright (neither listed nor callable).
    pub denied: HashSet<String>,
    /// Under [`GatewayNaming::Original`]: each listed tool's own name → its catalog name.
    pub catalog_names: HashMap<String, String>,
    /// The servers' resources, templates and prompts, listed at first use (`items.rs`).
    pub resources: OnceCell<Arc<GatewayListing>>,
    pub resource_templates: OnceCell<Arc<GatewayListing>>,
    pub prompts: OnceCell<Arc<GatewayListing>>,
}

impl Offer {
    /// The catalog's name (`server__tool`) of a tool the client called `listed`, when it may
    /// be called at all (listed; not unknown nor `ALWAYS_DENY`).
    pub fn catalog_name(&self, listed: &str) -> Option<String> {
        let name = match self.naming {
            GatewayNaming::PerServer => listed.to_owned(),
            GatewayNaming::Original => self.catalog_names.get(listed)?.clone(),
        };
        let offered = !self.denied.contains(&name) && self.tools.lookup(&name).is_some();
        offered.then_some(name)
    }

    /// Where `list`'s aggregated listing is kept.
    pub fn listing_cell(&self, list: GatewayList) -> &OnceCell<Arc<GatewayListing>> {
        match list {
            GatewayList::Resources => &self.resources,
            GatewayList::ResourceTemplates => &self.resource_templates,
            GatewayList::Prompts => &self.prompts,
        }
    }
}

/// Who an offer is for.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct OfferKey {
    pub workspace_id: WorkspaceId,
    pub user_id: UserId,
    pub bearer_token: Option<String>,
    /// The bud as the path named it (id or name).
    pub bud: Option<String>,
    /// The server as the path named it (id or name).
    pub server: Option<String>,
}

struct Cached {
    generation: u64,
    built_at: Instant,
    offer: Arc<Offer>,
}

#[derive(Default)]
pub struct OfferCache {
    entries: Mutex<HashMap<OfferKey, Cached>>,
}

impl std::fmt::Debug for OfferCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OfferCache").finish_non_exhaustive()
    }
}

impl OfferCache {
    /// The current offer for `key`, if one is cached.
    pub fn get(&self, key: &OfferKey, changes: &GatewayChanges) -> Option<Arc<Offer>> {
        let entries = self.entries.lock().ok()?;
        let cached = entries.get(key)?;
        let current =
            cached.generation == changes.generation() && cached.built_at.elapsed() < MAX_AGE;
        current.then(|| cached.offer.clone())
    }

    /// Keeps `offer`, built while the counter stood at `generation`: if it moved during the
    /// build, the next lookup builds again. Returns how many offers are cached.
    pub fn put(&self, key: OfferKey, generation: u64, offer: Arc<Offer>) -> usize {
        let Ok(mut entries) = self.entries.lock() else {
            return 0;
        };
        if entries.len() >= MAX_ENTRIES {
            let mut ages: Vec<Instant> = entries.values().map(|cached| cached.built_at).collect();
            ages.sort_unstable();
            let cutoff = ages[ages.len() / 2];
            entries.retain(|_, cached| cached.built_at > cutoff);
        }
        let built_at = Instant::now();
        entries.insert(
            key,
            Cached {
                generation,
                built_at,
                offer,
            },
        );
        entries.len()
    }
}
