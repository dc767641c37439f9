// attachment-watch: keeps the resources attached to the open conversation's questions current.
// While a conversation whose transcript shows attachments is open, its attachment-updates stream
// (`GET /chat/conversations/{id}/attachment-updates`) is held: the server subscribes to each
// attached resource whose server offers subscriptions, reads it again when it changes and stores
// the new contents for the next turn; each `attachment_updated` marks the resource's chips here
// as updated (and when). The stream is dropped when the conversation is left, and opened again
// after each answer (a new question may have attached more).

import { h } from '../../lib/dom.js';
import { segment } from '../../lib/api.js';
import { streamServerSentEvents } from '../../lib/sse.js';
import { authHeaders } from '../../lib/session.js';

export class AttachmentWatch {
  /** `root`: the transcript whose attachment chips are kept current. */
  constructor(root) {
    this.root = root;
    this.controller = null;
  }

  /** Follows `conversationId`'s attachments (anew); nothing when none is shown. */
  follow(conversationId) {
    this.stop();
    if (!conversationId || !this.root.querySelector('.attachment-chip')) return;
    const controller = new AbortController();
    this.controller = controller;
    streamServerSentEvents({
      url: `/chat/conversations/${segment(conversationId)}/attachment-updates`,
      method: 'GET',
      headers: authHeaders(),
      signal: controller.signal,
      onEvent: (event) => {
        if (event.type === 'attachment_updated') markRefreshed(this.root, event);
      },
    }).catch(() => {});
  }

  stop() {
    this.controller?.abort();
    this.controller = null;
  }
}

/** One attachment's chip: its server and URI, and when it was last read again, if it was. */
export function attachmentChip(attachment) {
  const chip = h('li', { class: 'attachment-chip', dataset: { uri: attachment.uri, server: attachment.server }, text: `${attachment.server}: ${attachment.uri}` });
  if (attachment.refreshed_at) showRefreshed(chip, attachment.refreshed_at);
  return chip;
}

function markRefreshed(root, { server, uri, refreshed_at: refreshedAt }) {
  for (const chip of root.querySelectorAll('.attachment-chip')) {
    if (chip.dataset.uri === uri && chip.dataset.server === server) showRefreshed(chip, refreshedAt);
  }
}

function showRefreshed(chip, refreshedAt) {
  const when = new Date(refreshedAt);
  chip.dataset.refreshedAt = refreshedAt;
  chip.title = `Updated by its server ${when.toLocaleString()}; the assistant reads the new contents`;
  const note = chip.querySelector('.attachment-updated') ?? chip.appendChild(h('span', { class: 'attachment-updated' }));
  note.textContent = ` · updated ${when.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })}`;
}
