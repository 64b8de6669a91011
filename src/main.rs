// mimalloc: rendering and verifying a job allocates many small strings and maps.
// Measured at 10 000 jobs (`validate`, bench/generate.py, median of 5, 2 cores):
// 1.86 s with mimalloc's defaults, 2.73 s with the system allocator. Tuning it to
// return memory at once (arena eager commit and purge delay 0) cut peak RSS from 229
// to 200 MB but took 2.94 s, so it was removed (bench/RESULTS.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    rdmagen::cli::main(std::env::args_os())
}
