//! Lock-poison recovery in one place. A `std::sync::Mutex` is poisoned when a thread panics
//! while holding it; Switchboard's locks guard plain bookkeeping (maps of sessions, slots,
//! counters) that stays consistent between statements, so every caller wants the same
//! answer: take the guard anyway rather than spread the panic to every later request.
//!
//! Must not be used for a lock whose data a panic could leave half-updated in a way that
//! matters; such a lock should handle `PoisonError` itself.

use std::sync::{Mutex, MutexGuard};

/// [`Mutex::lock`] that recovers from poisoning (see the module docs).
pub trait LockUnpoisoned<T: ?Sized> {
    fn lock_unpoisoned(&self) -> MutexGuard<'_, T>;
}

impl<T: ?Sized> LockUnpoisoned<T> for Mutex<T> {
    fn lock_unpoisoned(&self) -> MutexGuard<'_, T> {
        self.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::LockUnpoisoned;
    use std::sync::{Arc, Mutex};

    #[test]
    fn a_poisoned_lock_still_gives_its_data() {
        let shared = Arc::new(Mutex::new(vec![1]));
        let in_thread = shared.clone();
        let panicked = std::thread::spawn(move || {
            let mut guard = in_thread.lock().unwrap();
            guard.push(2);
            panic!("poison the lock");
        })
        .join();
        assert!(panicked.is_err());
        assert!(shared.is_poisoned());
        shared.lock_unpoisoned().push(3);
        assert_eq!(*shared.lock_unpoisoned(), [1, 2, 3]);
    }
}
