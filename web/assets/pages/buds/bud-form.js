// bud-form: the create/edit dialog for a bud (an assistant profile) — name, system prompt,
// provider (GET /api/llm/providers) and model (GET /api/llm/providers/{name}/models, offered as
// suggestions; any model name may be typed), its MCP servers (every active one, or a chosen
// few), tool choice (a forced tool with the servers' tools as suggestions), and the optional lists of offered and switched-off tools. The API checks
// everything again; its 4xx message is shown in the dialog in its own words.

import { h, replaceChildren, uniqueId } from '../../lib/dom.js';
import { api, listItems, segment } from '../../lib/api.js';

/** Lines of a text area, trimmed, empty ones left out. */
const lines = (text) => String(text ?? '').split('\n').map((line) => line.trim()).filter(Boolean);

/**
 * The request body from the form's raw values; returns `{body, errors}`. `raw.servers` is null
 * for "every active server", else the chosen server ids.
 */
export function buildBudBody(raw) {
  const errors = {};
  const body = { name: raw.name.trim(), system_prompt: raw.systemPrompt };
  if (!body.name) errors.name = 'Give the assistant a name.';
  body.provider = raw.provider || null;
  body.model = raw.model.trim() || null;
  const mcpConfig = {};
  if (raw.servers !== null) mcpConfig.servers = raw.servers;
  const available = lines(raw.availableTools);
  if (available.length) mcpConfig.available_tools = available;
  const disabled = lines(raw.disabledTools);
  if (disabled.length) mcpConfig.disabled_tools = disabled;
  if (raw.toolChoice === 'function') {
    const tool = raw.forcedTool.trim();
    if (!tool) errors.forcedTool = 'Name the tool, as server.tool (e.g. kg.schema_version).';
    else mcpConfig.tool_choice = { function: tool };
  } else if (raw.toolChoice && raw.toolChoice !== 'auto') {
    mcpConfig.tool_choice = raw.toolChoice;
  }
  body.mcp_config = mcpConfig;
  return { body, errors };
}

/** `{mode, tool}` of a stored `tool_choice` (`auto` when absent). */
export function readToolChoice(choice) {
  if (choice && typeof choice === 'object' && typeof choice.function === 'string') return { mode: 'function', tool: choice.function };
  if (choice === 'none' || choice === 'required') return { mode: choice, tool: '' };
  return { mode: 'auto', tool: '' };
}

