//! Admin subcommands (`migrate`, `token …`, `workspace …`, `user …`): they act on the store
//! directly, so they work with the service stopped and need no token. Each prints its result as
//! text for people or, with `--json`, as the JSON of the result types below (`output`).

use crate::cli::{NewUserRole, TokenCommand, UserCommand, WorkspaceCommand};
use crate::command_audit::CommandAudit;
use crate::config::Config;
use crate::output::Output;
use anyhow::{Context, bail};
use chrono::{DateTime, TimeDelta, Utc};
use serde::Serialize;
use std::collections::HashMap;
use switchboard_core::{ScopeSet, TokenId, UserId};
use switchboard_registry::OWN_ENDPOINT_SYNC_USER;
use switchboard_store::{NewToken, Store, TokenRecord, UserRecord, UserRole, WorkspaceRecord};

/// `migrate`: where the store is now.
#[derive(Debug, Serialize)]
struct Migrated {
    backend: String,
    migration: i64,
}

/// A token just issued: the only time its secret is shown.
#[derive(Debug, Serialize)]
struct IssuedToken {
    id: String,
    name: String,
    scopes: Vec<String>,
    user_id: String,
    expires_at: Option<DateTime<Utc>>,
    token: String,
}

/// One row of `token list` (never the secret).
#[derive(Debug, Serialize)]
struct TokenRow {
    id: String,
    name: String,
    prefix: String,
    state: &'static str,
    user: String,
    scopes: Vec<String>,
    created_at: DateTime<Utc>,
    expires_at: Option<DateTime<Utc>>,
    last_used_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Serialize)]
struct RevokedToken {
    id: String,
    name: String,
    revoked: bool,
}

#[derive(Debug, Serialize)]
pub(crate) struct UserRow {
    pub id: String,
    pub name: String,
    pub role: String,
    pub active: bool,
    pub created_at: DateTime<Utc>,
}

impl From<UserRecord> for UserRow {
    fn from(user: UserRecord) -> Self {
        Self {
            id: user.id.to_string(),
            name: user.name,
            role: user.role.as_str().to_owned(),
            active: user.active,
            created_at: user.created_at,
        }
    }
}

#[derive(Debug, Serialize)]
struct WorkspaceRow {
    id: String,
    name: String,
    created_at: DateTime<Utc>,
}

/// A workspace just created, with its owner's token (shown once).
#[derive(Debug, Serialize)]
struct CreatedWorkspace {
    id: String,
    name: String,
    owner_token: String,
}

fn scope_names(scopes: &ScopeSet) -> Vec<String> {
    scopes
        .to_string()
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

pub async fn migrate(config: &Config, output: Output) -> anyhow::Result<()> {
    let store = crate::open_store(config, false).await?;
    store.migrate().await.context("applying migrations")?;
    let migrated = Migrated {
        backend: store.backend_kind().to_string(),
        migration: store
            .known_migration_versions()
            .last()
            .copied()
            .unwrap_or_default(),
    };
    store.close().await;
    output.emit(&migrated, |migrated| {
        println!(
            "{} store is at migration {}",
            migrated.backend, migrated.migration
        );
    })
}

pub async fn token(config: &Config, command: TokenCommand, output: Output) -> anyhow::Result<()> {
    let store = crate::open_store(config, true).await?;
    let result = run_token_command(&store, command, output).await;
    store.close().await;
    result
}

async fn run_token_command(
    store: &Store,
    command: TokenCommand,
    output: Output,
) -> anyhow::Result<()> {
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
            CommandAudit::new(store).token_created(&issued.record).await;
            let issued = IssuedToken {
                id: issued.record.id.to_string(),
                name: issued.record.name.clone(),
                scopes: scope_names(&issued.record.scopes),
                user_id: issued.record.user_id.to_string(),
                expires_at: issued.record.expires_at,
                token: issued.plaintext.expose().to_owned(),
            };
            output.emit(&issued, |issued| {
                println!("token id: {}", issued.id);
                println!("scopes:   {}", issued.scopes.join(" "));
                println!("token:    {}", issued.token);
                println!("(shown once; only its hash is stored)");
            })?;
        }
        TokenCommand::List { workspace } => {
            let workspace = find_workspace(store, &workspace).await?;
            let rows = token_rows(store, &workspace).await?;
            output.emit(&rows, |rows| print_token_table(rows))?;
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
            CommandAudit::new(store).token_revoked(&token).await;
            let revoked = RevokedToken {
                id: token.id.to_string(),
                name: token.name,
                revoked: true,
            };
            output.emit(&revoked, |revoked| {
                println!("revoked token {} ({})", revoked.id, revoked.name);
            })?;
        }
    }
    Ok(())
}

/// The workspace's tokens, each with its state and the name of the user it acts as (the id if
/// the user is unknown here).
async fn token_rows(store: &Store, workspace: &WorkspaceRecord) -> anyhow::Result<Vec<TokenRow>> {
    let tokens = store.list_tokens(&workspace.id).await?;
    let user_names: HashMap<UserId, String> = store
        .list_users(&workspace.id)
        .await?
        .into_iter()
        .map(|user| (user.id, user.name))
        .collect();
    let now = Utc::now();
    Ok(tokens
        .into_iter()
        .map(|token| token_row(token, &user_names, now))
        .collect())
}

