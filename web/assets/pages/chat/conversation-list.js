// conversation-list: the left panel of the chat — the user's conversations (newest first) with
// open, rename (inline, Enter saves, Escape cancels) and delete (inline confirmation).

import { h, formatRelativeTime, replaceChildren, showToast } from '../../lib/dom.js';
import { api, listItems, segment } from '../../lib/api.js';

/** Conversation title for display. */
export function conversationTitle(conversation) {
  return conversation?.title?.trim() || 'New conversation';
}

/** The list panel; `reload()` refetches, `setCurrent(id)` marks the open one. */
export class ConversationList {
  constructor({ onOpen, onNew, onDeleted }) {
    this.onOpen = onOpen;
    this.onDeleted = onDeleted;
    this.currentId = null;
    this.conversations = [];
    this.list = h('ul', { class: 'conversation-list', 'aria-label': 'Conversations' });
    this.status = h('p', { class: 'small muted', role: 'status' });
    this.element = h('aside', { class: 'conversation-panel', 'aria-label': 'Conversations' },
      h('button', { type: 'button', class: 'button button-primary', text: '+ New conversation', onclick: () => onNew() }),
      this.status,
      this.list);
  }

  async reload() {
    try {
      const answer = await api.get('/chat/conversations?limit=100');
      this.conversations = listItems(answer, 'conversations');
      this.status.textContent = this.conversations.length ? '' : 'No conversations yet.';
    } catch (error) {
      this.status.textContent = `Conversations could not be loaded: ${error.message}`;
    }
    this.#render();
  }

  setCurrent(conversationId) {
    this.currentId = conversationId;
    for (const item of this.list.children) {
      item.setAttribute('aria-current', item.dataset.conversationId === conversationId ? 'true' : 'false');
    }
  }

  find(conversationId) {
    return this.conversations.find((conversation) => conversation.id === conversationId) ?? null;
  }

  #render() {
    replaceChildren(this.list, this.conversations.map((conversation) => this.#renderItem(conversation)));
    this.setCurrent(this.currentId);
  }

  #renderItem(conversation) {
    const title = conversationTitle(conversation);
    const openButton = h('button', { type: 'button', class: 'conversation-open', onclick: () => this.onOpen(conversation.id) },
      h('span', { class: 'title', text: title }),
      h('span', { class: 'when', text: formatRelativeTime(conversation.updated_at ?? conversation.created_at) }));
    const actions = h('div', { class: 'conversation-actions' },
      h('button', { type: 'button', class: 'button button-small button-quiet', text: '✎', title: 'Rename', 'aria-label': `Rename “${title}”`, onclick: () => this.#startRename(item, conversation) }),
      h('button', { type: 'button', class: 'button button-small button-quiet', text: '✕', title: 'Delete', 'aria-label': `Delete “${title}”`, onclick: () => this.#confirmDelete(item, conversation) }));
    const item = h('li', { class: 'conversation-item', dataset: { conversationId: conversation.id } }, openButton, actions);
    return item;
  }

  #startRename(item, conversation) {
    const input = h('input', { type: 'text', value: conversation.title ?? '', 'aria-label': 'New conversation title', maxlength: '200' });
    const finish = async (save) => {
      if (!input.isConnected) return;
      const title = input.value.trim();
      if (save && title && title !== conversation.title) {
        try {
          await api.patch(`/chat/conversations/${segment(conversation.id)}`, { title });
          conversation.title = title;
        } catch (error) {
          showToast(`The conversation could not be renamed: ${error.message}`, 'error');
        }
      }
      this.#render();
      this.list.querySelector(`[data-conversation-id="${CSS.escape(conversation.id)}"] .conversation-open`)?.focus();
    };
    input.addEventListener('keydown', (event) => {
      if (event.key === 'Enter') { event.preventDefault(); finish(true); }
      if (event.key === 'Escape') { event.preventDefault(); finish(false); }
    });
    input.addEventListener('blur', () => finish(true));
    replaceChildren(item, h('div', { class: 'conversation-open' }, input));
    input.focus();
    input.select();
  }

  #confirmDelete(item, conversation) {
    const cancel = h('button', { type: 'button', class: 'button button-small', text: 'Keep', onclick: () => this.#render() });
    const confirmButton = h('button', {
      type: 'button', class: 'button button-small button-danger', text: 'Delete',
      onclick: async () => {
        confirmButton.disabled = true;
        try {
          await api.delete(`/chat/conversations/${segment(conversation.id)}`);
          this.conversations = this.conversations.filter((candidate) => candidate.id !== conversation.id);
          this.#render();
          this.onDeleted(conversation.id);
        } catch (error) {
          showToast(`The conversation could not be deleted: ${error.message}`, 'error');
          this.#render();
        }
      },
    });
    replaceChildren(item, h('div', { class: 'conversation-open row', role: 'group', 'aria-label': 'Confirm delete' },
      h('span', { class: 'small', text: `Delete “${conversationTitle(conversation)}”?` }), confirmButton, cancel));
    confirmButton.focus();
  }
}
