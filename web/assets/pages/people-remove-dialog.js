// people-remove-dialog: the People page's Remove dialog — before a person is removed the admin
// chooses what becomes of their conversations: kept (they become the admin's, with their
// approval requests) or deleted with them. Neither is chosen in advance: Remove stays disabled
// until one is, so nobody loses a team's conversations by pressing Enter. Sends
// DELETE /api/people/{id}?conversations=keep|delete; the server's refusal is shown as is.

import { h, uniqueId } from '../lib/dom.js';
import { api, segment } from '../lib/api.js';

/** The toast after a removal, from the server's answer. */
export function removalMessage(removed) {
  if (removed.conversations === 'delete') return `${removed.name} removed with their conversations.`;
  const count = removed.transferred_conversations;
  return `${removed.name} removed. ${count} conversation${count === 1 ? ' is' : 's are'} now yours.`;
}

/** Opens the dialog for `person`; `onRemoved(answer)` runs after the removal. */
export function openRemoveDialog(person, { onRemoved }) {
  const title = `Remove ${person.name}`;
  const formError = h('p', { class: 'alert alert-error', role: 'alert', hidden: true });
  const name = uniqueId('remove-conversations');
  const choice = (value, label, hint) => {
    const id = uniqueId('remove-choice');
    return [h('div', { class: 'field-checkbox' },
      h('input', { type: 'radio', id, name, value, required: true }),
      h('label', { for: id, text: label })),
    h('p', { class: 'small muted', text: hint })];
  };
  const removeButton = h('button', { type: 'submit', class: 'button button-danger', text: 'Remove', disabled: true });
  const cancelButton = h('button', { type: 'button', class: 'button', text: 'Cancel', onclick: () => dialog.close() });
  const form = h('form', { class: 'dialog-form', method: 'dialog' },
    h('div', { class: 'dialog-header' }, h('h2', { text: title }), h('button', { type: 'button', class: 'button button-quiet', 'aria-label': 'Close', text: '✕', onclick: () => dialog.close() })),
    h('div', { class: 'dialog-body' },
      h('p', { text: `${person.name}'s tokens stop working at once and their own credentials are deleted. The audit log keeps its records.` }),
      formError,
      h('fieldset', { class: 'field' },
        h('legend', { text: 'Their conversations' }),
        choice('keep', 'Keep their conversations', 'They become yours, with their pending approvals: what the team learnt in them stays readable.'),
        choice('delete', 'Delete their conversations', 'They are deleted with the person and cannot be recovered.'))),
    h('div', { class: 'dialog-footer' }, cancelButton, removeButton));
  const dialog = h('dialog', { 'aria-label': title, class: 'remove-person-dialog' }, form);
  form.addEventListener('change', () => { removeButton.disabled = !form.querySelector('input[type=radio]:checked'); });
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const chosen = form.querySelector('input[type=radio]:checked')?.value;
    if (!chosen) return;
    formError.hidden = true;
    removeButton.disabled = true;
    try {
      const answer = await api.delete(`/api/people/${segment(person.id)}?conversations=${chosen}`);
      dialog.close();
      await onRemoved?.(answer);
    } catch (error) {
      formError.textContent = error.message;
      formError.hidden = false;
      removeButton.disabled = false;
    }
  });
  dialog.addEventListener('close', () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
  return dialog;
}
