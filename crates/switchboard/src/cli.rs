//! The command line: `serve` and the admin subcommands. Flags that mirror settings are
//! applied on top of the configuration file and environment (see `config`).

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "switchboard",
    version,
    about = "Switchboard: an MCP host with chat, tools and approvals"
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// Options every subcommand takes (they all open the same store).
#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// TOML configuration file.
    #[arg(long, global = true, env = "SWITCHBOARD_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Data directory (embedded database, generated encryption key) [env: SWITCHBOARD_DATA_DIR]
    /// [default: ./data]
    #[arg(long, global = true, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// Print JSON instead of text, on every command that prints data (one object or array on
    /// stdout, for scripts).
    #[arg(long, global = true)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the HTTP service.
    Serve(ServeArgs),
    /// Apply pending database migrations and exit.
    Migrate,
    /// Manage API tokens.
    #[command(subcommand)]
    Token(TokenCommand),
    /// Manage workspaces.
    #[command(subcommand)]
    Workspace(WorkspaceCommand),
    /// Manage the users of a workspace (the people or automations tokens act as): list, add,
    /// set-role, deactivate, reactivate, delete. `users` works too.
    #[command(subcommand, visible_alias = "users")]
    User(UserCommand),
    /// Search the MCP registry a running instance is configured with (`[registry] url`) and
    /// add a server from it, over its HTTP API (URL and token as for `servers`).
    Registry(Box<crate::registry::RegistryArgs>),
    /// Manage the MCP servers of a running instance over its HTTP API (URL and token from
    /// --api-url/--token or SWITCHBOARD_URL/SWITCHBOARD_TOKEN).
    Servers(Box<crate::servers::ServersArgs>),
    /// The MCP gateway: `gateway connect-config --client claude-code|cursor|vscode [--bud NAME]`
    /// prints what to paste into that client.
    Gateway(crate::gateway::GatewayArgs),
    /// Print a shell completion script: `switchboard completions bash > /etc/bash_completion.d/switchboard`.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on [env: SWITCHBOARD_BIND] [default: 127.0.0.1:8080]
    #[arg(long, value_name = "ADDR")]
    pub bind: Option<String>,
    /// Where people and OAuth authorization servers reach this Switchboard (the redirect URI
    /// and the client metadata document are built from it) [env: SWITCHBOARD_PUBLIC_URL]
    /// [default: http://127.0.0.1:8080]
    #[arg(long, value_name = "URL")]
    pub public_url: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum TokenCommand {
    /// Issue a token and print it (shown once).
    Create {
        /// A label for people ("ci", "laptop").
        #[arg(long)]
        name: String,
        /// Comma-separated scopes: chat:use, schema:read, data:read, data:write, servers:read,
        /// servers:write, gateway:use, admin.
        #[arg(long)]
        scopes: String,
        /// Workspace name.
        #[arg(long, default_value = "default")]
        workspace: String,
        /// Expire the token after this many days (never, when omitted).
        #[arg(long, value_name = "DAYS")]
        expires_in_days: Option<u32>,
        /// The user the token acts as, by name (see `user list`); the workspace's owner when
        /// omitted. A member's token may not carry `admin`.
        #[arg(long, value_name = "NAME")]
        user: Option<String>,
    },
    /// List a workspace's tokens (never their secrets).
    List {
        #[arg(long, default_value = "default")]
        workspace: String,
    },
    /// Revoke a token by id; it stops working at once.
    Revoke {
        token_id: String,
        #[arg(long, default_value = "default")]
        workspace: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum WorkspaceCommand {
    /// Create a workspace with an owner and print the owner's all-scopes token (shown once).
    Create { name: String },
    /// List workspaces.
    List,
}

#[derive(Debug, Subcommand)]
pub enum UserCommand {
    /// Add a user to a workspace; issue its tokens with `token create --user NAME`.
    #[command(visible_alias = "add")]
    Create {
        /// A display name or e-mail address, unique in the workspace.
        name: String,
        /// What the user is to the workspace: only admins (and the owner) may hold the
        /// `admin` scope.
        #[arg(long, value_enum, default_value_t = NewUserRole::Member)]
        role: NewUserRole,
        /// Workspace name.
        #[arg(long, default_value = "default")]
        workspace: String,
    },
    /// List a workspace's users with their role and whether they are active.
    List {
        #[arg(long, default_value = "default")]
        workspace: String,
    },
    /// Make a user an admin or a member; their tokens gain or lose `admin` at once.
    SetRole {
        name: String,
        #[arg(value_enum)]
        role: NewUserRole,
        #[arg(long, default_value = "default")]
        workspace: String,
    },
    /// Deactivate a user: every token of theirs is refused and their browser sessions end,
    /// until `reactivate`.
    Deactivate {
        name: String,
        #[arg(long, default_value = "default")]
        workspace: String,
    },
    /// Reactivate a deactivated user.
    Reactivate {
        name: String,
        #[arg(long, default_value = "default")]
        workspace: String,
    },
    /// Remove a user with their tokens and own credentials; say what becomes of their
    /// conversations.
    Delete {
        name: String,
        /// `keep`: they are given to `--to` (the workspace's owner by default); `delete`:
        /// they are deleted with the user.
        #[arg(long, value_enum)]
        conversations: ConversationsChoice,
        /// Who receives kept conversations, by name.
        #[arg(long, value_name = "NAME")]
        to: Option<String>,
        #[arg(long, default_value = "default")]
        workspace: String,
    },
}

/// What becomes of a removed user's conversations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ConversationsChoice {
    Keep,
    Delete,
}

/// The roles a user can be given here (the owner comes with the workspace).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum NewUserRole {
    Member,
    Admin,
}
