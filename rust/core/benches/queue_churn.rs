//! Run-time queue churn leaves no trace: the one-node BoPF heartbeat (ten containers done, ten
//! started) and the heap the scheduler holds, measured before and after 1,000,000 LQs were
//! registered and deleted through the run-time queue API. Both must stay flat (the heap from
//! the point the bounded history of admission decisions is full). The heap is counted by a
//! wrapper around the system allocator, so this bench has its own binary.
//!
//! Run: `cargo bench -p tidal-core --bench queue_churn` (the churn itself takes a minute or two).

mod support;

use criterion::{criterion_group, criterion_main, Criterion};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};
use support::ask;
use tidal_core::config::Settings;
use tidal_core::scheduler::Caller;
use tidal_core::{Resources, Scheduler};

struct LiveBytes;

static LIVE: AtomicIsize = AtomicIsize::new(0);

unsafe impl GlobalAlloc for LiveBytes {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        System.alloc(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        System.dealloc(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(new_size as isize - layout.size() as isize, Ordering::Relaxed);
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static ALLOCATOR: LiveBytes = LiveBytes;

const CYCLES: u32 = 1_000_000;

fn churn(c: &mut Criterion) {
    let xml = "<tidal><policy>bopf</policy><queue name=\"a\"/></tidal>";
    let mut s = Scheduler::from_xml(xml, Settings::default()).unwrap();
    s.add_node(0, 1, 2, Resources::new(16 * 1024, 16)).unwrap();
    s.node_heartbeat(0, 0, &[], &mut Vec::new(), 0).unwrap();
    s.add_app(1, "a", "bench").unwrap();
    s.update_asks(1, &[ask(i32::MAX as i64)], &[], &[]).unwrap();
    support::steady_heartbeats(c, "heartbeat_bopf_1_node_1_app_before_queue_churn", &mut s, 1, |_, _| {});
    // Both measurements start from an empty node.
    let running: Vec<u64> = s.state().allocations.keys().copied().collect();
    for id in running {
        s.release(id);
    }
    let admin = Caller { user: "bench", admin: true };
    let register_delete = |s: &mut Scheduler, i: u32| {
        let lq = format!(
            "<queue name=\"lq{i}\"><type>lq</type><period-sec>600</period-sec><deadline-sec>60</deadline-sec>\
             <burst-demand><vcores>60</vcores></burst-demand></queue>"
        );
        s.register_queue_xml(&lq, admin).unwrap();
        s.unregister_queue(&format!("lq{i}"), admin).unwrap();
    };
    // The first cycles size what every cycle reuses, and fill the history's ring of admission
    // decisions (one per registration; bounded, so from then on each new one replaces the
    // oldest): the heap is compared from there.
    let warm_up = tidal_core::history::MAX_ADMISSIONS as u32 + 1;
    for i in 0..warm_up {
        register_delete(&mut s, i);
    }
    let before = LIVE.load(Ordering::Relaxed);
    for i in warm_up..CYCLES {
        register_delete(&mut s, i);
    }
    let after = LIVE.load(Ordering::Relaxed);
    println!("live heap after {warm_up} and after {CYCLES} register/delete cycles: {before} and {after} bytes");
    assert_eq!(s.state().queues.len(), 2, "deleted queues' slots are reused");
    assert!(after - before < 64 * 1024, "the heap grew by {} bytes over {CYCLES} cycles", after - before);
    support::steady_heartbeats(c, "heartbeat_bopf_1_node_1_app_after_1m_queue_register_delete", &mut s, 1, |_, _| {});
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(50);
    targets = churn
}
criterion_main!(benches);
