// mimalloc: rendering and verifying a job allocates many small strings and maps; the
// system allocator was a fifth of the run time in profiles (bench/RESULTS.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(rdmagen::cli::main(std::env::args_os()));
}
