//! `/api/people`: an admin manages the people of its own workspace (scope `admin`) — lists
//! them with their tokens' use, changes a role, deactivates and reactivates, removes. People
//! are added with `POST /api/users` (`users.rs`).
//!
//! What a token may do is read from its holder's current role and active flag on every
//! request (`store::authentication`), so a change here takes effect on the next request of
//! every token of that person, and `/mcp`'s cache of verified tokens is emptied by the
//! store. The workspace always keeps one active owner or admin (409 otherwise, decided in the
//! store's transaction); nobody deactivates or removes themselves (409: another admin must);
//! Switchboard's own service user is not a person and cannot be changed here (409). Users of
//! other workspaces answer 404.

use crate::auth::{Scoped, scopes};
use crate::error::{ApiError, ErrorBody};
use crate::routes::users::{UserRoleView, is_internal_user};
use crate::state::AppState;
use crate::wire_common::audit_details;
use axum::Json;
use axum::extract::{Path, Query, State};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use switchboard_approvals::ConfigurationChange;
use switchboard_approvals::audit_details::{PersonChanged, PersonRemoved};
use switchboard_core::{Principal, UserId};
use switchboard_store::{
    RemovedConversations, TokenRecord, UserAccessChange, UserRecord, UserRole,
};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_people))
        .routes(routes!(update_person, delete_person))
}

/// A role an admin can give (the owner is made with the workspace).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum AssignableRole {
    Admin,
    Member,
}

impl From<AssignableRole> for UserRole {
    fn from(role: AssignableRole) -> Self {
        match role {
            AssignableRole::Admin => UserRole::Admin,
            AssignableRole::Member => UserRole::Member,
        }
    }
}

/// `PATCH /api/people/{user_id}` body: what to change; at least one field.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdatePersonBody {
    /// The new role. A member's tokens lose `admin` at once (and get it back with the role).
    #[serde(default)]
    pub role: Option<AssignableRole>,
    /// `false` deactivates: every token of the person is refused (401) from the next
    /// request on, until `true` reactivates them.
    #[serde(default)]
    pub active: Option<bool>,
}

/// A person as the People page shows them.
#[derive(Debug, Serialize, ToSchema)]
pub struct PersonView {
    #[schema(value_type = String)]
    pub id: UserId,
    pub name: String,
    pub role: UserRoleView,
    /// False once deactivated: their tokens are refused until they are reactivated.
    pub active: bool,
    /// Switchboard's own service user, not a person (it cannot be changed here).
    pub internal: bool,
    /// Their tokens that still work (not revoked, not expired).
    pub usable_tokens: usize,
    /// The last time one of their tokens was used (to the minute).
    pub last_seen_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
}

impl PersonView {
    fn new(user: UserRecord, tokens: &[&TokenRecord], now: DateTime<Utc>) -> Self {
        Self {
            internal: is_internal_user(&user.name),
            usable_tokens: tokens.iter().filter(|t| t.is_usable_at(now)).count(),
            last_seen_at: tokens.iter().filter_map(|t| t.last_used_at).max(),
            id: user.id,
            name: user.name,
            role: user.role.into(),
            active: user.active,
            created_at: user.created_at,
        }
    }
}

/// List the workspace's people with their role, state and tokens' use.
#[utoipa::path(
    get,
    path = "/people",
    tag = "people",
    responses(
        (status = 200, description = "Every user of the workspace, oldest first", body = Vec<PersonView>),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks the `admin` scope", body = ErrorBody),
    ),
    security(("bearer" = [])),
)]
async fn list_people(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::Admin>,
) -> Result<Json<Vec<PersonView>>, ApiError> {
    let users = state.store.list_users(&principal.workspace_id).await?;
    let tokens = state.store.list_tokens(&principal.workspace_id).await?;
    let mut by_user: HashMap<&UserId, Vec<&TokenRecord>> = HashMap::new();
    for token in &tokens {
        by_user.entry(&token.user_id).or_default().push(token);
    }
    let now = Utc::now();
    let people = users
        .into_iter()
        .map(|user| {
            let own = by_user.get(&user.id).map(Vec::as_slice).unwrap_or_default();
            PersonView::new(user, own, now)
        })
        .collect();
    Ok(Json(people))
}

