// mimalloc: rendering and verifying a job allocates many small strings and maps; the
// system allocator was a fifth of the run time in profiles (bench/RESULTS.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    tune_allocator();
    rdmagen::cli::main(std::env::args_os())
}

/// Return freed memory to the OS at once and commit arenas lazily, so that peak RSS
/// follows what is live (one job per core) rather than what was ever allocated.
/// Option numbers from mimalloc v3's `mi_option_e` (include/mimalloc.h).
fn tune_allocator() {
    const ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = 4;
    const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
    // SAFETY: mi_option_set only stores an integer option; it is called before any
    // thread other than main exists.
    unsafe {
        libmimalloc_sys::mi_option_set(ARENA_EAGER_COMMIT, 0);
        libmimalloc_sys::mi_option_set(PURGE_DELAY, 0);
    }
}
