//! Admin subcommands (`migrate`, `token …`, `workspace …`, `user …`): they act on the store
//! directly, so they work with the service stopped and need no token. Output is plain text for
//! people.

use crate::cli::{NewUserRole, TokenCommand, UserCommand, WorkspaceCommand};
use crate::config::Config;
use anyhow::{Context, bail};
use chrono::{TimeDelta, Utc};
use std::collections::HashMap;
use switchboard_core::{ScopeSet, TokenId, UserId};
use switchboard_mcp_client::registry::OWN_ENDPOINT_SYNC_USER;
use switchboard_store::{NewToken, Store, UserRole, WorkspaceRecord};

pub async fn migrate(config: &Config) -> anyhow::Result<()> {
    let store = crate::open_store(config, false).await?;
    store.migrate().await.context("applying migrations")?;
    println!(
        "{} store is at migration {}",
        store.backend_kind(),
        store
            .known_migration_versions()
            .last()
            .copied()
            .unwrap_or_default()
    );
    store.close().await;
    Ok(())
}

pub async fn token(config: &Config, command: TokenCommand) -> anyhow::Result<()> {
    let store = crate::open_store(config, true).await?;
    let result = run_token_command(&store, command).await;
    store.close().await;
    result
}

async fn run_token_command(store: &Store, command: TokenCommand) -> anyhow::Result<()> {
    match command {
        TokenCommand::Create {
            name,
            scopes,
            workspace,
            expires_in_days,
            user,
        } => {
            let workspace = find_workspace(store, &workspace).await?;
            let scopes = ScopeSet::parse_list(&scopes)?;
            if scopes.is_empty() {
                bail!("--scopes must name at least one scope");
            }
            let user_id = match user {
                Some(name) => find_user(store, &workspace, &name).await?,
                None => owner_of(store, &workspace).await?,
            };
            let expires_at =
                expires_in_days.map(|days| Utc::now() + TimeDelta::days(i64::from(days)));
            let issued = store
                .create_token(
                    &workspace.id,
                    NewToken {
                        user_id,
                        name,
                        scopes,
                        expires_at,
                    },
                )
                .await
                .context("creating the token")?;
            println!("token id: {}", issued.record.id);
            println!("scopes:   {}", issued.record.scopes);
            println!("token:    {}", issued.plaintext.expose());
            println!("(shown once; only its hash is stored)");
        }
        TokenCommand::List { workspace } => {
            let workspace = find_workspace(store, &workspace).await?;
            let tokens = store.list_tokens(&workspace.id).await?;
            // The user each token acts as, by name (the id if the user is unknown here).
            let user_names: HashMap<UserId, String> = store
                .list_users(&workspace.id)
                .await?
                .into_iter()
                .map(|user| (user.id, user.name))
                .collect();
            println!(
                "{:<38} {:<20} {:<14} {:<8} {:<20} scopes",
                "id", "name", "prefix", "state", "user"
            );
            let now = Utc::now();
            for token in tokens {
                let state = if token.revoked_at.is_some() {
                    "revoked"
                } else if token.is_usable_at(now) {
                    "active"
                } else {
                    "expired"
                };
                let user = user_names
                    .get(&token.user_id)
                    .map_or(token.user_id.as_str(), String::as_str);
                println!(
                    "{:<38} {:<20} {:<14} {:<8} {:<20} {}",
                    token.id, token.name, token.display_prefix, state, user, token.scopes
                );
            }
        }
        TokenCommand::Revoke {
            token_id,
            workspace,
        } => {
            let workspace = find_workspace(store, &workspace).await?;
            let token = store
                .revoke_token(&workspace.id, &TokenId::from_string(token_id))
                .await
                .context("revoking the token")?;
            println!("revoked token {} ({})", token.id, token.name);
        }
    }
    Ok(())
}

pub async fn user(config: &Config, command: UserCommand) -> anyhow::Result<()> {
    let store = crate::open_store(config, true).await?;
    let result = run_user_command(&store, command).await;
    store.close().await;
    result
}

