//! How many connections may be open at once, overall and per peer IP address, and the deadline
//! for a connection's first request.
//!
//! Why both: hyper's header-read timeout starts only once hyper-util has decided between
//! HTTP/1 and HTTP/2, which needs the first bytes — a connection that sends nothing, or only the
//! HTTP/2 preface, was never reaped, and ~20,000 of them used up the process's file
//! descriptors. So every connection must start its first request within the header-read
//! timeout ([`FirstRequest`]), and the number open is capped so that even connections waiting
//! out that timeout cannot exhaust descriptors ([`ConnectionLimits`]). A connection beyond a cap
//! is closed at once, before anything is read: the cheapest answer to a flood.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use switchboard_core::LockUnpoisoned;

/// Counts open connections; [`ConnectionLimits::admit`] hands out a slot or refuses.
#[derive(Clone)]
pub(crate) struct ConnectionLimits {
    inner: Arc<LimitsInner>,
}

struct LimitsInner {
    max_total: usize,
    max_per_peer: usize,
    /// Total open and open per peer address, under one lock so both caps are checked together.
    open: Mutex<OpenConnections>,
}

#[derive(Default)]
struct OpenConnections {
    total: usize,
    per_peer: HashMap<IpAddr, usize>,
}

/// Why a connection was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    TooManyOverall,
    TooManyFromPeer,
}

impl Refusal {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Refusal::TooManyOverall => "max_connections",
            Refusal::TooManyFromPeer => "max_connections_per_peer",
        }
    }
}

impl ConnectionLimits {
    pub(crate) fn new(max_total: usize, max_per_peer: usize) -> Self {
        Self {
            inner: Arc::new(LimitsInner {
                max_total,
                max_per_peer,
                open: Mutex::new(OpenConnections::default()),
            }),
        }
    }

    /// A slot for a connection from `peer`, released when dropped; or why there is none.
    pub(crate) fn admit(&self, peer: IpAddr) -> Result<ConnectionSlot, Refusal> {
        let mut open = self.inner.open.lock_unpoisoned();
        if open.total >= self.inner.max_total {
            return Err(Refusal::TooManyOverall);
        }
        let from_peer = open.per_peer.entry(peer).or_insert(0);
        if *from_peer >= self.inner.max_per_peer {
            return Err(Refusal::TooManyFromPeer);
        }
        *from_peer += 1;
        open.total += 1;
        Ok(ConnectionSlot {
            limits: self.clone(),
            peer,
        })
    }

    /// Connections open now.
    #[cfg(test)]
    pub(crate) fn open(&self) -> usize {
        self.inner.open.lock_unpoisoned().total
    }
}

/// One open connection's place under the caps.
pub(crate) struct ConnectionSlot {
    limits: ConnectionLimits,
    peer: IpAddr,
}

impl Drop for ConnectionSlot {
    fn drop(&mut self) {
        let mut open = self.limits.inner.open.lock_unpoisoned();
        open.total = open.total.saturating_sub(1);
        if let Some(from_peer) = open.per_peer.get_mut(&self.peer) {
            *from_peer -= 1;
            if *from_peer == 0 {
                open.per_peer.remove(&self.peer);
            }
        }
    }
}

/// Set by the service when a connection's first request reaches it (the accept loop drops a
/// connection whose flag is still unset at the header-read timeout).
#[derive(Clone, Default)]
pub(crate) struct FirstRequest(Arc<AtomicBool>);

impl FirstRequest {
    pub(crate) fn arrived(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    pub(crate) fn has_arrived(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    #[test]
    fn caps_apply_per_peer_and_overall_and_slots_are_given_back() {
        let limits = ConnectionLimits::new(3, 2);
        let a = IpAddr::from(Ipv4Addr::new(10, 0, 0, 1));
        let b = IpAddr::from(Ipv4Addr::new(10, 0, 0, 2));
        let c = IpAddr::from(Ipv4Addr::new(10, 0, 0, 3));
        let a1 = limits.admit(a).unwrap();
        let _a2 = limits.admit(a).unwrap();
        assert_eq!(limits.admit(a).err(), Some(Refusal::TooManyFromPeer));
        let _b1 = limits.admit(b).unwrap();
        assert_eq!(limits.admit(c).err(), Some(Refusal::TooManyOverall));
        drop(a1);
        assert_eq!(limits.open(), 2);
        let _c1 = limits.admit(c).unwrap();
        assert_eq!(limits.open(), 3);
    }
}
