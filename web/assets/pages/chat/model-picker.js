// model-picker: the chat header's model choice. Lists the workspace's providers and their models
// (GET /api/llm/providers, then each one's GET /api/llm/providers/{name}/models), shows the
// model the conversation answers with now (its own override, else its assistant's, else the
// default provider's), and changing it sets the conversation's override (PATCH
// /chat/conversations/{id} {provider, model}); the first choice ("assistant's model") clears it.
// Before a conversation exists the choice is kept and sent when it is created.

import { h, replaceChildren } from '../../lib/dom.js';
import { api, listItems, segment } from '../../lib/api.js';

const DEFAULT_PROVIDER = 'default';

/** `provider:model` as one option value; provider names never hold a colon, models may. */
const optionValue = (provider, model) => `${provider}:${model}`;

/** `{provider, model}` of an option value, or null for "the assistant's model". */
export function parseChoice(value) {
  if (!value) return null;
  const colon = value.indexOf(':');
  return { provider: value.slice(0, colon), model: value.slice(colon + 1) };
}

export class ModelPicker {
  /** `onError(message)` reports a refused change; `onChanged(conversation)` an accepted one. */
  constructor({ onError = () => {}, onChanged = () => {} } = {}) {
    this.onError = onError;
    this.onChanged = onChanged;
    this.providers = [];
    this.conversation = null;
    this.bud = null;
    this.disabled = false;
    this.select = h('select', { id: 'model-select', name: 'model' });
    this.select.addEventListener('change', () => this.#changed());
    this.element = h('span', { class: 'model-picker' },
      h('label', { for: 'model-select', class: 'small', text: 'Model' }),
      this.select);
    this.loaded = this.#load();
  }

  /** The override chosen for a conversation not created yet (null: the assistant's model). */
  get pendingChoice() {
    return this.conversation ? null : parseChoice(this.select.value);
  }

  /** Shows what `conversation` (null: a new one) with assistant `bud` (null: none) uses. */
  show({ conversation = null, bud = null, disabled = false } = {}) {
    const keepPending = !conversation && !this.conversation ? this.select.value : '';
    this.conversation = conversation;
    this.bud = bud;
    this.disabled = disabled;
    this.#render(conversation?.provider || conversation?.model ? this.#overrideValue(conversation) : keepPending);
    this.select.disabled = disabled || this.providers.length === 0;
  }

  /** The model a conversation without an override answers with: its bud's, else the default. */
  #inherited() {
    const providerName = this.bud?.provider || DEFAULT_PROVIDER;
    const provider = this.providers.find((candidate) => candidate.name === providerName);
    return { provider: providerName, model: this.bud?.model || provider?.default_model || '' };
  }

  /** The option value of a conversation's override (a model alone applies to the inherited provider). */
  #overrideValue(conversation) {
    const provider = conversation.provider || this.#inherited().provider;
    const model = conversation.model || this.providers.find((candidate) => candidate.name === provider)?.default_model || '';
    return optionValue(provider, model);
  }

  #render(value) {
    const inherited = this.#inherited();
    const whose = this.bud ? 'Assistant’s model' : 'Default model';
    const options = [h('option', { value: '', text: `${whose} (${describe(inherited)})` })];
    for (const provider of this.providers) {
      options.push(h('optgroup', { label: `${provider.name} (${provider.kind})` },
        provider.modelIds.map((model) => h('option', { value: optionValue(provider.name, model), text: `${provider.name} · ${model || 'its default'}` }))));
    }
    const known = !value || this.providers.some((provider) => provider.modelIds.some((model) => optionValue(provider.name, model) === value));
    if (!known) {
      const choice = parseChoice(value);
      options.push(h('option', { value, text: describe(choice) }));
    }
    replaceChildren(this.select, options);
    this.select.value = value;
    this.select.title = value ? 'This conversation’s own model; the first choice goes back to the assistant’s.' : 'The model answering; pick another for this conversation.';
  }

  async #load() {
    try {
      const providers = listItems(await api.get('/api/llm/providers'), 'providers');
      this.providers = await Promise.all(providers.map(async (provider) => ({ ...provider, modelIds: await modelIds(provider) })));
    } catch (error) {
      this.providers = [];
      this.select.title = `The models could not be listed: ${error.message}`;
    }
    this.show({ conversation: this.conversation, bud: this.bud, disabled: this.disabled });
  }

  async #changed() {
    if (!this.conversation) {
      this.#render(this.select.value);
      return;
    }
    const choice = parseChoice(this.select.value);
    const body = choice ? { provider: choice.provider, model: choice.model || null } : { provider: null, model: null };
    const previous = this.#overrideValueOrEmpty();
    try {
      this.conversation = await api.patch(`/chat/conversations/${segment(this.conversation.id)}`, body);
      this.onChanged(this.conversation);
      this.#render(this.#overrideValueOrEmpty());
    } catch (error) {
      this.#render(previous);
      this.onError(`The model could not be changed: ${error.message}`);
    }
  }

  #overrideValueOrEmpty() {
    return this.conversation?.provider || this.conversation?.model ? this.#overrideValue(this.conversation) : '';
  }
}

/** `provider · model` (the model left out when it is the provider's own, e.g. the offline planner). */
function describe({ provider, model }) {
  return model ? `${provider} · ${model}` : provider;
}

/**
 * A provider's model ids: its default first, then what GET …/models lists (configured ones
 * and the provider's own list); the configured ones alone when the listing fails.
 */
async function modelIds(provider) {
  let listed = (provider.models ?? []).map((model) => model.id);
  try {
    listed = listItems(await api.get(`/api/llm/providers/${segment(provider.name)}/models`), 'models').map((model) => model.id);
  } catch {
    // Keep the configured ones.
  }
  return [...new Set([provider.default_model ?? '', ...listed])].filter((model, index) => model || index === 0);
}
