//! A progress bar on stderr for work that takes a while: bytes of the input read, rate
//! and time left (indicatif). Shown only when stderr is a terminal, and only once the
//! work has run for a second, so that quick commands and pipes (`2>file`, CI logs) never
//! see it; cleared when the work ends.
//!
//! `PERFDATA_PROGRESS_DELAY_MS` sets the delay (tests use 0, so that a small input shows
//! the bar in a pseudo-terminal).

use std::io::IsTerminal;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// The progress of reading one input.
pub struct Progress {
    /// `None` when stderr is not a terminal: nothing is ever drawn.
    bar: Option<ProgressBar>,
    start: Instant,
    delay: Duration,
    shown: bool,
}

impl Progress {
    /// Progress over `path`'s bytes (a spinner with the bytes read for stdin and
    /// directories, whose size is not known up front).
    pub fn for_input(path: &Path) -> Self {
        let delay = std::env::var("PERFDATA_PROGRESS_DELAY_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .map_or(Duration::from_secs(1), Duration::from_millis);
        let bar = (std::io::stderr().is_terminal() && !crate::quiet()).then(|| {
            let total = std::fs::metadata(path).ok().filter(|m| m.is_file());
            let (bar, template) = match total {
                Some(m) => (
                    ProgressBar::with_draw_target(Some(m.len()), ProgressDrawTarget::hidden()),
                    "{bar:30} {bytes}/{total_bytes} {bytes_per_sec} {eta} left",
                ),
                None => (
                    ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden()),
                    "{spinner} {bytes} {bytes_per_sec}",
                ),
            };
            if let Ok(style) = ProgressStyle::with_template(template) {
                bar.set_style(style);
            }
            bar
        });
        Progress {
            bar,
            start: Instant::now(),
            delay,
            shown: false,
        }
    }

    /// The input has been read up to byte `pos`.
    pub fn set(&mut self, pos: u64) {
        let Some(bar) = &self.bar else { return };
        bar.set_position(pos);
        if !self.shown && self.start.elapsed() >= self.delay {
            bar.set_draw_target(ProgressDrawTarget::stderr());
            self.shown = true;
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// A thread drawing a [`Progress`] from a reader's counter of bytes read
/// (`PerfReader::progress`) while a library call does the reading; stopped, and the
/// bar cleared, when dropped.
pub struct Watch {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Progress {
    /// Show the progress of reading `path` as `counter` says, ten times a second. No
    /// thread where no bar can be shown (stderr not a terminal, `-q`).
    pub fn watch(path: &Path, counter: Arc<AtomicU64>) -> Watch {
        let stop = Arc::new(AtomicBool::new(false));
        let mut progress = Progress::for_input(path);
        if progress.bar.is_none() {
            return Watch { stop, thread: None };
        }
        let flag = Arc::clone(&stop);
        // The interrupt handler stays the main thread's (see spawn_without_signals).
        let thread = perfdata_write::output::interrupt::spawn_without_signals(move || {
            // Drawn at least once, and once more with where the reading ended.
            loop {
                progress.set(counter.load(Ordering::Relaxed));
                if flag.load(Ordering::Relaxed) {
                    break;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            progress.set(counter.load(Ordering::Relaxed));
        });
        Watch {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
