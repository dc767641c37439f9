//! `GET /api/me`: who the bearer token belongs to — workspace, user, token and scopes. The web
//! UI calls it to decide what to show; any valid token may call it.

use crate::auth::Authenticated;
use crate::error::{ApiError, ErrorBody};
use crate::mirrors;
use crate::routes::users::UserRoleView;
use crate::state::AppState;
use axum::Json;
use axum::extract::State;
use serde::Serialize;
use switchboard_core::{Scope, TokenId, UserId, WorkspaceId};
use switchboard_store::StoreError;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(me))
}

/// The caller: their workspace, user, token and the token's scopes.
#[derive(Debug, Serialize, ToSchema)]
pub struct Me {
    pub workspace: WorkspaceSummary,
    #[schema(value_type = String)]
    pub user_id: UserId,
    /// The user the token acts as (`null` only when that user no longer exists).
    pub user: Option<UserSummary>,
    /// `null` for anonymous access granted by configuration.
    #[schema(value_type = Option<String>)]
    pub token_id: Option<TokenId>,
    #[schema(value_type = Vec<mirrors::Scope>)]
    pub scopes: Vec<Scope>,
}

/// A workspace's id and name.
#[derive(Debug, Serialize, ToSchema)]
pub struct WorkspaceSummary {
    #[schema(value_type = String)]
    pub id: WorkspaceId,
    pub name: String,
}

/// A user's id, name and role.
#[derive(Debug, Serialize, ToSchema)]
pub struct UserSummary {
    #[schema(value_type = String)]
    pub id: UserId,
    pub name: String,
    pub role: UserRoleView,
}

/// Who the bearer token belongs to.
#[utoipa::path(
    get,
    path = "/me",
    tag = "me",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The caller", body = Me),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
    )
)]
async fn me(
    State(state): State<AppState>,
    Authenticated(principal): Authenticated,
) -> Result<Json<Me>, ApiError> {
    let workspace = state.store.get_workspace(&principal.workspace_id).await?;
    let user = match state
        .store
        .get_user(&principal.workspace_id, &principal.user_id)
        .await
    {
        Ok(user) => Some(UserSummary {
            id: user.id,
            name: user.name,
            role: user.role.into(),
        }),
        Err(StoreError::NotFound { .. }) => None,
        Err(error) => return Err(error.into()),
    };
    Ok(Json(Me {
        workspace: WorkspaceSummary {
            id: workspace.id,
            name: workspace.name,
        },
        user_id: principal.user_id,
        user,
        token_id: principal.token_id,
        scopes: principal.scopes.iter().collect(),
    }))
}