/** Opens the dialog for a new bud, or `bud` to edit; `onSave(body)` resolves or throws with a message. */
export function openBudDialog({ bud = null, onSave }) {
  const editing = Boolean(bud);
  const config = bud?.mcp_config ?? {};
  const controls = {};
  const errorSlots = {};
  const field = (key, labelText, control, hint) => {
    control.id = control.id || uniqueId('bud');
    controls[key] = control;
    errorSlots[key] = h('p', { class: 'field-error', id: `${control.id}-error` });
    control.setAttribute('aria-describedby', `${control.id}-error${hint ? ` ${control.id}-hint` : ''}`);
    return h('div', { class: 'field', dataset: { field: key } }, h('label', { for: control.id, text: labelText }), control,
      hint ? (hint instanceof Node ? Object.assign(hint, { id: `${control.id}-hint` }) : h('p', { class: 'field-hint', id: `${control.id}-hint`, text: hint })) : null,
      errorSlots[key]);
  };

  const providerSelect = h('select', { name: 'provider' }, h('option', { value: '', text: 'Loading providers…' }));
  const modelList = h('datalist', { id: uniqueId('bud-models') });
  const modelInput = h('input', { name: 'model', type: 'text', autocomplete: 'off', spellcheck: 'false', list: modelList.id, value: bud?.model ?? '' });
  const modelHint = h('p', { class: 'field-hint' });
  const serverMode = h('select', { name: 'serverMode' },
    h('option', { value: 'all', text: 'Every active server of the workspace (also ones added later)' }),
    h('option', { value: 'some', text: 'Only the servers chosen below' }));
  const serverList = h('fieldset', { class: 'field bud-server-list' }, h('legend', { text: 'Servers this assistant uses' }),
    h('p', { class: 'muted small', text: 'Loading servers…' }));
  const toolChoice = h('select', { name: 'toolChoice' },
    h('option', { value: 'auto', text: 'The model decides (auto)' }),
    h('option', { value: 'required', text: 'Always call a tool (required)' }),
    h('option', { value: 'none', text: 'Never call tools (none)' }),
    h('option', { value: 'function', text: 'Always call one tool…' }));
  const toolList = h('datalist', { id: uniqueId('bud-tools') });
  const forcedTool = h('input', { name: 'forcedTool', type: 'text', autocomplete: 'off', spellcheck: 'false', placeholder: 'kg.schema_version', list: toolList.id });
  const forcedField = field('forcedTool', 'Tool to call', forcedTool, 'As server.tool, e.g. kg.schema_version.');
  const formError = h('p', { class: 'alert alert-error', role: 'alert', hidden: true });
  const saveButton = h('button', { type: 'submit', class: 'button button-primary', text: editing ? 'Save changes' : 'Create assistant' });
  const cancelButton = h('button', { type: 'button', class: 'button', text: 'Cancel' });
  const title = editing ? `Edit ${bud.name}` : 'New assistant';
  const form = h('form', { class: 'dialog-form', method: 'dialog', novalidate: true },
    h('div', { class: 'dialog-header' }, h('h2', { text: title }), h('button', { type: 'button', class: 'button button-quiet', 'aria-label': 'Close', text: '✕', onclick: () => dialog.close() })),
    h('div', { class: 'dialog-body' },
      formError,
      field('name', 'Name', h('input', { name: 'name', type: 'text', required: true, autocomplete: 'off', value: bud?.name ?? '' }), 'Shown in the chat’s assistant menu.'),
      field('systemPrompt', 'System prompt', h('textarea', { name: 'systemPrompt', rows: '5', value: bud?.system_prompt ?? '' }), 'What the assistant is told before every conversation: its job, tone and limits.'),
      h('div', { class: 'form-grid' },
        field('provider', 'Provider', providerSelect),
        field('model', 'Model', modelInput, modelHint)),
      modelList,
      toolList,
      field('serverMode', 'MCP servers', serverMode),
      serverList,
      h('div', { class: 'form-grid' },
        field('toolChoice', 'Tool choice', toolChoice),
        forcedField),
      h('details', {}, h('summary', { text: 'Tool lists' }),
        field('availableTools', 'Offer only these tools (server.tool, one per line)', h('textarea', { name: 'availableTools', rows: '3', spellcheck: 'false', value: (config.available_tools ?? []).join('\n') }), 'Empty: every tool of its servers.'),
        field('disabledTools', 'Never offer these tools (server.tool, one per line)', h('textarea', { name: 'disabledTools', rows: '3', spellcheck: 'false', value: (config.disabled_tools ?? []).join('\n') })))),
    h('div', { class: 'dialog-footer' }, cancelButton, saveButton));
  const dialog = h('dialog', { 'aria-label': title, class: 'bud-dialog' }, form);

  const initialChoice = readToolChoice(config.tool_choice);
  toolChoice.value = initialChoice.mode;
  forcedTool.value = initialChoice.tool;
  const showForced = () => {
    forcedField.hidden = toolChoice.value !== 'function';
    if (!forcedField.hidden) suggestTools();
  };
  toolChoice.addEventListener('change', showForced);
  serverMode.value = Array.isArray(config.servers) ? 'some' : 'all';
  const showServers = () => { serverList.hidden = serverMode.value !== 'some'; };
  serverMode.addEventListener('change', showServers);
  showServers();

  const providers = new Map();
  const loadModels = async () => {
    const name = providerSelect.value || 'default';
    const provider = providers.get(name);
    replaceChildren(modelList);
    modelInput.placeholder = provider?.default_model ? `Provider’s default: ${provider.default_model}` : 'Provider’s default';
    modelHint.textContent = provider?.default_model ? 'Leave empty for the provider’s default model.' : provider?.kind === 'offline' ? 'The offline planner needs no model.' : 'Leave empty for the provider’s default model, if it has one.';
    if (!provider) return;
    try {
      const answer = await api.get(`/api/llm/providers/${segment(name)}/models`);
      if ((providerSelect.value || 'default') !== name) return;
      const models = listItems(answer, 'models');
      replaceChildren(modelList, models.map((model) => h('option', { value: model.id, text: model.display_name ?? model.id })));
      const count = models.length ? `${models.length} model${models.length === 1 ? '' : 's'} to choose from (type to filter, or any other name).` : '';
      const remote = answer?.remote_status === 'failed' && answer.remote_error ? ` The provider’s model list could not be read: ${answer.remote_error}` : '';
      modelHint.textContent = [modelHint.textContent, count, remote].filter(Boolean).join(' ');
    } catch (error) {
      modelHint.textContent = `The models could not be listed: ${error.message}`;
    }
  };
  providerSelect.addEventListener('change', loadModels);

  (async () => {
    try {
      for (const provider of listItems(await api.get('/api/llm/providers'), 'providers')) providers.set(provider.name, provider);
    } catch (error) {
      errorSlots.provider.textContent = `The providers could not be listed: ${error.message}`;
    }
    const current = bud?.provider ?? '';
    const options = [...providers.values()].map((provider) => h('option', {
      value: provider.name === 'default' ? '' : provider.name,
      text: `${provider.name} (${provider.kind}${provider.default_model ? `, ${provider.default_model}` : ''})`,
    }));
    if (!providers.has('default')) options.unshift(h('option', { value: '', text: 'default' }));
    if (current && !providers.has(current)) options.push(h('option', { value: current, text: current }));
    replaceChildren(providerSelect, options);
    providerSelect.value = current === 'default' ? '' : current;
    await loadModels();
  })();

  // The tools of the workspace's servers as `server.tool` suggestions for the forced tool,
  // read once from their capability caches when first needed.
  let serversLoaded = null;
  let toolsSuggested = false;
  async function suggestTools() {
    if (toolsSuggested || !serversLoaded) return;
    toolsSuggested = true;
    const servers = (await serversLoaded).filter((server) => server.is_active !== false);
    const lists = await Promise.all(servers.map((server) => api.get(`/api/mcp/servers/${segment(server.id)}/capabilities`)
      .then((capabilities) => listItems(capabilities, 'tools').filter((tool) => tool.is_enabled !== false).map((tool) => `${server.name}.${tool.name}`))
      .catch(() => [])));
    replaceChildren(toolList, lists.flat().map((name) => h('option', { value: name })));
  }

  serversLoaded = (async () => {
    let servers = [];
    try {
      servers = listItems(await api.get('/api/mcp/servers'), 'servers');
    } catch (error) {
      replaceChildren(serverList, h('legend', { text: 'Servers this assistant uses' }),
        h('p', { class: 'field-error', text: `The servers could not be listed: ${error.message}` }));
    }
    const chosen = new Set(config.servers ?? []);
    const boxes = servers.map((server) => {
      const box = h('input', { type: 'checkbox', id: uniqueId('bud-server'), name: 'servers', value: server.id, checked: chosen.has(server.id) || chosen.has(server.name) });
      chosen.delete(server.id);
      chosen.delete(server.name);
      return h('div', { class: 'field-checkbox' }, box, h('label', { for: box.id, text: server.is_active === false ? `${server.name} (switched off)` : server.name }));
    });
    // References the list does not show (a server removed since) stay chosen, visibly.
    const unknown = [...chosen].map((reference) => {
      const box = h('input', { type: 'checkbox', id: uniqueId('bud-server'), name: 'servers', value: reference, checked: true });
      return h('div', { class: 'field-checkbox' }, box, h('label', { for: box.id, text: `${reference} (not found)` }));
    });
    if (servers.length || unknown.length) replaceChildren(serverList, h('legend', { text: 'Servers this assistant uses' }), boxes, unknown);
    return servers;
  })();
  showForced();

  cancelButton.addEventListener('click', () => dialog.close());
  dialog.addEventListener('close', () => dialog.remove());
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const raw = {
      name: controls.name.value, systemPrompt: controls.systemPrompt.value, provider: providerSelect.value, model: modelInput.value,
      servers: serverMode.value === 'some' ? [...serverList.querySelectorAll('input[name=servers]:checked')].map((box) => box.value) : null,
      toolChoice: toolChoice.value, forcedTool: forcedTool.value,
      availableTools: controls.availableTools.value, disabledTools: controls.disabledTools.value,
    };
    const { body, errors } = buildBudBody(raw);
    for (const [key, slot] of Object.entries(errorSlots)) {
      if (key === 'provider' && !errors[key] && slot.textContent) continue;
      slot.textContent = errors[key] ?? '';
      controls[key]?.setAttribute('aria-invalid', errors[key] ? 'true' : 'false');
    }
    const firstError = Object.keys(errors)[0];
    if (firstError) {
      controls[firstError]?.focus();
      return;
    }
    formError.hidden = true;
    saveButton.disabled = true;
    try {
      await onSave(body);
      dialog.close();
    } catch (error) {
      formError.textContent = error.message;
      formError.hidden = false;
      formError.scrollIntoView({ block: 'nearest' });
    } finally {
      saveButton.disabled = false;
    }
  });
  document.body.append(dialog);
  dialog.showModal();
  controls.name.focus();
  return dialog;
}