/// Change a person's role, or deactivate or reactivate them.
#[utoipa::path(
    patch,
    path = "/people/{user_id}",
    tag = "people",
    params(("user_id" = String, Path, description = "The person")),
    request_body = UpdatePersonBody,
    responses(
        (status = 200, description = "The person as they now are", body = PersonView),
        (status = 400, description = "The body is not JSON, or a field has the wrong type", body = ErrorBody),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks the `admin` scope", body = ErrorBody),
        (status = 404, description = "No such person in the workspace", body = ErrorBody),
        (status = 409, description = "The last active owner or admin, the caller deactivating themselves, or Switchboard's own service user", body = ErrorBody),
        (status = 422, description = "Nothing to change, or an unknown role or field", body = ErrorBody),
    ),
    security(("bearer" = [])),
)]
async fn update_person(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::Admin>,
    Path(user_id): Path<String>,
    Json(body): Json<UpdatePersonBody>,
) -> Result<Json<PersonView>, ApiError> {
    if body.role.is_none() && body.active.is_none() {
        return Err(ApiError::Unprocessable(
            "nothing to change: give `role` (admin or member) and/or `active`".into(),
        ));
    }
    let user_id = UserId::from_string(user_id);
    let user = changeable_person(&state, &principal, &user_id).await?;
    if body.active == Some(false) && user.id == principal.user_id {
        return Err(ApiError::Conflict(
            "you cannot deactivate yourself; another admin can".into(),
        ));
    }
    let change = UserAccessChange {
        role: body.role.map(UserRole::from),
        active: body.active,
    };
    let updated = state
        .store
        .update_user_access(&principal.workspace_id, &user_id, change)
        .await?;
    audit(&state, &principal, "user.updated", &updated).await;
    let tokens = state.store.list_tokens(&principal.workspace_id).await?;
    let own: Vec<&TokenRecord> = tokens.iter().filter(|t| t.user_id == user_id).collect();
    Ok(Json(PersonView::new(updated, &own, Utc::now())))
}

/// What becomes of a removed person's conversations: `keep` gives them to the admin who
/// removes the person, `delete` deletes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ConversationsChoice {
    Keep,
    Delete,
}

impl ConversationsChoice {
    pub fn as_str(self) -> &'static str {
        match self {
            ConversationsChoice::Keep => "keep",
            ConversationsChoice::Delete => "delete",
        }
    }

    /// The choice of a `?conversations=` value (the whole of the 400's explanation otherwise).
    fn parse(value: Option<&str>) -> Result<Self, ApiError> {
        match value {
            Some("keep") => Ok(Self::Keep),
            Some("delete") => Ok(Self::Delete),
            Some(other) => Err(ApiError::BadRequest(format!(
                "`conversations` must be `keep` (they become yours) or `delete`, not `{other}`"
            ))),
            None => Err(ApiError::BadRequest(
                "say what becomes of the person's conversations: `?conversations=keep` \
                 (they become yours) or `?conversations=delete`"
                    .into(),
            )),
        }
    }
}

/// `DELETE /api/people/{user_id}` query. The value is read as text and checked after the
/// person is found, so that an unknown person answers 404 whatever the query.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DeletePersonQuery {
    /// Required. `keep`: the person's conversations (with their approval and elicitation
    /// requests) become the removing admin's; `delete`: they are deleted with the person.
    #[param(required = true, value_type = ConversationsChoice)]
    #[serde(default)]
    conversations: Option<String>,
}

