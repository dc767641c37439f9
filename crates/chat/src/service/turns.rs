//! Starting an answer and attaching to one.
//!
//! `start_turn` validates everything that can be refused with a plain HTTP error (message,
//! ephemeral servers, monthly token budgets, conversation, MCP configuration, provider), stores the question, and
//! only then starts the answer in its own task; the caller streams its events. `attach`
//! follows the answer in flight from its first event, or replays the last finished one from
//! the store. An answer holds the conversation's claim in the store from start to end, so no
//! other replica answers there meanwhile.

use super::ChatService;
use super::question_context::{AttachmentRequest, PromptRequest, QuestionServers};
use super::reservation::{AnswerReservation, release_claim};
use crate::error::{ChatError, ChatResult};
use crate::events::ChatEvent;
use crate::mcp_config::{BudMcpConfig, McpConfigOverrides, ResolvedMcpConfig, resolve_mcp_config};
use crate::providers::ModelChain;
use crate::relay::follower::follow_remote_answer;
use crate::relay::publisher::{prune_later, publish_answer};
use crate::replay::replay_last_answer;
use crate::tools::{EphemeralServer, UserCredential};
use crate::turn::TurnPlan;
use crate::turn::handle::TurnWatcher;
use crate::turn::runner::run_turn;
use futures::StreamExt;
use futures::stream::BoxStream;
use std::time::Duration;
use switchboard_core::{ConversationId, Principal};
use switchboard_mcp_client::UpstreamServer;
use switchboard_store::{
    BudRecord, ConversationPatch, ConversationRecord, MessageRecord, NewConversation,
};
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
    /// Resources read and given to the model with the question.
    pub attachments: Vec<AttachmentRequest>,
    /// A prompt whose messages go into the conversation before the answer (`message` may then
    /// be empty).
    pub prompt: Option<PromptRequest>,
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

/// What `start_turn` loads before anything is written.
struct TurnSetup {
    /// `None` when the question starts a new conversation.
    existing: Option<ConversationRecord>,
    bud: Option<BudRecord>,
    resolved: ResolvedMcpConfig,
    models: ModelChain,
}

/// A request's own server may not take the name of one of the conversation's servers.
fn refuse_shadowing_names(
    resolved: &ResolvedMcpConfig,
    ephemeral: &[UpstreamServer],
) -> ChatResult<()> {
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
    Ok(())
}

fn watcher_stream(watcher: TurnWatcher) -> BoxStream<'static, ChatEvent> {
    futures::stream::unfold(watcher, |mut watcher| async move {
        watcher.next_event().await.map(|event| (event, watcher))
    })
    .boxed()
}

