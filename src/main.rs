fn main() {
    std::process::exit(rdmagen::cli::main(std::env::args_os()));
}
