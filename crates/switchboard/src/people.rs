//! `user set-role|deactivate|reactivate|delete`: changing what a user may do, on the store
//! directly like the other admin subcommands (no service or token needed). The store keeps the
//! same rules as `/api/people`: the workspace keeps an active owner or admin, a change reaches
//! every token at its next use, a deactivated user's browser sessions end. Switchboard's own
//! service user is not a person and is refused here too.

use crate::admin::{UserRow, find_user, find_workspace, owner_of};
use crate::cli::{ConversationsChoice, NewUserRole, UserCommand};
use crate::command_audit::CommandAudit;
use crate::output::Output;
use anyhow::{Context, bail};
use serde::Serialize;
use switchboard_registry::OWN_ENDPOINT_SYNC_USER;
use switchboard_store::{RemovedConversations, Store, UserAccessChange, UserRole};

/// `user delete`: who was removed and what became of their conversations.
#[derive(Debug, Serialize)]
struct RemovedUserRow {
    id: String,
    name: String,
    conversations: &'static str,
    transferred_conversations: u64,
    conversations_owner: Option<String>,
}

/// Runs one of the access-changing user subcommands (the others are `admin`'s).
pub async fn run(store: &Store, command: UserCommand, output: Output) -> anyhow::Result<()> {
    match command {
        UserCommand::SetRole {
            name,
            role,
            workspace,
        } => {
            let role = match role {
                NewUserRole::Member => UserRole::Member,
                NewUserRole::Admin => UserRole::Admin,
            };
            let change = UserAccessChange {
                role: Some(role),
                active: None,
            };
            change_access(store, &workspace, &name, change, output).await
        }
        UserCommand::Deactivate { name, workspace } => {
            let change = UserAccessChange {
                role: None,
                active: Some(false),
            };
            change_access(store, &workspace, &name, change, output).await
        }
        UserCommand::Reactivate { name, workspace } => {
            let change = UserAccessChange {
                role: None,
                active: Some(true),
            };
            change_access(store, &workspace, &name, change, output).await
        }
        UserCommand::Delete {
            name,
            conversations,
            to,
            workspace,
        } => {
            delete(
                store,
                &workspace,
                &name,
                conversations,
                to.as_deref(),
                output,
            )
            .await
        }
        UserCommand::Create { .. } | UserCommand::List { .. } => {
            unreachable!("`admin` runs create and list")
        }
    }
}

fn refuse_service_user(name: &str) -> anyhow::Result<()> {
    if name == OWN_ENDPOINT_SYNC_USER {
        bail!(
            "'{name}' is Switchboard's own service user, not a person; it cannot be changed or removed"
        );
    }
    Ok(())
}

async fn change_access(
    store: &Store,
    workspace: &str,
    name: &str,
    change: UserAccessChange,
    output: Output,
) -> anyhow::Result<()> {
    refuse_service_user(name)?;
    let workspace = find_workspace(store, workspace).await?;
    let user_id = find_user(store, &workspace, name).await?;
    let user = store
        .update_user_access(&workspace.id, &user_id, change)
        .await
        .with_context(|| format!("changing user '{name}'"))?;
    CommandAudit::new(store).user_changed(&user).await;
    output.emit(&UserRow::from(user), |user| {
        let state = if user.active { "active" } else { "deactivated" };
        println!("{}: {}, {state}", user.name, user.role);
    })
}

async fn delete(
    store: &Store,
    workspace: &str,
    name: &str,
    conversations: ConversationsChoice,
    to: Option<&str>,
    output: Output,
) -> anyhow::Result<()> {
    refuse_service_user(name)?;
    let workspace = find_workspace(store, workspace).await?;
    let user_id = find_user(store, &workspace, name).await?;
    let choice = match (conversations, to) {
        (ConversationsChoice::Delete, Some(_)) => {
            bail!("--to names who receives kept conversations: it goes with --conversations keep")
        }
        (ConversationsChoice::Delete, None) => RemovedConversations::Delete,
        (ConversationsChoice::Keep, Some(heir)) => {
            RemovedConversations::TransferTo(find_user(store, &workspace, heir).await?)
        }
        (ConversationsChoice::Keep, None) => {
            RemovedConversations::TransferTo(owner_of(store, &workspace).await?)
        }
    };
    let heir = match &choice {
        RemovedConversations::TransferTo(heir) => {
            Some(store.get_user(&workspace.id, heir).await?.name)
        }
        RemovedConversations::Delete => None,
    };
    let removed = store
        .delete_user(&workspace.id, &user_id, choice)
        .await
        .with_context(|| format!("removing user '{name}'"))?;
    CommandAudit::new(store)
        .user_removed(&removed, heir.as_deref())
        .await;
    let row = RemovedUserRow {
        id: removed.user.id.to_string(),
        name: removed.user.name,
        conversations: if heir.is_some() { "keep" } else { "delete" },
        transferred_conversations: removed.transferred_conversations,
        conversations_owner: heir,
    };
    output.emit(&row, |row| match &row.conversations_owner {
        Some(heir) => println!(
            "{} removed; {} conversation(s) now belong to {heir}",
            row.name, row.transferred_conversations
        ),
        None => println!("{} removed with their conversations", row.name),
    })
}
