//! Starting an answer and attaching to one.
//!
//! `start_turn` validates everything that can be refused with a plain HTTP error (message,
//! ephemeral servers, conversation, MCP configuration, provider), stores the question, and
//! only then starts the answer in its own task; the caller streams its events. `attach`
//! follows the answer in flight from its first event, or replays the last finished one from
//! the store. An answer holds the conversation's claim in the store from start to end, so no
//! other replica answers there meanwhile.

use super::ChatService;
use super::drain::answer_in_flight_elsewhere;
use crate::error::{ChatError, ChatResult};
use crate::events::ChatEvent;
use crate::mcp_config::{BudMcpConfig, McpConfigOverrides, resolve_mcp_config};
use crate::replay::replay_last_answer;
use crate::tools::{EphemeralServer, UserCredential};
use crate::turn::TurnPlan;
use crate::turn::handle::TurnWatcher;
use crate::turn::runner::run_turn;
use futures::StreamExt;
use futures::stream::BoxStream;
use std::time::Duration;
use switchboard_core::{ChatMessage, ConversationId, Principal};
use switchboard_store::{AnswerClaim, ConversationPatch, NewConversation, NewMessage, Store};
use tokio_util::sync::CancellationToken;

/// `POST /chat/stream`, decoded.
#[derive(Clone, Debug)]
pub struct TurnRequest {
    /// `None` starts a new conversation (no bud, titled after the message).
    pub conversation_id: Option<ConversationId>,
    pub message: String,
    /// Servers for this request only.
    pub ephemeral_servers: Vec<EphemeralServer>,
    /// The caller's bearer token, forwarded only to our own MCP endpoint.
    pub credential: Option<UserCredential>,
}

/// The events of one answer, ending with `done`.
pub struct TurnStream {
    pub conversation_id: ConversationId,
    /// True when following an answer being generated; false for a replay.
    pub live: bool,
    pub events: BoxStream<'static, ChatEvent>,
}

impl std::fmt::Debug for TurnStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TurnStream")
            .field("conversation_id", &self.conversation_id)
            .field("live", &self.live)
            .finish_non_exhaustive()
    }
}

const TITLE_CHARS: usize = 80;

fn watcher_stream(watcher: TurnWatcher) -> BoxStream<'static, ChatEvent> {
    futures::stream::unfold(watcher, |mut watcher| async move {
        watcher.next_event().await.map(|event| (event, watcher))
    })
    .boxed()
}

/// Longest `done` waits for the answer's claim to be released.
const RELEASE_WAIT: Duration = Duration::from_secs(2);

/// The asker's stream: `done` is held back until the conversation's claim is released (or
/// [`RELEASE_WAIT`]), so a client that asks again right after `done` — through any replica —
/// is not refused by the answer it just watched end.
fn asker_stream(
    watcher: TurnWatcher,
    released: CancellationToken,
) -> BoxStream<'static, ChatEvent> {
    futures::stream::unfold((watcher, released), |(mut watcher, released)| async move {
        let event = watcher.next_event().await?;
        if matches!(event, ChatEvent::Done(_)) {
            let _ = tokio::time::timeout(RELEASE_WAIT, released.cancelled()).await;
        }
        Some((event, (watcher, released)))
    })
    .boxed()
}

/// Ends the store's claim of an answer. A failure only delays other replicas: the claim goes
/// with this instance (when it stops or is presumed dead), and this process takes its own
/// claims over.
async fn release_claim(store: &Store, claim: &AnswerClaim) {
    if let Err(error) = store.release_conversation_answer(claim).await {
        tracing::warn!(
            conversation_id = %claim.conversation_id,
            %error,
            "could not release the conversation's answer claim; other replicas refuse new \
             questions there until this instance stops"
        );
    }
}

fn title_from(message: &str) -> String {
    let line = message
        .lines()
        .find(|line| !line.trim().is_empty())
        .unwrap_or("")
        .trim();
    let mut title: String = line.chars().take(TITLE_CHARS).collect();
    if line.chars().count() > TITLE_CHARS {
        title.push('…');
    }
    title
}

