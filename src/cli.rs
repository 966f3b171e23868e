//! The command line: `serve` (the default), `migrate`, `keys create|list|revoke`,
//! `setup-link`, `config`, `export`, `import`, `migrate-store`.
//! Every command reads the same settings as `serve`.

use std::{path::PathBuf, process::ExitCode};

use clap::{Parser, Subcommand};
use tracing_subscriber::{fmt, EnvFilter};

use crate::{
    app::{self, AppState},
    auth::{self, NewKey, Scopes, Tier},
    config::{LogFormat, Settings},
    store::Store,
    transfer::command,
};

#[derive(Parser)]
#[command(
    name = "corkboard",
    version,
    about = "Typed pins pushed onto live dashboards"
)]
struct Cli {
    /// Settings file layered over the defaults (also CORKBOARD_CONFIG).
    #[arg(long, global = true, env = "CORKBOARD_CONFIG")]
    config: Option<PathBuf>,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Run the HTTP server (the default command).
    Serve,
    /// Apply the store's migrations and exit.
    Migrate,
    /// Manage API keys.
    Keys {
        #[command(subcommand)]
        command: KeysCommand,
    },
    /// Print a new setup link for the owner's account (it works once, for 24 hours); older
    /// links stop working.
    SetupLink,
    /// Print the effective configuration, secrets redacted.
    Config,
    /// Write a workspace's archive (JSON; no keys, sessions or hook secrets).
    Export {
        /// The workspace's name.
        #[arg(long, default_value = "default")]
        workspace: String,
        /// Write it to FILE instead of stdout.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Restore an archive into an empty workspace, with its ids.
    Import {
        file: PathBuf,
        /// The workspace to restore into (default: the archive's).
        #[arg(long)]
        workspace: Option<String>,
    },
    /// Copy a whole store (SQLite or PostgreSQL) into an empty one.
    MigrateStore {
        /// The store to copy, e.g. sqlite://data/corkboard.db
        #[arg(long, value_name = "URL")]
        from: String,
        /// The empty store to fill, e.g. postgres://user@host/db
        #[arg(long, value_name = "URL")]
        to: String,
    },
}

#[derive(Subcommand)]
enum KeysCommand {
    /// Create a key and print it (alone) on stdout; it is never shown again.
    Create {
        #[arg(long)]
        name: String,
        /// Comma-separated scopes, e.g. pins:read,pins:write or *.
        #[arg(long)]
        scopes: String,
        /// starter, professional or team (default: the configured default tier).
        #[arg(long)]
        tier: Option<String>,
        /// Workspace name ([a-z0-9-]{1,64}), created when new.
        #[arg(long, default_value = "default")]
        workspace: String,
    },
    /// List keys (never their secrets).
    List,
    /// Revoke a key by id; it stops working at once on every replica.
    Revoke { id: String },
}

/// Runs the command line and returns the process exit code.
pub async fn run() -> ExitCode {
    let cli = Cli::parse();
    let settings = match Settings::load(cli.config.as_deref()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    init_tracing(settings.log_format);
    let result = match cli.command.unwrap_or(Command::Serve) {
        Command::Serve => serve(settings).await,
        Command::Migrate => Store::open(
            &settings.store_url(),
            1,
            crate::events::Records::shared(&settings.public_base()),
        )
        .await
        .map(|s| {
            eprintln!("migrations applied ({})", s.backend_name());
        })
        .map_err(|e| e.to_string()),
        Command::Keys { command } => keys(settings, command).await,
        Command::SetupLink => setup_link(settings).await,
        Command::Config => {
            println!("{}", settings.redacted_json());
            Ok(())
        }
        Command::Export { workspace, out } => {
            command::run_export(&settings, &workspace, out.as_deref()).await
        }
        Command::Import { file, workspace } => {
            command::run_import(&settings, &file, workspace.as_deref()).await
        }
        Command::MigrateStore { from, to } => command::run_migrate_store(&from, &to).await,
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn init_tracing(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn,rmcp=warn"));
    // Colours only on a terminal: a log file or collector gets plain text.
    let builder = fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()));
    let _ = match format {
        LogFormat::Json => builder.json().try_init(),
        LogFormat::Text => builder.try_init(),
    };
}

async fn serve(settings: Settings) -> Result<(), String> {
    raise_open_files_limit();
    return_large_buffers();
    let listen = settings.listen;
    let state = AppState::connect(settings)
        .await
        .map_err(|e| e.to_string())?;
    bootstrap(&state).await.map_err(|e| e.to_string())?;
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|e| format!("cannot listen on {listen}: {e}"))?;
    tracing::info!(%listen, store = state.store.backend_name(), "corkboard listening");
    app::serve(listener, state, app::shutdown_signal())
        .await
        .map_err(|e| e.to_string())
}

/// Raises the open-files soft limit to the hard limit: every connection and live stream
/// holds a descriptor, and the usual soft limit (1024) is far below what a replica serves.
fn raise_open_files_limit() {
    let Ok((soft, hard)) = rlimit::Resource::NOFILE.get() else {
        return;
    };
    match rlimit::Resource::NOFILE.set(hard, hard) {
        Ok(()) => tracing::info!(was = soft, now = hard, "open files limit raised"),
        Err(e) => tracing::warn!(soft, hard, error = %e, "open files limit left as it was"),
    }
}

/// Allocations of 256 KiB and more (a large rendered page, its records) get pages of their
/// own, given back to the system when freed. glibc's default raises this threshold as such
/// buffers are freed, after which they come from per-thread heaps that keep their memory:
/// measured with four clients listing rendered pages of 1 MiB values, the process grew to
/// 277 MiB with the default and stayed at 149 MiB with this (`.ci/render-memory`).
fn return_large_buffers() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        const LARGE: libc::c_int = 256 * 1024;
        // SAFETY: `mallopt` only sets an allocator parameter; it touches no memory of ours
        // and is safe to call at any time, from any thread.
        let set = unsafe { libc::mallopt(libc::M_MMAP_THRESHOLD, LARGE) };
        if set != 1 {
            tracing::warn!("the allocator's mmap threshold was left as it was");
        }
    }
}

