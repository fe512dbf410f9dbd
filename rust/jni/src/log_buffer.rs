//! Routes the core's `tracing` events to the RM log.
//!
//! Records are formatted into a bounded in-memory buffer; the Java shim drains it from a
//! daemon thread and hands each line to log4j at the record's level. Draining from Java avoids
//! calling into the JVM from inside the core (no JNI upcalls under the scheduler lock).
//!
//! The level comes from the `TIDAL_LOG` environment variable (`error`, `warn`, `info`,
//! `debug`, `trace`; default `info`). Panics are logged here too, with their location, before
//! they become Java exceptions.

use once_cell::sync::Lazy;
use parking_lot::Mutex;
use std::collections::VecDeque;
use std::fmt::Write as _;
use std::sync::Once;
use tracing::field::{Field, Visit};
use tracing::level_filters::LevelFilter;
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};

/// Lines kept when nobody drains; older ones are dropped and counted.
const CAPACITY: usize = 10_000;

struct Buffer {
    lines: VecDeque<String>,
    dropped: u64,
}

static BUFFER: Lazy<Mutex<Buffer>> = Lazy::new(|| Mutex::new(Buffer { lines: VecDeque::new(), dropped: 0 }));
static INSTALL: Once = Once::new();

fn push(line: String) {
    let mut b = BUFFER.lock();
    if b.lines.len() == CAPACITY {
        b.lines.pop_front();
        b.dropped += 1;
    }
    b.lines.push_back(line);
}

/// Takes every buffered line, newline-separated, oldest first.
pub fn drain() -> String {
    let mut b = BUFFER.lock();
    let mut out = String::new();
    if b.dropped > 0 {
        let _ = writeln!(out, "WARN\ttidal\t{} native log records were dropped (buffer full)", b.dropped);
        b.dropped = 0;
    }
    for line in b.lines.drain(..) {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

struct BufferLayer;

struct Fields(String);

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.0.insert_str(0, value);
        } else {
            let _ = write!(self.0, " {}={}", field.name(), value);
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.0.insert_str(0, &format!("{value:?}"));
        } else {
            let _ = write!(self.0, " {}={:?}", field.name(), value);
        }
    }
}

impl<S: Subscriber> Layer<S> for BufferLayer {
    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let mut fields = Fields(String::new());
        event.record(&mut fields);
        let meta = event.metadata();
        // Tabs and newlines are the record separators; keep messages on one line.
        let message = fields.0.replace(['\n', '\t'], " ");
        push(format!("{}\t{}\t{}", meta.level(), meta.target(), message));
    }
}

fn level_from_env() -> LevelFilter {
    match std::env::var("TIDAL_LOG").map(|v| v.to_ascii_lowercase()).as_deref() {
        Ok("error") => LevelFilter::ERROR,
        Ok("warn") => LevelFilter::WARN,
        Ok("debug") => LevelFilter::DEBUG,
        Ok("trace") => LevelFilter::TRACE,
        Ok("off") => LevelFilter::OFF,
        _ => LevelFilter::INFO,
    }
}

/// Installs the subscriber and the panic hook once per process.
pub fn install() {
    INSTALL.call_once(|| {
        let subscriber = tracing_subscriber::registry().with(BufferLayer.with_filter(level_from_env()));
        // Another subscriber may already be global if the library is embedded; keep it then.
        let _ = tracing::subscriber::set_global_default(subscriber);
        std::panic::set_hook(Box::new(|info| {
            tracing::event!(Level::ERROR, "{info}");
        }));
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_are_buffered_with_level_and_drained_once() {
        install();
        tracing::warn!(node = 3, "node\tlost");
        let out = drain();
        let line = out.lines().find(|l| l.contains("node lost")).expect("record buffered");
        assert!(line.starts_with("WARN\t"), "{line}");
        assert!(line.ends_with("node lost node=3"), "{line}");
        assert!(!drain().contains("node lost"));
    }
}