impl ChatService {
    /// Stores the question and starts answering it.
    pub async fn start_turn(
        &self,
        principal: &Principal,
        request: TurnRequest,
    ) -> ChatResult<TurnStream> {
        let engine = &self.engine;
        let config = &engine.config;
        let message = request.message.trim();
        if message.is_empty() {
            return Err(ChatError::invalid("message", "must not be empty"));
        }
        if message.chars().count() > config.max_message_chars {
            return Err(ChatError::invalid(
                "message",
                format!("must be at most {} characters", config.max_message_chars),
            ));
        }
        if request.ephemeral_servers.len() > config.max_ephemeral_servers {
            return Err(ChatError::invalid(
                "mcp_servers",
                format!(
                    "at most {} servers per request",
                    config.max_ephemeral_servers
                ),
            ));
        }
        let policy = engine.tools.client().request_url_policy();
        let mut ephemeral = Vec::with_capacity(request.ephemeral_servers.len());
        for (index, server) in request.ephemeral_servers.iter().enumerate() {
            let field = format!("mcp_servers[{index}]");
            if ephemeral
                .iter()
                .any(|known: &switchboard_mcp_client::UpstreamServer| known.name == server.name)
            {
                return Err(ChatError::invalid(
                    format!("{field}.name"),
                    format!("'{}' is used twice", server.name),
                ));
            }
            ephemeral.push(server.to_upstream(&field, &principal.workspace_id, policy)?);
        }
        if engine.shutdown.is_cancelled() || self.is_refusing_new_answers() {
            return Err(ChatError::ShuttingDown);
        }

        let store = &engine.store;
        let workspace_id = &principal.workspace_id;
        // Everything that can be refused is checked before a new conversation is created.
        let existing = match &request.conversation_id {
            Some(conversation_id) => Some(
                self.visible_conversation(principal, conversation_id)
                    .await?,
            ),
            None => None,
        };
        let bud = match existing
            .as_ref()
            .and_then(|conversation| conversation.bud_id.as_ref())
        {
            Some(bud_id) => Some(store.get_bud(workspace_id, bud_id).await?),
            None => None,
        };
        let null = serde_json::Value::Null;
        let bud_config =
            BudMcpConfig::parse(bud.as_ref().map(|bud| &bud.mcp_config).unwrap_or(&null))?;
        let overrides = McpConfigOverrides::parse(
            existing
                .as_ref()
                .and_then(|conversation| conversation.mcp_config_overrides.as_ref())
                .unwrap_or(&null),
        )?;
        let servers = store.list_servers(workspace_id).await?;
        let resolved = resolve_mcp_config(&bud_config, &overrides, &servers)?;
        for (index, server) in ephemeral.iter().enumerate() {
            if resolved
                .servers
                .iter()
                .any(|registered| registered.name == server.name)
            {
                return Err(ChatError::invalid(
                    format!("mcp_servers[{index}].name"),
                    format!(
                        "'{}' is already the name of a server of this conversation",
                        server.name
                    ),
                ));
            }
        }
        let chosen = engine.providers.choose(bud.as_ref())?;
        let created_here = existing.is_none();
        let mut conversation = match existing {
            Some(conversation) => conversation,
            None => {
                store
                    .create_conversation(
                        workspace_id,
                        NewConversation {
                            owner_user_id: principal.user_id.clone(),
                            bud_id: None,
                            title: title_from(message),
                            mcp_config_overrides: None,
                        },
                    )
                    .await?
            }
        };

        let (handle, watcher) = match self.register_answer(&conversation.id) {
            Ok(registered) => registered,
            Err(error) => {
                // Refused because a shutdown began meanwhile: the conversation made for this
                // question would stay empty.
                if created_here
                    && let Err(cleanup) = store
                        .delete_conversation(workspace_id, &conversation.id)
                        .await
                {
                    tracing::warn!(%cleanup, "could not remove the conversation of a refused question");
                }
                return Err(error);
            }
        };
        // One answer per conversation across replicas: the store's claim (this process's own
        // registry above only covers this process). Released when the answer task ends.
        let claim = match store
            .claim_conversation_answer(workspace_id, &conversation.id)
            .await
        {
            Ok(Some(claim)) => claim,
            refused => {
                handle.finish();
                engine.turns.end(&handle);
                return Err(match refused {
                    Err(error) => error.into(),
                    _ => answer_in_flight_elsewhere(),
                });
            }
        };
        let stored = store
            .append_message(
                workspace_id,
                &conversation.id,
                NewMessage::from_chat(ChatMessage::user(message)),
            )
            .await;
        let user_message = match stored {
            Ok(user_message) => user_message,
            Err(error) => {
                handle.finish();
                engine.turns.end(&handle);
                release_claim(store, &claim).await;
                return Err(error.into());
            }
        };
        if conversation.title.trim().is_empty() {
            let patch = ConversationPatch {
                title: Some(title_from(message)),
                ..ConversationPatch::default()
            };
            match store
                .update_conversation(workspace_id, &conversation.id, patch)
                .await
            {
                Ok(updated) => conversation = updated,
                Err(error) => tracing::warn!(%error, "could not title the conversation"),
            }
        }
        let conversation_id = conversation.id.clone();
        let plan = TurnPlan {
            principal: principal.clone(),
            credential: request.credential,
            conversation,
            bud,
            resolved,
            ephemeral,
            user_message,
            chosen,
        };
        let (engine, store) = (engine.clone(), store.clone());
        let released = CancellationToken::new();
        let release_done = released.clone().drop_guard();
        tokio::spawn(async move {
            run_turn(engine, plan, handle).await;
            release_claim(&store, &claim).await;
            drop(release_done);
        });
        Ok(TurnStream {
            conversation_id,
            live: true,
            events: asker_stream(watcher, released),
        })
    }

    /// Follows the answer in flight (from its first event), or replays the last finished one.
    pub async fn attach(
        &self,
        principal: &Principal,
        conversation_id: &ConversationId,
    ) -> ChatResult<TurnStream> {
        let conversation = self
            .visible_conversation(principal, conversation_id)
            .await?;
        if let Some(handle) = self.engine.turns.current(&conversation.id) {
            return Ok(TurnStream {
                conversation_id: conversation.id,
                live: true,
                events: watcher_stream(handle.watch()),
            });
        }
        let events = replay_last_answer(
            &self.engine.store,
            &conversation,
            self.engine.config.tool_result_max_chars,
        )
        .await?;
        Ok(TurnStream {
            conversation_id: conversation.id,
            live: false,
            events: futures::stream::iter(events).boxed(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_come_from_the_first_line() {
        assert_eq!(
            title_from("\n  What types exist?\nmore"),
            "What types exist?"
        );
        let long = "x".repeat(100);
        assert_eq!(title_from(&long).chars().count(), TITLE_CHARS + 1);
    }
}