/// On the very first start of a store: the default workspace and one `*` key, printed once,
/// and with local accounts on, the owner's setup link.
async fn bootstrap(state: &AppState) -> crate::Result<()> {
    if !state.store.claim_bootstrap().await? {
        return Ok(());
    }
    let key = auth::create_key(
        &state.store,
        NewKey {
            workspace: "default".into(),
            name: "first key".into(),
            scopes: Scopes::parse_list("*").unwrap_or_default(),
            tier: state.settings.default_tier,
        },
    )
    .await?;
    println!("Created the first API key (scopes: *). It is shown only this once; keep it safe:\n");
    println!("    {}\n", key.secret.expose());
    println!(
        "Use it as: curl -H 'Authorization: Bearer {}' {}/v1/pins",
        key.secret.expose(),
        state.public_base()
    );
    if state.settings.auth.local.enabled {
        let link = auth::local::new_setup_link(&state.store, state.public_base()).await?;
        println!(
            "\nSet up the owner's account in a browser (the link works once, for 24 hours; \
             `corkboard setup-link` makes a new one):\n"
        );
        println!("    {}\n", link.expose());
    }
    Ok(())
}

/// `corkboard setup-link`: a new setup link alone on stdout; every older one stops working.
async fn setup_link(settings: Settings) -> Result<(), String> {
    if !settings.auth.local.enabled {
        return Err("local accounts are off (auth.local.enabled = false)".into());
    }
    let store = Store::open(
        &settings.store_url(),
        1,
        crate::events::Records::shared(&settings.public_base()),
    )
    .await
    .map_err(|e| e.to_string())?;
    let made = auth::local::new_setup_link(&store, &settings.public_base()).await;
    store.close().await;
    let link = made.map_err(|e| e.to_string())?;
    println!("{}", link.expose());
    eprintln!("It works once, for 24 hours; older setup links no longer work.");
    Ok(())
}

async fn keys(settings: Settings, command: KeysCommand) -> Result<(), String> {
    let store = Store::open(
        &settings.store_url(),
        1,
        crate::events::Records::shared(&settings.public_base()),
    )
    .await
    .map_err(|e| e.to_string())?;
    let result = match command {
        KeysCommand::Create {
            name,
            scopes,
            tier,
            workspace,
        } => {
            let scopes =
                Scopes::parse_list(&scopes).map_err(|bad| format!("unknown scope `{bad}`"))?;
            let tier = match tier {
                Some(t) => Tier::parse(&t)
                    .ok_or_else(|| format!("unknown tier `{t}` (starter, professional, team)"))?,
                None => settings.default_tier,
            };
            auth::create_key(
                &store,
                NewKey {
                    workspace,
                    name,
                    scopes,
                    tier,
                },
            )
            .await
            .map(|key| println!("{}", key.secret.expose()))
            .map_err(|e| e.to_string())
        }
        KeysCommand::List => auth::list_keys(&store)
            .await
            .map_err(|e| e.to_string())
            .map(|keys| {
                println!(
                    "{:<26} {:<20} {:<16} {:<13} {:<8} scopes",
                    "id", "name", "workspace", "tier", "status"
                );
                for (key, workspace) in keys {
                    let status = if key.revoked_at.is_some() {
                        "revoked"
                    } else {
                        "active"
                    };
                    println!(
                        "{:<26} {:<20} {:<16} {:<13} {:<8} {}",
                        key.id, key.name, workspace, key.tier, status, key.scopes
                    );
                }
            }),
        KeysCommand::Revoke { id } => auth::revoke_key(&store, &id)
            .await
            .map(|()| eprintln!("revoked {id}"))
            .map_err(|e| e.to_string()),
    };
    store.close().await;
    result
}
