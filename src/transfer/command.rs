//! The command line's `export`, `import` and `migrate-store` (see `src/cli.rs`): what they
//! print, and where.

use std::path::{Path, PathBuf};

use tokio::io::AsyncWriteExt;

use super::{export, import, migrate_store, Progress, Workspace, Writer};
use crate::{config::Settings, store::Store};

async fn open(settings: &Settings) -> Result<Store, String> {
    Store::open(
        &settings.store_url(),
        2,
        crate::events::Records::shared(&settings.public_base()),
    )
    .await
    .map_err(|e| e.to_string())
}

/// `corkboard export`: the archive to `out`, or to stdout.
pub async fn run_export(
    settings: &Settings,
    workspace: &str,
    out: Option<&Path>,
) -> Result<(), String> {
    let store = open(settings).await?;
    let progress = Progress::on_terminal();
    let written = match out {
        Some(path) => {
            let file = tokio::fs::File::create(path)
                .await
                .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
            let mut sink = Writer(tokio::io::BufWriter::new(file));
            let mut written =
                export(&store, Workspace::Named(workspace), &mut sink, &progress).await;
            if written.is_ok() {
                written = sink
                    .0
                    .flush()
                    .await
                    .map_err(|e| crate::Error::internal_in("writing the archive", e));
            }
            if written.is_err() {
                let _ = tokio::fs::remove_file(path).await;
            }
            written
        }
        None => {
            let mut sink = Writer(tokio::io::stdout());
            let written = export(&store, Workspace::Named(workspace), &mut sink, &progress).await;
            let flushed = sink
                .0
                .flush()
                .await
                .map_err(|e| crate::Error::internal_in("writing the archive", e));
            written.and(flushed)
        }
    };
    store.close().await;
    written.map_err(|e| match e {
        crate::Error::NotFound { .. } => format!("the store has no workspace `{workspace}`"),
        e => describe(&e),
    })?;
    if let Some(path) = out {
        eprintln!("exported workspace `{workspace}` to {}", path.display());
    }
    Ok(())
}

/// `corkboard import`: restores `file`; prints each hook's new url (and secret) and each
/// webhook's new signing secret on stdout.
pub async fn run_import(
    settings: &Settings,
    file: &PathBuf,
    workspace: Option<&str>,
) -> Result<(), String> {
    let reader =
        std::fs::File::open(file).map_err(|e| format!("cannot open {}: {e}", file.display()))?;
    let store = open(settings).await?;
    let imported = import(
        &store,
        reader,
        workspace,
        &settings.public_base(),
        &Progress::on_terminal(),
    )
    .await;
    store.close().await;
    let imported = imported.map_err(|e| match e {
        crate::Error::Conflict(why) => format!("import refused, nothing written: {why}"),
        e => describe(&e),
    })?;
    let rows: Vec<String> = imported
        .rows
        .iter()
        .map(|(section, n)| format!("{n} {section}"))
        .collect();
    eprintln!(
        "imported into workspace `{}`: {}",
        imported.workspace,
        if rows.is_empty() {
            "nothing".into()
        } else {
            rows.join(", ")
        }
    );
    if !imported.hooks.is_empty() {
        eprintln!("each hook has a new url (an archive holds no token); give it to its sender:");
    }
    for hook in imported.hooks {
        match hook.secret {
            Some(secret) => println!("{} {} {} secret {secret}", hook.id, hook.name, hook.url),
            None => println!("{} {} {}", hook.id, hook.name, hook.url),
        }
    }
    if !imported.webhooks.is_empty() {
        eprintln!(
            "each webhook has a new signing secret (an archive holds none); give it to its receiver:"
        );
    }
    for webhook in imported.webhooks {
        println!("{} {} secret {}", webhook.id, webhook.url, webhook.secret);
    }
    Ok(())
}

/// `corkboard migrate-store`: copies, then prints each table's rows on both sides.
pub async fn run_migrate_store(from: &str, to: &str) -> Result<(), String> {
    let counted = migrate_store(from, to, &Progress::on_terminal())
        .await
        .map_err(|e| match e {
            crate::Error::Conflict(why) => format!("migrate-store refused, nothing written: {why}"),
            e => describe(&e),
        })?;
    println!("{:<18} {:>10} {:>10}", "table", "source", "target");
    for c in counted {
        println!("{:<18} {:>10} {:>10}", c.table, c.source, c.target);
    }
    Ok(())
}

/// The error with its causes: an operator running a command needs the database's words.
fn describe(e: &crate::Error) -> String {
    let mut text = e.to_string();
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}
