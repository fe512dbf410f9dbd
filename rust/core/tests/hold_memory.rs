//! Slot reservation holds cost memory by the nodes that hold slots, not by the largest node id:
//! a hold on a node with a huge id allocates no more than one on node 0. The test binary counts
//! every byte allocated, so it holds this one test alone.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use tidal_core::config::Settings;
use tidal_core::ids::ANY;
use tidal_core::request::Ask;
use tidal_core::{Resources, Scheduler};

struct Counting;

static ALLOCATED: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATED.fetch_add(layout.size(), Ordering::Relaxed);
        System.alloc(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATED.fetch_add(new_size, Ordering::Relaxed);
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// Bytes allocated while a two-stage app on node `id` finishes a task of its first stage and
/// the scheduler holds the slot for the second; asserts the hold is made.
fn bytes_to_hold_a_slot_on(id: u32) -> usize {
    let xml = "<tidal><queue name=\"fg\"><slot-reservation isolation-probability=\"1\"/></queue></tidal>";
    let mut s = Scheduler::from_xml(xml, Settings::default()).unwrap();
    s.add_node(id, 1, 2, Resources::new(4096, 4)).unwrap();
    s.add_app(1, "fg", "alice").unwrap();
    let dag = r#"{"version":1,"stages":[
        {"id":"m","tasks":2,"demand":{"memory_mb":1024,"vcores":1},"duration_ms":1000,"priorities":[5]},
        {"id":"r","tasks":2,"demand":{"memory_mb":1024,"vcores":1},"duration_ms":1000,"parents":["m"],"priorities":[8]}]}"#;
    s.set_hints(1, dag).unwrap();
    let ask = Ask {
        priority: 5,
        location: ANY,
        num_containers: 2,
        relax_locality: true,
        capability: Resources::new(1024, 1),
    };
    s.update_asks(1, &[ask], &[], &[]).unwrap();
    let mut out = Vec::new();
    s.node_heartbeat(id, 1_000, &[], &mut out, 4).unwrap();
    assert_eq!(out.len(), 2);
    let before = ALLOCATED.load(Ordering::Relaxed);
    s.node_heartbeat(id, 2_000, &[out[0].allocation_id], &mut Vec::new(), 4).unwrap();
    let bytes = ALLOCATED.load(Ordering::Relaxed) - before;
    assert_eq!(s.holds(id).len(), 1, "the finished task's slot is held");
    bytes
}

#[test]
fn a_hold_on_a_huge_node_id_costs_what_one_on_node_zero_does() {
    let small = bytes_to_hold_a_slot_on(0);
    let huge = bytes_to_hold_a_slot_on(u32::MAX);
    assert!(huge <= small + 1024, "a hold on node {} allocated {huge} bytes, on node 0 {small}", u32::MAX);
}
