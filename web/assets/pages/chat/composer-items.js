// composer-items: what the conversation's MCP servers offer the composer (GET /chat/context-items:
// resources, resource templates, prompts) and argument suggestions (POST
// /chat/context-items/complete), shared by the attachment picker and the slash menu. The list is
// loaded once per conversation and kept until the conversation changes; the API decides which
// servers are usable, this module only shows what it answered.

import { h, uniqueId } from '../../lib/dom.js';
import { api, listItems } from '../../lib/api.js';

export class ComposerItems {
  /** `conversationId()` names the conversation the composer is in (null: a new one). */
  constructor({ conversationId }) {
    this.conversationId = conversationId;
    this.loaded = null;
    this.loadedFor = undefined;
  }

  /** `{servers, failed}`, loaded for the current conversation. */
  async load() {
    const conversationId = this.conversationId() ?? null;
    if (this.loaded && this.loadedFor === conversationId) return this.loaded;
    this.loadedFor = conversationId;
    const query = conversationId ? `?conversation_id=${encodeURIComponent(conversationId)}` : '';
    this.loaded = api.get(`/chat/context-items${query}`).catch((error) => {
      this.loaded = null;
      throw error;
    });
    return this.loaded;
  }

  /** Every prompt as `{server, prompt}`, in server order. */
  async prompts() {
    const items = await this.load();
    return listItems(items, 'servers').flatMap((server) => listItems(server, 'prompts').map((prompt) => ({ server: server.server, prompt })));
  }

  /** The server's suggestions for `argument` (`{name, value}`) of `reference`; [] on failure. */
  async complete({ server, reference, argument, contextArguments = {} }) {
    const body = { server, reference, argument, context_arguments: contextArguments };
    const conversationId = this.conversationId();
    if (conversationId) body.conversation_id = conversationId;
    try {
      return listItems(await api.post('/chat/context-items/complete', body), 'values');
    } catch {
      return [];
    }
  }
}

/**
 * An argument form: one text field per argument, each with a datalist the server's completions
 * fill as the person types. `fields` are `{name, description, required}`; `reference` is what
 * `complete` takes. Returns `{element, values(), firstField}`.
 */
export function argumentFields(items, { server, reference, fields }) {
  const inputs = new Map();
  const values = () => Object.fromEntries([...inputs].map(([name, input]) => [name, input.value]));
  const rows = fields.map((field) => {
    const id = uniqueId('argument');
    const list = h('datalist', { id: `${id}-suggestions` });
    const input = h('input', { id, name: field.name, type: 'text', list: list.id, autocomplete: 'off', required: field.required ? true : null, 'aria-describedby': field.description ? `${id}-hint` : null });
    inputs.set(field.name, input);
    let timer = null;
    const suggest = () => {
      clearTimeout(timer);
      timer = setTimeout(async () => {
        const others = values();
        delete others[field.name];
        const suggestions = await items.complete({ server, reference, argument: { name: field.name, value: input.value }, contextArguments: others });
        list.replaceChildren(...suggestions.map((value) => h('option', { value })));
      }, 150);
    };
    input.addEventListener('input', suggest);
    input.addEventListener('focus', suggest);
    return h('div', { class: 'field' },
      h('label', { for: id, text: field.required ? `${field.name} (required)` : field.name }),
      input, list,
      field.description ? h('p', { id: `${id}-hint`, class: 'small muted', text: field.description }) : null);
  });
  return { element: h('div', { class: 'argument-fields stack' }, rows), values, firstField: inputs.values().next().value ?? null };
}
