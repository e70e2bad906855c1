//! [`Cancel`]: a flag a conversion checks before each record, so that whoever runs it
//! (another thread, or a signal handler of the binary's) can stop it. A cancelled
//! conversion returns [`WriteError::Cancelled`](crate::WriteError::Cancelled) and
//! leaves no output: its temp file is removed, the old target is untouched.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A cancellation flag, cheap to clone and to check; setting it is async-signal-safe
/// (one atomic store).
#[derive(Debug, Clone)]
pub struct Cancel(Flag);

#[derive(Debug, Clone)]
enum Flag {
    Shared(Arc<AtomicBool>),
    Static(&'static AtomicBool),
}

impl Default for Cancel {
    fn default() -> Self {
        Self::new()
    }
}

impl Cancel {
    /// A flag not yet set.
    pub fn new() -> Self {
        Cancel(Flag::Shared(Arc::new(AtomicBool::new(false))))
    }

    /// A flag in a `static`, as a signal handler sets it.
    pub fn from_static(flag: &'static AtomicBool) -> Self {
        Cancel(Flag::Static(flag))
    }

    fn flag(&self) -> &AtomicBool {
        match &self.0 {
            Flag::Shared(f) => f,
            Flag::Static(f) => f,
        }
    }

    /// Ask the conversions that check this flag to stop.
    pub fn cancel(&self) {
        self.flag().store(true, Ordering::SeqCst);
    }

    /// Whether [`Cancel::cancel`] was called.
    #[inline]
    pub fn is_cancelled(&self) -> bool {
        self.flag().load(Ordering::Relaxed)
    }
}