fn token_row(
    token: TokenRecord,
    user_names: &HashMap<UserId, String>,
    now: DateTime<Utc>,
) -> TokenRow {
    let state = if token.revoked_at.is_some() {
        "revoked"
    } else if token.is_usable_at(now) {
        "active"
    } else {
        "expired"
    };
    let user = user_names
        .get(&token.user_id)
        .cloned()
        .unwrap_or_else(|| token.user_id.to_string());
    TokenRow {
        id: token.id.to_string(),
        name: token.name,
        prefix: token.display_prefix,
        state,
        user,
        scopes: scope_names(&token.scopes),
        created_at: token.created_at,
        expires_at: token.expires_at,
        last_used_at: token.last_used_at,
    }
}

fn print_token_table(rows: &[TokenRow]) {
    println!(
        "{:<38} {:<20} {:<14} {:<8} {:<20} scopes",
        "id", "name", "prefix", "state", "user"
    );
    for row in rows {
        println!(
            "{:<38} {:<20} {:<14} {:<8} {:<20} {}",
            row.id,
            row.name,
            row.prefix,
            row.state,
            row.user,
            row.scopes.join(" ")
        );
    }
}

pub async fn user(config: &Config, command: UserCommand, output: Output) -> anyhow::Result<()> {
    let store = crate::open_store(config, true).await?;
    let result = run_user_command(&store, command, output).await;
    store.close().await;
    result
}

async fn run_user_command(
    store: &Store,
    command: UserCommand,
    output: Output,
) -> anyhow::Result<()> {
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
            CommandAudit::new(store).user_created(&user).await;
            output.emit(&UserRow::from(user), |user| {
                println!("user id: {}", user.id);
                println!("name:    {}", user.name);
                println!("role:    {}", user.role);
            })?;
        }
        UserCommand::List { workspace } => {
            let workspace = find_workspace(store, &workspace).await?;
            let rows: Vec<UserRow> = store
                .list_users(&workspace.id)
                .await?
                .into_iter()
                .map(UserRow::from)
                .collect();
            output.emit(&rows, |rows| {
                println!(
                    "{:<38} {:<24} {:<8} {:<11} created",
                    "id", "name", "role", "state"
                );
                for user in rows {
                    println!(
                        "{:<38} {:<24} {:<8} {:<11} {}",
                        user.id,
                        user.name,
                        user.role,
                        if user.active { "active" } else { "deactivated" },
                        user.created_at.to_rfc3339()
                    );
                }
            })?;
        }
        change => crate::people::run(store, change, output).await?,
    }
    Ok(())
}

pub async fn workspace(
    config: &Config,
    command: WorkspaceCommand,
    output: Output,
) -> anyhow::Result<()> {
    let store = crate::open_store(config, true).await?;
    let result = match command {
        WorkspaceCommand::Create { name } => create_workspace(&store, &name, output).await,
        WorkspaceCommand::List => list_workspaces(&store, output).await,
    };
    store.close().await;
    result
}

async fn create_workspace(store: &Store, name: &str, output: Output) -> anyhow::Result<()> {
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
                user_id: owner.id.clone(),
                name: "owner".into(),
                scopes: ScopeSet::all(),
                expires_at: None,
            },
        )
        .await
        .context("creating the owner token")?;
    let audit = CommandAudit::new(store);
    audit.user_created(&owner).await;
    audit.token_created(&issued.record).await;
    let created = CreatedWorkspace {
        id: workspace.id.to_string(),
        name: workspace.name,
        owner_token: issued.plaintext.expose().to_owned(),
    };
    output.emit(&created, |created| {
        println!("workspace id: {}", created.id);
        println!("owner token:  {}", created.owner_token);
        println!("(shown once; only its hash is stored)");
    })
}

async fn list_workspaces(store: &Store, output: Output) -> anyhow::Result<()> {
    let rows: Vec<WorkspaceRow> = store
        .list_workspaces()
        .await?
        .into_iter()
        .map(|workspace| WorkspaceRow {
            id: workspace.id.to_string(),
            name: workspace.name,
            created_at: workspace.created_at,
        })
        .collect();
    output.emit(&rows, |rows| {
        println!("{:<38} {:<24} created", "id", "name");
        for workspace in rows {
            println!(
                "{:<38} {:<24} {}",
                workspace.id,
                workspace.name,
                workspace.created_at.to_rfc3339()
            );
        }
    })
}

pub(crate) async fn find_workspace(store: &Store, name: &str) -> anyhow::Result<WorkspaceRecord> {
    store
        .find_workspace_by_name(name)
        .await?
        .with_context(|| format!("no workspace named '{name}' (see `switchboard workspace list`)"))
}

/// The user called `name` in the workspace, for `token create --user`.
pub(crate) async fn find_user(
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
pub(crate) async fn owner_of(store: &Store, workspace: &WorkspaceRecord) -> anyhow::Result<UserId> {
    let users = store.list_users(&workspace.id).await?;
    if let Some(owner) = users.into_iter().find(|user| user.role == UserRole::Owner) {
        return Ok(owner.id);
    }
    Ok(store
        .create_user(&workspace.id, "owner", UserRole::Owner)
        .await?
        .id)
}
