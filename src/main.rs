use std::process::ExitCode;

/// mimalloc rather than the system's allocator: a request allocates and frees many small
/// buffers (headers, rows, JSON), and glibc's malloc and free took 15-18% of the server's
/// CPU while delivering webhooks (perf, bench/README "Webhook fan-out").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> ExitCode {
    corkboard::cli::run().await
}
