use std::process::ExitCode;

#[tokio::main]
async fn main() -> ExitCode {
    corkboard::cli::run().await
}