async fn run_user_command(store: &Store, command: UserCommand) -> anyhow::Result<()> {
    match command {
        UserCommand::Create {
            name,
            role,
            workspace,
        } => {
            if name == OWN_ENDPOINT_SYNC_USER {
                bail!("the name '{name}' is reserved for Switchboard's own service user");
            }
            let workspace = find_workspace(store, &workspace).await?;
            let role = match role {
                NewUserRole::Member => UserRole::Member,
                NewUserRole::Admin => UserRole::Admin,
            };
            let user = store
                .create_user(&workspace.id, &name, role)
                .await
                .with_context(|| {
                    format!("creating user '{name}' in workspace '{}'", workspace.name)
                })?;
            println!("user id: {}", user.id);
            println!("name:    {}", user.name);
            println!("role:    {}", user.role);
        }
        UserCommand::List { workspace } => {
            let workspace = find_workspace(store, &workspace).await?;
            println!("{:<38} {:<24} {:<8} created", "id", "name", "role");
            for user in store.list_users(&workspace.id).await? {
                println!(
                    "{:<38} {:<24} {:<8} {}",
                    user.id,
                    user.name,
                    user.role.as_str(),
                    user.created_at.to_rfc3339()
                );
            }
        }
    }
    Ok(())
}

pub async fn workspace(config: &Config, command: WorkspaceCommand) -> anyhow::Result<()> {
    let store = crate::open_store(config, true).await?;
    let result = match command {
        WorkspaceCommand::Create { name } => create_workspace(&store, &name).await,
        WorkspaceCommand::List => list_workspaces(&store).await,
    };
    store.close().await;
    result
}

async fn create_workspace(store: &Store, name: &str) -> anyhow::Result<()> {
    let workspace = store
        .create_workspace(name)
        .await
        .with_context(|| format!("creating workspace '{name}'"))?;
    let owner = store
        .create_user(&workspace.id, "owner", UserRole::Owner)
        .await
        .context("creating the workspace owner")?;
    let issued = store
        .create_token(
            &workspace.id,
            NewToken {
                user_id: owner.id,
                name: "owner".into(),
                scopes: ScopeSet::all(),
                expires_at: None,
            },
        )
        .await
        .context("creating the owner token")?;
    println!("workspace id: {}", workspace.id);
    println!("owner token:  {}", issued.plaintext.expose());
    println!("(shown once; only its hash is stored)");
    Ok(())
}

async fn list_workspaces(store: &Store) -> anyhow::Result<()> {
    println!("{:<38} {:<24} created", "id", "name");
    for workspace in store.list_workspaces().await? {
        println!(
            "{:<38} {:<24} {}",
            workspace.id,
            workspace.name,
            workspace.created_at.to_rfc3339()
        );
    }
    Ok(())
}

async fn find_workspace(store: &Store, name: &str) -> anyhow::Result<WorkspaceRecord> {
    store
        .find_workspace_by_name(name)
        .await?
        .with_context(|| format!("no workspace named '{name}' (see `switchboard workspace list`)"))
}

/// The user called `name` in the workspace, for `token create --user`.
async fn find_user(
    store: &Store,
    workspace: &WorkspaceRecord,
    name: &str,
) -> anyhow::Result<UserId> {
    let user = store
        .find_user_by_name(&workspace.id, name)
        .await?
        .with_context(|| {
            format!(
                "no user named '{name}' in workspace '{}' (see `switchboard user list --workspace {}`)",
                workspace.name, workspace.name
            )
        })?;
    Ok(user.id)
}

/// The user new CLI tokens act as: the workspace's first owner, created if there is none.
async fn owner_of(store: &Store, workspace: &WorkspaceRecord) -> anyhow::Result<UserId> {
    let users = store.list_users(&workspace.id).await?;
    if let Some(owner) = users.into_iter().find(|user| user.role == UserRole::Owner) {
        return Ok(owner.id);
    }
    Ok(store
        .create_user(&workspace.id, "owner", UserRole::Owner)
        .await?
        .id)
}
