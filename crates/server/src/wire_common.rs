//! Wire pieces several API areas share: the OpenAPI schema of a token scope (a scope set is
//! sent and answered as `core::ScopeSet` itself, its serde shape being the wire shape; this
//! module only describes it, from [`Scope::ALL`], so the spec cannot miss a scope), and the
//! typed details of the configuration changes the routes audit.

use std::borrow::Cow;
use switchboard_core::Scope;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};

/// The OpenAPI description of one token scope (`chat:use`, `admin`…). Never built: used as
/// `#[schema(value_type = Vec<ScopeName>)]` on `ScopeSet` fields.
#[derive(Debug)]
pub enum ScopeName {}

impl utoipa::PartialSchema for ScopeName {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .description(Some("A token scope; `admin` implies every other scope."))
            .enum_values(Some(Scope::ALL.iter().map(|scope| scope.as_str())))
            .into()
    }
}

impl utoipa::ToSchema for ScopeName {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("Scope")
    }
}

/// The `details` of an audited configuration change, from its typed struct.
pub use switchboard_approvals::audit_details::to_details as audit_details;
