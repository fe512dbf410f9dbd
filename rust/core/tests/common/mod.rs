//! Helpers shared by the integration tests; each test crate uses some of them.
#![allow(dead_code)]

use tidal_core::ids::ANY;
use tidal_core::request::Ask;
use tidal_core::Resources;

pub const GB: i64 = 1024;

/// `n` containers of `mem` MB and `vcores` at `priority`, anywhere.
pub fn any_ask(priority: i32, n: i64, mem: i64, vcores: i64) -> Ask {
    Ask { priority, location: ANY, num_containers: n, relax_locality: true, capability: Resources::new(mem, vcores) }
}

/// An LQ element with a burst demand in vcore-seconds and GB-seconds of 1 GB/1 vcore tasks.
pub fn lq(name: &str, period_s: u64, deadline_s: u64, task_seconds: i64) -> String {
    format!(
        "<queue name=\"{name}\"><type>lq</type><period-sec>{period_s}</period-sec>\
         <deadline-sec>{deadline_s}</deadline-sec><burst-demand><memory-mb>{}</memory-mb>\
         <vcores>{task_seconds}</vcores></burst-demand></queue>",
        task_seconds * GB
    )
}
