//! Failure detectors for one case: a wall-clock limit and a memory limit, both far
//! above what any input of this harness needs. They catch hangs and blow-ups; speed
//! targets live in bench/.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use proptest::test_runner::{Config, FileFailurePersistence};

/// A case that takes longer than this is a hang (debug build, 2 shared cores).
pub const TIME_LIMIT: Duration = Duration::from_secs(30);

/// A case whose thread holds more than this at once is a blow-up: the inputs here are
/// at most a few hundred KiB.
pub const MEMORY_LIMIT: isize = 512 << 20;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn note(delta: isize) {
    // try_with: allocations also happen while a thread's locals are torn down.
    let _ = LIVE.try_with(|live| {
        let now = live.get() + delta;
        live.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

/// The system allocator, counting what each thread allocates and frees. Memory freed
/// on another thread than it was allocated on makes a thread's count drift, never
/// hides a blow-up on the thread that allocates.
pub struct Counting;

// SAFETY: every call is forwarded to System unchanged; only a thread-local counter
// (const-initialised, without destructor, so it never allocates) is updated.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            note(layout.size() as isize);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            note(layout.size() as isize);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        note(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            note(new_size as isize - layout.size() as isize);
        }
        p
    }
}

/// Run `case` on its own thread and return its result. A panic is re-raised here (so
/// proptest shrinks it); a case that outlives [`TIME_LIMIT`] or holds more than
/// [`MEMORY_LIMIT`] fails with `what` in the message.
pub fn run<T: Send + 'static>(what: &str, case: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    let started = Instant::now();
    let handle = std::thread::Builder::new()
        .name(what.to_owned())
        .spawn(move || {
            let out = case();
            let peak = PEAK.with(Cell::get);
            // The receiver is gone only when the case already failed by time.
            let _ = tx.send(peak);
            out
        })
        .expect("a thread for the case");
    match rx.recv_timeout(TIME_LIMIT) {
        Ok(peak) => {
            let out = handle
                .join()
                .unwrap_or_else(|p| std::panic::resume_unwind(p));
            assert!(
                peak <= MEMORY_LIMIT,
                "{what}: held {peak} bytes at once (limit {MEMORY_LIMIT})"
            );
            out
        }
        // The sender was dropped without sending: the case panicked.
        Err(mpsc::RecvTimeoutError::Disconnected) => match handle.join() {
            Err(payload) => std::panic::resume_unwind(payload),
            Ok(_) => unreachable!("a case that returns has reported"),
        },
        Err(mpsc::RecvTimeoutError::Timeout) => panic!(
            "{what}: still running after {:?} (limit {TIME_LIMIT:?}); the thread is left behind",
            started.elapsed()
        ),
    }
}

/// `RDMAGEN_FUZZ_CASES`, when set, replaces every target's case count.
pub fn cases(default: u32) -> u32 {
    std::env::var("RDMAGEN_FUZZ_CASES")
        .ok()
        .map(|v| v.parse().expect("RDMAGEN_FUZZ_CASES is a number"))
        .unwrap_or(default)
}

/// Proptest settings for a target: its case count (see [`cases`]) and where failing
/// inputs are kept, so they are replayed first on every later run.
pub fn config(default_cases: u32, regressions: &'static str) -> Config {
    Config {
        cases: cases(default_cases),
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(regressions))),
        // Shrinking re-runs the target on smaller inputs; bound it so that a failure in
        // a long run is reported within minutes.
        max_shrink_iters: 2048,
        ..Config::default()
    }
}