/// Longest the end of an answer waits for its events to be relayed to other replicas.
const RELAY_FLUSH_WAIT: Duration = Duration::from_secs(5);

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
    /// Stores the question and starts answering it. Steps: check the request, load what the
    /// conversation answers with, open (or create) the conversation, reserve the answer
    /// (guard), store the question, then hand everything to the answer's task.
    pub async fn start_turn(
        &self,
        principal: &Principal,
        request: TurnRequest,
    ) -> ChatResult<TurnStream> {
        let message = self.checked_message(&request.message, request.prompt.is_some())?;
        let ephemeral = self.checked_ephemeral_servers(principal, &request.ephemeral_servers)?;
        if self.engine.shutdown.is_cancelled() || self.is_refusing_new_answers() {
            return Err(ChatError::ShuttingDown);
        }
        self.check_budgets(principal).await?;
        // Everything that can be refused is checked before a new conversation is created.
        let setup = self
            .turn_setup(principal, request.conversation_id.as_ref(), &ephemeral)
            .await?;
        let servers = QuestionServers {
            resolved: &setup.resolved,
            ephemeral: &ephemeral,
            credential: request.credential.as_ref(),
            conversation_id: setup.existing.as_ref().map(|conversation| &conversation.id),
        };
        let added = self
            .question_messages(
                principal,
                servers,
                message,
                &request.attachments,
                request.prompt.as_ref(),
            )
            .await?;
        let title = match (&request.prompt, message.is_empty()) {
            (Some(prompt), true) => format!("/{}:{}", prompt.server, prompt.name),
            _ => message.to_owned(),
        };
        let created_here = setup.existing.is_none();
        let conversation = self
            .open_conversation(principal, setup.existing, &title)
            .await?;
        let (reservation, watcher) =
            AnswerReservation::acquire(self, &conversation, created_here).await?;
        let user_message = self.store_question(&conversation, added).await?;
        let conversation = self.titled(conversation, &title).await;
        let conversation_id = conversation.id.clone();
        let plan = TurnPlan {
            principal: principal.clone(),
            credential: request.credential,
            conversation,
            bud: setup.bud,
            resolved: setup.resolved,
            ephemeral,
            user_message,
            models: setup.models,
        };
        let released = self.spawn_answer(plan, reservation);
        Ok(TurnStream {
            conversation_id,
            live: true,
            events: asker_stream(watcher, released),
        })
    }

    /// The prompt's messages, then the question; the last one stored is what the turn answers.
    async fn store_question(
        &self,
        conversation: &ConversationRecord,
        added: super::question_context::QuestionMessages,
    ) -> ChatResult<MessageRecord> {
        let store = &self.engine.store;
        let mut last = None;
        for message in added.prompt_messages.into_iter().chain(added.question) {
            last = Some(
                store
                    .append_message(&conversation.workspace_id, &conversation.id, message)
                    .await?,
            );
        }
        last.ok_or_else(|| ChatError::invalid("message", "must not be empty"))
    }

    /// The trimmed question, within `chat.max_message_chars` (empty only with a prompt).
    fn checked_message<'a>(&self, message: &'a str, with_prompt: bool) -> ChatResult<&'a str> {
        let max_message_chars = self.engine.config.max_message_chars;
        let message = message.trim();
        if message.is_empty() && !with_prompt {
            return Err(ChatError::invalid("message", "must not be empty"));
        }
        if message.chars().count() > max_message_chars {
            return Err(ChatError::invalid(
                "message",
                format!("must be at most {max_message_chars} characters"),
            ));
        }
        Ok(message)
    }

    /// The request's own servers (`mcp_servers`): at most `chat.max_ephemeral_servers`, names
    /// unique, URLs allowed by the request URL policy.
    fn checked_ephemeral_servers(
        &self,
        principal: &Principal,
        servers: &[EphemeralServer],
    ) -> ChatResult<Vec<UpstreamServer>> {
        let max_ephemeral_servers = self.engine.config.max_ephemeral_servers;
        if servers.len() > max_ephemeral_servers {
            return Err(ChatError::invalid(
                "mcp_servers",
                format!("at most {max_ephemeral_servers} servers per request"),
            ));
        }
        let policy = self.engine.tools.client().request_url_policy();
        let mut ephemeral: Vec<UpstreamServer> = Vec::with_capacity(servers.len());
        for (index, server) in servers.iter().enumerate() {
            let field = format!("mcp_servers[{index}]");
            if ephemeral.iter().any(|known| known.name == server.name) {
                return Err(ChatError::invalid(
                    format!("{field}.name"),
                    format!("'{}' is used twice", server.name),
                ));
            }
            ephemeral.push(server.to_upstream(&field, &principal.workspace_id, policy)?);
        }
        Ok(ephemeral)
    }

    /// The conversation (if any), its bud, its servers and the model that will answer; the
    /// request's own servers must not take a name of the conversation's servers.
    async fn turn_setup(
        &self,
        principal: &Principal,
        conversation_id: Option<&ConversationId>,
        ephemeral: &[UpstreamServer],
    ) -> ChatResult<TurnSetup> {
        let workspace_id = &principal.workspace_id;
        let existing = match conversation_id {
            Some(conversation_id) => Some(
                self.visible_conversation(principal, conversation_id)
                    .await?,
            ),
            None => None,
        };
        let (bud, resolved) = self
            .conversation_servers(principal, existing.as_ref())
            .await?;
        refuse_shadowing_names(&resolved, ephemeral)?;
        let model_choice = existing
            .as_ref()
            .map(|conversation| conversation.model_choice.clone())
            .unwrap_or_default();
        let models = self
            .engine
            .providers
            .choose(workspace_id, bud.as_ref(), &model_choice)
            .await?;
        Ok(TurnSetup {
            existing,
            bud,
            resolved,
            models,
        })
    }

    /// The bud of `conversation` (if any) and the servers a turn in it uses (for a new
    /// conversation: the workspace's default).
    pub(super) async fn conversation_servers(
        &self,
        principal: &Principal,
        conversation: Option<&ConversationRecord>,
    ) -> ChatResult<(Option<BudRecord>, ResolvedMcpConfig)> {
        let store = &self.engine.store;
        let workspace_id = &principal.workspace_id;
        let bud = match conversation.and_then(|conversation| conversation.bud_id.as_ref()) {
            Some(bud_id) => Some(store.get_bud(workspace_id, bud_id).await?),
            None => None,
        };
        let null = serde_json::Value::Null;
        let bud_config =
            BudMcpConfig::parse(bud.as_ref().map(|bud| &bud.mcp_config).unwrap_or(&null))?;
        let overrides = McpConfigOverrides::parse(
            conversation
                .and_then(|conversation| conversation.mcp_config_overrides.as_ref())
                .unwrap_or(&null),
        )?;
        let servers = store.list_servers(workspace_id).await?;
        let resolved = resolve_mcp_config(&bud_config, &overrides, &servers)?;
        Ok((bud, resolved))
    }

    /// The conversation asked in, created (titled after the question) when there is none.
    async fn open_conversation(
        &self,
        principal: &Principal,
        existing: Option<ConversationRecord>,
        message: &str,
    ) -> ChatResult<ConversationRecord> {
        if let Some(conversation) = existing {
            return Ok(conversation);
        }
        let new_conversation = NewConversation {
            owner_user_id: principal.user_id.clone(),
            bud_id: None,
            title: title_from(message),
            mcp_config_overrides: None,
            model_choice: Default::default(),
        };
        Ok(self
            .engine
            .store
            .create_conversation(&principal.workspace_id, new_conversation)
            .await?)
    }

    /// Gives an untitled conversation the question's first line as its title (best effort).
    async fn titled(&self, conversation: ConversationRecord, message: &str) -> ConversationRecord {
        if !conversation.title.trim().is_empty() {
            return conversation;
        }
        let patch = ConversationPatch {
            title: Some(title_from(message)),
            ..ConversationPatch::default()
        };
        match self
            .engine
            .store
            .update_conversation(&conversation.workspace_id, &conversation.id, patch)
            .await
        {
            Ok(updated) => updated,
            Err(error) => {
                tracing::warn!(%error, "could not title the conversation");
                conversation
            }
        }
    }

    /// Runs the answer in its own task, which releases the claim when it ends; the returned
    /// token is cancelled once it did (see [`asker_stream`]).
    fn spawn_answer(&self, plan: TurnPlan, reservation: AnswerReservation) -> CancellationToken {
        let (handle, claim) = reservation.commit();
        let (engine, store) = (self.engine.clone(), self.engine.store.clone());
        let relay = claim
            .as_ref()
            .filter(|_| store.relays_answer_streams())
            .map(|claim| {
                tokio::spawn(publish_answer(store.clone(), handle.clone(), claim.clone()))
            });
        let released = CancellationToken::new();
        let release_done = released.clone().drop_guard();
        tokio::spawn(async move {
            run_turn(engine, plan, handle).await;
            if let Some(relay) = relay {
                // Every event (`done` included) is in the store before the claim goes, so a
                // follower elsewhere that sees the claim gone reads the end.
                if tokio::time::timeout(RELAY_FLUSH_WAIT, relay).await.is_err() {
                    tracing::warn!("the answer's last events were not relayed in time");
                }
            }
            if let Some(claim) = claim {
                if store.relays_answer_streams() {
                    prune_later(store.clone(), claim.answer_id.clone());
                }
                release_claim(&store, &claim).await;
            }
            drop(release_done);
        });
        released
    }

    /// Follows the answer in flight (from its first event) — here, or on another replica through
    /// the store (`relay`) — or replays the last finished one.
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
        if self.engine.store.relays_answer_streams()
            && let Some(claim) = self
                .engine
                .store
                .answer_in_flight_elsewhere(&conversation.id)
                .await?
        {
            let engine = &self.engine;
            return Ok(TurnStream {
                conversation_id: conversation.id,
                live: true,
                events: follow_remote_answer(
                    engine.store.clone(),
                    &engine.answer_notices,
                    &engine.shutdown,
                    claim,
                ),
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
