//! Resources attached to a conversation's questions, kept current while someone watches the
//! conversation. An attachment's contents are read when the question is asked and stored with
//! it (`core::MessageContext`); a server that declares `resources.subscribe` can say later that
//! the resource changed. While a person has the conversation open (the UI holds
//! `GET …/attachment-updates`), each attached resource of such a server is watched on the
//! person's session (`resources/subscribe`, released when the watch ends); at every
//! `notifications/resources/updated` it is read again and the stored question's contents are
//! replaced — the next turn's model reads the new contents, and the attachment says when
//! (`refreshed_at`) — and the watcher is told. When the upstream session ends (the server
//! restarted), the watch subscribes again on the next session and reads the resource once,
//! since it may have changed meanwhile.
//!
//! Watching is tied to a person looking: nothing is subscribed for conversations nobody has
//! open, and a watch follows at most [`MAX_WATCHED_ATTACHMENTS`] resources (the latest).

use super::ChatService;
use super::question_context::{question_context, resource_block};
use crate::engine::Engine;
use crate::error::ChatResult;
use crate::tools::{STORED_CONTENT_MAX_BYTES, UserCredential};
use chrono::{DateTime, Utc};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use switchboard_core::{
    ConversationId, MESSAGE_CONTEXT_KEY, MessageContext, MessageId, Principal, ResultBlock,
};
use switchboard_mcp_client::{ResourceWatch, UpstreamServer};
use tokio::sync::{Mutex, mpsc};
use tokio::task::JoinHandle;

/// Most attached resources one watch follows (the conversation's latest).
pub const MAX_WATCHED_ATTACHMENTS: usize = 20;
/// How long a watch whose upstream session ended waits before subscribing again.
const RESUBSCRIBE_PAUSE: Duration = Duration::from_secs(1);

/// An attached resource read again after its server said it changed.
#[derive(Clone, Debug, PartialEq)]
pub struct AttachmentUpdate {
    pub server: String,
    pub uri: String,
    pub refreshed_at: DateTime<Utc>,
    /// The stored questions whose attachment now holds the new contents.
    pub message_ids: Vec<MessageId>,
}

/// A watch of a conversation's attachments: their updates, until dropped.
#[derive(Debug)]
pub struct AttachmentWatch {
    pub updates: mpsc::Receiver<AttachmentUpdate>,
    /// How many attached resources are watched (their servers offer subscriptions).
    pub watched: usize,
    followers: Vec<JoinHandle<()>>,
}

impl Drop for AttachmentWatch {
    fn drop(&mut self) {
        for follower in &self.followers {
            follower.abort();
        }
    }
}

impl ChatService {
    /// Watches the resources attached to `conversation_id`'s questions, for `principal` (who
    /// must be able to read it), on the servers a turn of it would use.
    pub async fn watch_attachments(
        &self,
        principal: &Principal,
        credential: Option<&UserCredential>,
        conversation_id: &ConversationId,
    ) -> ChatResult<AttachmentWatch> {
        let tools = self
            .composer_tools(principal, credential, Some(conversation_id))
            .await?;
        let attached = self.attached_resources(principal, conversation_id).await?;
        let (sender, updates) = mpsc::channel(32);
        // One rewrite of a stored question at a time (two attachments of one question).
        let writing = Arc::new(Mutex::new(()));
        let mut followers = Vec::new();
        for ((server, uri), message_ids) in attached {
            let Some(target) = tools
                .targets()
                .into_iter()
                .find(|target| target.upstream.name == server)
            else {
                continue;
            };
            let follower = AttachmentFollower {
                engine: self.engine.clone(),
                principal: principal.clone(),
                conversation_id: conversation_id.clone(),
                upstream: target.upstream.clone(),
                uri,
                message_ids,
                sender: sender.clone(),
                writing: writing.clone(),
            };
            if let Some(watch) = follower.subscribe().await {
                followers.push(tokio::spawn(follower.follow(watch)));
            }
        }
        Ok(AttachmentWatch {
            updates,
            watched: followers.len(),
            followers,
        })
    }

    /// The conversation's attached resources, latest first, with the questions holding each.
    async fn attached_resources(
        &self,
        principal: &Principal,
        conversation_id: &ConversationId,
    ) -> ChatResult<Vec<((String, String), Vec<MessageId>)>> {
        let messages = self
            .engine
            .store
            .list_messages(&principal.workspace_id, conversation_id)
            .await?;
        let mut holders: BTreeMap<(String, String), (i64, Vec<MessageId>)> = BTreeMap::new();
        for message in &messages {
            let Some(context) = MessageContext::from_metadata(&message.metadata) else {
                continue;
            };
            for attachment in context.attachments {
                let entry = holders
                    .entry((attachment.server, attachment.uri))
                    .or_default();
                entry.0 = message.seq;
                entry.1.push(message.id.clone());
            }
        }
        let mut attached: Vec<_> = holders.into_iter().collect();
        attached.sort_by_key(|(_, (latest, _))| std::cmp::Reverse(*latest));
        attached.truncate(MAX_WATCHED_ATTACHMENTS);
        Ok(attached
            .into_iter()
            .map(|(key, (_, message_ids))| (key, message_ids))
            .collect())
    }
}