/// What a removal did.
#[derive(Debug, Serialize, ToSchema)]
pub struct RemovedPersonView {
    #[schema(value_type = String)]
    pub id: UserId,
    pub name: String,
    pub conversations: ConversationsChoice,
    /// How many conversations became the caller's (0 with `delete`).
    pub transferred_conversations: u64,
    /// Who owns the kept conversations now (the caller); absent with `delete`.
    #[schema(value_type = Option<String>)]
    pub conversations_owner: Option<UserId>,
}

/// Remove a person with their tokens and own credentials; their conversations are kept (they
/// become the caller's) or deleted, as `conversations` says. The audit log keeps its records.
#[utoipa::path(
    delete,
    path = "/people/{user_id}",
    tag = "people",
    params(("user_id" = String, Path, description = "The person"), DeletePersonQuery),
    responses(
        (status = 200, description = "Removed", body = RemovedPersonView),
        (status = 400, description = "`conversations` is missing or not `keep` or `delete`", body = ErrorBody),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks the `admin` scope", body = ErrorBody),
        (status = 404, description = "No such person in the workspace", body = ErrorBody),
        (status = 409, description = "The last active owner or admin, the caller themselves, or Switchboard's own service user", body = ErrorBody),
    ),
    security(("bearer" = [])),
)]
async fn delete_person(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::Admin>,
    Path(user_id): Path<String>,
    Query(query): Query<DeletePersonQuery>,
) -> Result<Json<RemovedPersonView>, ApiError> {
    let user_id = UserId::from_string(user_id);
    let user = changeable_person(&state, &principal, &user_id).await?;
    let choice = ConversationsChoice::parse(query.conversations.as_deref())?;
    if user.id == principal.user_id {
        return Err(ApiError::Conflict(
            "you cannot remove yourself; another admin can".into(),
        ));
    }
    let conversations = match choice {
        ConversationsChoice::Keep => RemovedConversations::TransferTo(principal.user_id.clone()),
        ConversationsChoice::Delete => RemovedConversations::Delete,
    };
    let removed = state
        .store
        .delete_user(&principal.workspace_id, &user_id, conversations)
        .await?;
    let view = RemovedPersonView {
        conversations_owner: (choice == ConversationsChoice::Keep)
            .then(|| principal.user_id.clone()),
        id: removed.user.id,
        name: removed.user.name,
        conversations: choice,
        transferred_conversations: removed.transferred_conversations,
    };
    audit_removal(&state, &principal, removed.user.role, &view).await;
    Ok(Json(view))
}

/// The person `user_id` of the caller's workspace (404 otherwise), unless it is
/// Switchboard's own service user (409).
async fn changeable_person(
    state: &AppState,
    principal: &Principal,
    user_id: &UserId,
) -> Result<UserRecord, ApiError> {
    let user = state
        .store
        .get_user(&principal.workspace_id, user_id)
        .await?;
    if is_internal_user(&user.name) {
        return Err(ApiError::Conflict(format!(
            "'{}' is Switchboard's own service user, not a person; it cannot be changed or removed",
            user.name
        )));
    }
    Ok(user)
}

async fn audit(state: &AppState, principal: &Principal, action: &str, user: &UserRecord) {
    state
        .approvals
        .audit()
        .configuration_change(
            principal,
            ConfigurationChange::new(
                action,
                user.id.as_str(),
                audit_details(&PersonChanged {
                    name: &user.name,
                    role: user.role,
                    active: user.active,
                }),
            ),
        )
        .await;
}

async fn audit_removal(
    state: &AppState,
    principal: &Principal,
    role: UserRole,
    removed: &RemovedPersonView,
) {
    let details = PersonRemoved {
        name: &removed.name,
        role,
        conversations: removed.conversations.as_str(),
        transferred_conversations: removed.transferred_conversations,
        conversations_owner: removed.conversations_owner.as_ref().map(UserId::as_str),
    };
    state
        .approvals
        .audit()
        .configuration_change(
            principal,
            ConfigurationChange::new("user.deleted", removed.id.as_str(), audit_details(&details)),
        )
        .await;
}
