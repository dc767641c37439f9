//! Approvals end to end: the flow over SSE, policies, audit, elicitation, other users, replicas and
//! prompt injection.

mod audit;
mod elicitation;
mod flow;
mod injection;
mod other_users;
mod policies;
mod replicas;
