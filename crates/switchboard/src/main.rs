//! The `switchboard` binary: parses the command line, loads and validates the configuration,
//! sets up logging, and hands over to `serve` or an admin command. Thin by design — the
//! behaviour lives in the library crates.

mod admin;
mod cli;
mod command_audit;
mod config;
mod gateway;
mod output;
mod people;
mod registry;
mod serve;
mod servers;
mod shutdown;
mod telemetry;

use anyhow::Context;
use clap::Parser;
use cli::{Cli, Command};
use config::{Config, FlagOverride};
use switchboard_store::{SecretCipher, Store};

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    if let Command::Completions { shell } = cli.command {
        // Needs no configuration, store or logging: it only describes the command line.
        clap_complete::generate(
            shell,
            &mut <Cli as clap::CommandFactory>::command(),
            "switchboard",
            &mut std::io::stdout(),
        );
        return std::process::ExitCode::SUCCESS;
    }
    let config = match load_config(&cli) {
        Ok(config) => config,
        Err(error) => {
            eprintln!("switchboard: {error}");
            return std::process::ExitCode::from(2);
        }
    };
    telemetry::init(&config.log);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("switchboard: cannot start the async runtime: {error}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match runtime.block_on(dispatch(cli.command, config, cli.global.json)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("switchboard: {error:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn load_config(cli: &Cli) -> Result<Config, config::ConfigError> {
    let mut flags = Vec::new();
    if let Some(data_dir) = &cli.global.data_dir {
        flags.push(FlagOverride {
            key: "data_dir",
            flag: "--data-dir",
            value: data_dir.to_string_lossy().into_owned(),
        });
    }
    if let Command::Serve(serve) = &cli.command {
        if let Some(bind) = &serve.bind {
            flags.push(FlagOverride {
                key: "server.bind",
                flag: "--bind",
                value: bind.clone(),
            });
        }
        if let Some(public_url) = &serve.public_url {
            flags.push(FlagOverride {
                key: "server.public_url",
                flag: "--public-url",
                value: public_url.clone(),
            });
        }
    }
    config::load(cli.global.config.as_deref(), std::env::vars(), &flags)
}

async fn dispatch(command: Command, config: Config, json: bool) -> anyhow::Result<()> {
    let output = output::Output::new(json);
    match command {
        Command::Serve(_) => serve::serve(config).await,
        Command::Migrate => admin::migrate(&config, output).await,
        Command::Token(command) => admin::token(&config, command, output).await,
        Command::Workspace(command) => admin::workspace(&config, command, output).await,
        Command::User(command) => admin::user(&config, command, output).await,
        Command::Servers(arguments) => servers::run(*arguments, json).await,
        Command::Registry(arguments) => registry::run(*arguments, json).await,
        Command::Gateway(arguments) => gateway::run(arguments),
        Command::Completions { .. } => Ok(()),
    }
}

/// Opens the store the configuration selects, with the encryption key from
/// `SWITCHBOARD_ENCRYPTION_KEY` or the data dir's key file. `migrate` applies pending
/// migrations first.
async fn open_store(config: &Config, migrate: bool) -> anyhow::Result<Store> {
    let explicit_key = std::env::var(switchboard_store::ENCRYPTION_KEY_ENV).ok();
    let (cipher, key_source) = SecretCipher::resolve(explicit_key.as_deref(), &config.data_dir)
        .context("loading the encryption key")?;
    tracing::debug!(?key_source, "encryption key loaded");
    let store = if migrate {
        Store::open(&config.database, &config.data_dir, cipher).await
    } else {
        Store::connect(&config.database, &config.data_dir, cipher).await
    };
    store.with_context(|| {
        format!(
            "opening the {} store",
            config
                .database
                .backend_kind()
                .map(|kind| kind.as_str())
                .unwrap_or("configured")
        )
    })
}
