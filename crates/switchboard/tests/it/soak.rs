//! Soak, CI version (issue 18, target 13; the `soak` bench runs the same code for 10 minutes):
//! 100 chats over 20 upstreams of which 2 are faulty (slow, crashing, garbage), 10 s of
//! warm-up and 30 s of soak. Every answer must end with `done` (a faulty upstream costs its
//! call, never the answer), no panic may happen anywhere in the process, and after the soak
//! the open descriptors and live tokio tasks must be back within a small slack of the
//! baseline and the resident memory within 20% of it (the bench's 10-minute figure is held
//! to 10%; a 30 s run is dominated by allocator noise). `SWITCHBOARD_SOAK_SECS=600` runs the
//! soak phase for that long instead.

#[path = "../../benches/soak/load.rs"]
mod load;
#[path = "../../benches/soak/model.rs"]
mod model;
#[path = "../../benches/support/mod.rs"]
mod support;
#[path = "../../benches/soak/upstreams.rs"]
mod upstreams;

use std::sync::atomic::Ordering;
use std::time::Duration;

const FD_SLACK: usize = 16;
const TASK_SLACK: usize = 16;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_short_soak_with_faulty_upstreams_keeps_memory_tasks_and_descriptors_flat() {
    let figures = load::soak(load::SoakOptions {
        chats: 100,
        servers: 20,
        warm_up: Duration::from_secs(10),
        duration: Duration::from_secs(
            std::env::var("SWITCHBOARD_SOAK_SECS")
                .ok()
                .and_then(|value| value.parse().ok())
                .unwrap_or(30),
        ),
        sample_every: Duration::from_secs(10),
    })
    .await;
    let (soak, baseline, end) = (&figures.soak, figures.baseline, figures.end);
    for (at, snapshot) in &figures.samples {
        eprintln!("  at {:>4} s: {snapshot:?}", at.as_secs());
    }
    eprintln!(
        "soak: {} answers ({} done, {} stuck, {} error events, tool states {:?}); faults: {} slow, \
         {} crashed, {} garbage; baseline {baseline:?}, end {end:?}, RSS growth {:+.1}%; panics {}",
        soak.turns,
        soak.done,
        soak.stuck,
        soak.error_events,
        soak.tool_states,
        figures.faults.slow.load(Ordering::Relaxed),
        figures.faults.crashed.load(Ordering::Relaxed),
        figures.faults.garbage.load(Ordering::Relaxed),
        figures.rss_growth() * 100.0,
        figures.panics
    );
    assert_eq!(figures.panics, 0);
    assert!(soak.turns > 100, "too few answers to mean anything");
    assert_eq!(
        soak.stuck, 0,
        "answers that never ended with done: {:?}",
        soak.stuck_reasons
    );
    assert_eq!(soak.done, soak.turns);
    assert!(
        figures.faults.crashed.load(Ordering::Relaxed) > 0
            && figures.faults.garbage.load(Ordering::Relaxed) > 0
            && figures.faults.slow.load(Ordering::Relaxed) > 0,
        "every fault was served"
    );
    assert!(
        soak.tool_states.get("completed").copied().unwrap_or(0) > soak.turns / 2,
        "{:?}",
        soak.tool_states
    );
    assert!(
        end.fds <= baseline.fds + FD_SLACK,
        "{end:?} against {baseline:?}"
    );
    assert!(
        end.tasks <= baseline.tasks + TASK_SLACK,
        "{end:?} against {baseline:?}"
    );
    assert!(figures.rss_growth() < 0.20, "{end:?} against {baseline:?}");
}
