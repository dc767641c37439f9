//! Live answers across replicas (PostgreSQL). The replica running an answer relays its events
//! to the store in order ([`publisher`]); a replica whose client follows the conversation
//! (`GET /chat/{id}/stream`) while another one answers reads them from the first event and
//! then live ([`follower`]), woken by one `LISTEN` per replica ([`notices`]) and by a timer
//! (a notice may be lost). Followers see exactly what the answering replica's own clients see:
//! the same events, in the same order, ending with `done`.
//!
//! On SQLite (one process) nothing is relayed: every client of an answer is in this process
//! and follows its `TurnHandle`.
//!
//! Must not: keep an answer going. A follower elsewhere is not a watcher: when every client
//! of the answering replica leaves, the answer is cancelled as before, and followers see its
//! `error` and `done`.

pub(crate) mod follower;
pub(crate) mod notices;
pub(crate) mod publisher;

use crate::events::ChatEvent;

/// An event as stored for other replicas (the serde form of [`ChatEvent`]).
fn encode(event: &ChatEvent) -> Result<String, serde_json::Error> {
    serde_json::to_string(event)
}

fn decode(text: &str) -> Result<ChatEvent, serde_json::Error> {
    serde_json::from_str(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::{DoneEvent, ErrorEvent, TurnOutcome};
    use switchboard_core::ConversationId;

    #[test]
    fn events_read_back_as_written() {
        for event in [
            ChatEvent::Token("hé \"quoted\"\n".into()),
            ChatEvent::Error(ErrorEvent {
                code: "cancelled".into(),
                message: "gone".into(),
            }),
            ChatEvent::Done(DoneEvent {
                conversation_id: ConversationId::from("c1"),
                message_id: None,
                outcome: TurnOutcome::Completed,
                answered_by: None,
                usage: None,
            }),
        ] {
            assert_eq!(decode(&encode(&event).unwrap()).unwrap(), event);
        }
    }
}
