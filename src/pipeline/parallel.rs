//! Work spread over the cores: each worker takes the next item until none is left.

use std::sync::atomic::{AtomicUsize, Ordering};

/// How many threads work on `items` items: one per core, up to 8, and one per 32 items.
fn workers(items: usize) -> usize {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(8)
        .min(items.div_ceil(32))
        .max(1)
}

/// Hand every item (with its index) to `work` on one of the workers, each worker
/// folding into its own accumulator; a worker stops early when `work` says so
/// (returns false). The accumulators come back in no meaningful order: callers sort by
/// the index, so that nothing depends on which thread did what.
pub(super) fn fold<T, A, F>(items: &[T], work: F) -> Vec<A>
where
    T: Sync,
    A: Send + Default,
    F: Fn(&mut A, usize, &T) -> bool + Sync,
{
    let next = AtomicUsize::new(0);
    let worker = || {
        let mut acc = A::default();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(i) else {
                break;
            };
            if !work(&mut acc, i, item) {
                break;
            }
        }
        acc
    };
    let n = workers(items.len());
    if n == 1 {
        return vec![worker()];
    }
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..n).map(|_| scope.spawn(worker)).collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    })
}