/// One attached resource, followed for one watch.
struct AttachmentFollower {
    engine: Arc<Engine>,
    principal: Principal,
    conversation_id: ConversationId,
    upstream: UpstreamServer,
    uri: String,
    message_ids: Vec<MessageId>,
    sender: mpsc::Sender<AttachmentUpdate>,
    writing: Arc<Mutex<()>>,
}

impl AttachmentFollower {
    /// Subscribes on the person's session; `None` when the server offers no subscriptions or
    /// cannot be reached (logged).
    async fn subscribe(&self) -> Option<ResourceWatch> {
        let context = question_context(&self.principal, Some(&self.conversation_id));
        match self
            .engine
            .tools
            .client()
            .watch_resource(&self.upstream, &self.uri, &context)
            .await
        {
            Ok(watch) => watch,
            Err(error) => {
                tracing::info!(server = %self.upstream.name, %error, "an attached resource cannot be watched");
                None
            }
        }
    }

    /// Reads the resource again at each update until the watcher leaves; subscribes again
    /// when the upstream session ends.
    async fn follow(self, mut watch: ResourceWatch) {
        loop {
            let next = tokio::select! {
                () = self.sender.closed() => return,
                next = watch.next_update() => next,
            };
            match next {
                Some(_) => self.refresh().await,
                None => match self.subscribe_again().await {
                    Some(renewed) => {
                        watch = renewed;
                        self.refresh().await;
                    }
                    None => return,
                },
            }
        }
    }

    /// Subscribes again after the session ended, until it works or the watcher leaves.
    async fn subscribe_again(&self) -> Option<ResourceWatch> {
        loop {
            tokio::select! {
                () = self.sender.closed() => return None,
                () = tokio::time::sleep(RESUBSCRIBE_PAUSE) => {}
            }
            if let Some(watch) = self.subscribe().await {
                return Some(watch);
            }
        }
    }

    /// Reads the resource, stores the new contents in every question holding it, and tells
    /// the watcher. A read that fails leaves the stored contents as they were (logged).
    async fn refresh(&self) {
        let context = question_context(&self.principal, Some(&self.conversation_id));
        let contents = match self
            .engine
            .tools
            .client()
            .read_resource(&self.upstream, &self.uri, &context)
            .await
        {
            Ok(contents) => contents,
            Err(error) => {
                tracing::info!(server = %self.upstream.name, %error, "an updated attachment could not be read");
                return;
            }
        };
        let max_chars = self.engine.config.tool_result_max_chars;
        let blocks: Vec<ResultBlock> = contents
            .into_iter()
            .map(|content| resource_block(content, max_chars))
            .collect();
        let refreshed_at = Utc::now();
        let mut stored = Vec::new();
        let _writing = self.writing.lock().await;
        for message_id in &self.message_ids {
            match self.store_contents(message_id, &blocks, refreshed_at).await {
                Ok(()) => stored.push(message_id.clone()),
                Err(error) => {
                    tracing::warn!(%error, "an updated attachment could not be stored")
                }
            }
        }
        let update = AttachmentUpdate {
            server: self.upstream.name.clone(),
            uri: self.uri.clone(),
            refreshed_at,
            message_ids: stored,
        };
        let _ = self.sender.send(update).await;
    }

    /// Replaces this resource's contents in one stored question, with the message's row
    /// locked: another watcher refreshing another attachment of the same question (another tab,
    /// another replica) keeps its change.
    async fn store_contents(
        &self,
        message_id: &MessageId,
        blocks: &[ResultBlock],
        refreshed_at: DateTime<Utc>,
    ) -> ChatResult<()> {
        let server = &self.upstream.name;
        self.engine
            .store
            .edit_message_metadata(&self.principal.workspace_id, message_id, |stored| {
                let mut context = MessageContext::from_metadata(stored)?;
                context.replace_attachment(server, &self.uri, blocks.to_vec(), refreshed_at);
                context.blocks = ResultBlock::within_budget(
                    std::mem::take(&mut context.blocks),
                    STORED_CONTENT_MAX_BYTES,
                );
                let mut metadata = stored.clone();
                metadata[MESSAGE_CONTEXT_KEY] = serde_json::to_value(&context).ok()?;
                Some(metadata)
            })
            .await?;
        Ok(())
    }
}
