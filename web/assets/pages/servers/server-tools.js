// server-tools: a server's cached tools (GET /api/mcp/servers/{id}/capabilities) as a table with
// a per-tool enable switch (PATCH …/tools/{name}) and approval policy (PUT …/tools/{name}/policy),
// plus the resource and prompt counts. Each change is saved at once and confirmed in words.

import { h, formatDateTime, replaceChildren, showToast } from '../../lib/dom.js';
import { api, listItems, segment } from '../../lib/api.js';
import { renderJsonViewer } from '../../lib/json-view.js';
import { renderMarkdown } from '../../lib/markdown.js';
import { summariseError, summariseResult } from '../../lib/tool-summary.js';

const POLICIES = [
  { value: '', label: 'Default' },
  { value: 'ASK_USER', label: 'Ask every time' },
  { value: 'ALWAYS_ALLOW', label: 'Always allow' },
  { value: 'ALWAYS_DENY', label: 'Never allow' },
];

/** Loads and renders the tools of `server` into `container`. */
export async function renderServerTools(container, server, { canWrite }) {
  replaceChildren(container, h('p', { class: 'muted small', text: 'Loading tools…' }));
  let capabilities;
  try {
    capabilities = await api.get(`/api/mcp/servers/${segment(server.id)}/capabilities`);
  } catch (error) {
    replaceChildren(container, h('p', { class: 'alert alert-error', text: `The tool list could not be loaded: ${error.message}` }));
    return;
  }
  const tools = listItems(capabilities, 'tools');
  const resources = listItems(capabilities, 'resources');
  const prompts = listItems(capabilities, 'prompts');
  const policies = await loadPolicies(server);
  const syncedAt = capabilities?.last_synced_at;
  const syncState = capabilities?.sync_status;
  const header = h('p', { class: 'small muted' },
    `${tools.length} tool${tools.length === 1 ? '' : 's'}, ${resources.length} resource${resources.length === 1 ? '' : 's'}, ${prompts.length} prompt${prompts.length === 1 ? '' : 's'}`,
    syncedAt ? ` · synced ${formatDateTime(syncedAt)}` : ' · not synced yet',
    syncState && !/^(ok|synced)$/i.test(syncState) ? ` · ${describeSyncState(syncState)}` : '');
  if (tools.length === 0) {
    replaceChildren(container, header, h('p', { class: 'muted', text: describeEmpty(syncState) }));
    return;
  }
  const rows = tools.map((tool) => renderToolRow(server, tool, policies.get(tool.name), canWrite, policies.defaultPolicy));
  replaceChildren(container, header, h('div', { class: 'table-wrap' },
    h('table', { class: 'data-table tool-table' },
      h('caption', { class: 'visually-hidden', text: `Tools of ${server.name}` }),
      h('thead', {}, h('tr', {}, h('th', { scope: 'col', text: 'Tool' }), h('th', { scope: 'col', text: 'Description' }), h('th', { scope: 'col', text: 'Enabled' }), h('th', { scope: 'col', text: 'Approval' }), h('th', { scope: 'col', text: 'Try' }))),
      h('tbody', {}, rows))));
}

/** The server's explicit policies by tool name (GET /api/mcp/policies?server_id=…). */
async function loadPolicies(server) {
  const policies = new Map();
  try {
    const answer = await api.get(`/api/mcp/policies?server_id=${encodeURIComponent(server.id)}`);
    for (const view of listItems(answer, 'policies')) {
      if (view.source !== 'default') policies.set(view.tool_name, view);
    }
    policies.defaultPolicy = answer?.default_policy ?? null;
  } catch {
    // the approvals API is unavailable: every select shows the workspace default
  }
  return policies;
}

function renderToolRow(server, tool, policyView, canWrite, defaultPolicy) {
  const policy = policyView?.policy ?? null;
  const enabled = tool.is_enabled;
  const toggle = h('input', {
    type: 'checkbox', role: 'switch', class: 'switch', checked: enabled, disabled: !canWrite,
    'aria-label': `Enable ${tool.name}`,
  });
  toggle.addEventListener('change', async () => {
    const wanted = toggle.checked;
    toggle.disabled = true;
    try {
      await api.patch(`/api/mcp/servers/${segment(server.id)}/tools/${segment(tool.name)}`, { is_enabled: wanted });
      showToast(`${tool.name} ${wanted ? 'enabled' : 'disabled'}.`);
    } catch (error) {
      toggle.checked = !wanted;
      showToast(`${tool.name} could not be ${wanted ? 'enabled' : 'disabled'}: ${error.message}`, 'error');
    } finally {
      toggle.disabled = !canWrite;
    }
  });
  const policySelect = h('select', { 'aria-label': `Approval policy for ${tool.name}`, disabled: !canWrite },
    POLICIES.map((option) => h('option', { value: option.value,
      text: option.value === '' && defaultPolicy ? `Default: ${POLICIES.find((candidate) => candidate.value === defaultPolicy)?.label.toLowerCase() ?? defaultPolicy}` : option.label })));
  policySelect.value = policy ?? '';
  let savedPolicy = policySelect.value;
  policySelect.addEventListener('change', async () => {
    const wanted = policySelect.value;
    policySelect.disabled = true;
    try {
      const path = `/api/mcp/servers/${segment(server.id)}/tools/${segment(tool.name)}/policy`;
      if (wanted) await api.put(path, { policy: wanted });
      else await api.delete(path);
      savedPolicy = wanted;
      showToast(`Approval for ${tool.name}: ${POLICIES.find((option) => option.value === wanted).label.toLowerCase()}.`);
    } catch (error) {
      policySelect.value = savedPolicy;
      showToast(`The approval policy of ${tool.name} was not changed: ${error.message}`, 'error');
    } finally {
      policySelect.disabled = !canWrite;
    }
  });
  const description = tool.description ?? '';
  const tryButton = h('button', { type: 'button', class: 'button button-small', text: 'Try…', disabled: !canWrite, 'aria-label': `Try ${tool.name}` });
  const row = h('tr', { dataset: { tool: tool.name } },
    h('td', { text: tool.name }),
    h('td', { class: 'small', text: description.length > 240 ? `${description.slice(0, 239)}…` : description, title: description }),
    h('td', {}, toggle),
    h('td', {}, policySelect, policyView?.pin_matches === false
      ? h('p', { class: 'small server-error', text: 'The tool changed since this policy was set: it asks again until you confirm.' }) : null),
    h('td', {}, tryButton));
  tryButton.addEventListener('click', () => {
    const existing = row.nextElementSibling?.classList.contains('try-row') ? row.nextElementSibling : null;
    if (existing) {
      existing.remove();
      return;
    }
    row.after(h('tr', { class: 'try-row' }, h('td', { colspan: '5' }, renderTryPanel(server, tool))));
    row.nextElementSibling.querySelector('textarea')?.focus();
  });
  return row;
}

/** Example arguments from an input schema: defaults, else empty values of the right type. */
export function exampleArguments(inputSchema) {
  const properties = inputSchema?.properties ?? {};
  const required = new Set(inputSchema?.required ?? []);
  const example = {};
  for (const [name, property] of Object.entries(properties)) {
    if (property?.default !== undefined) example[name] = property.default;
    else if (!required.has(name)) continue;
    else if (Array.isArray(property?.enum)) example[name] = property.enum[0];
    else example[name] = { number: 0, integer: 0, boolean: false, array: [], object: {} }[property?.type] ?? '';
  }
  return example;
}

function renderTryPanel(server, tool) {
  const id = `try-${server.id}-${tool.name}`.replace(/[^A-Za-z0-9_-]/g, '-');
  const input = h('textarea', { id, rows: '4', spellcheck: 'false', class: 'mono' });
  input.value = JSON.stringify(exampleArguments(tool.input_schema), null, 2);
  const output = h('div', { class: 'stack', 'aria-live': 'polite' });
  const run = h('button', { type: 'submit', class: 'button button-primary button-small', text: `Call ${tool.name}` });
  const form = h('form', { class: 'stack' },
    h('div', { class: 'field' }, h('label', { for: id, text: `Arguments for ${tool.name} (JSON)` }), input,
      h('p', { class: 'field-hint', text: 'Runs the tool now, on your behalf, with these arguments. The call is audited.' })),
    h('div', { class: 'button-row' }, run), output);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    let args;
    try {
      args = input.value.trim() ? JSON.parse(input.value) : {};
    } catch (error) {
      replaceChildren(output, h('p', { class: 'alert alert-error', role: 'alert', text: `The arguments are not valid JSON: ${error.message}` }));
      return;
    }
    run.disabled = true;
    replaceChildren(output, h('p', { class: 'muted small', text: 'Calling…' }));
    try {
      const result = await api.post(`/api/mcp/servers/${segment(server.id)}/tools/${segment(tool.name)}/call`, { arguments: args });
      const failed = result?.isError === true;
      const texts = (result?.content ?? []).filter((part) => part?.type === 'text').map((part) => part.text).join('\n\n');
      const rendered = h('div', { class: 'markdown try-result-text' });
      rendered.innerHTML = renderMarkdown(texts);
      replaceChildren(output,
        h('span', { class: `badge ${failed ? 'badge-danger' : 'badge-success'}`, text: failed ? `⚠ ${summariseError(texts || result)}` : `✓ ${summariseResult(result)}` }),
        texts ? rendered : null,
        renderJsonViewer(result, { label: 'Result', expandDepth: 2 }));
    } catch (error) {
      replaceChildren(output, h('p', { class: 'alert alert-error', role: 'alert', text: `The call failed: ${error.message}` }));
    } finally {
      run.disabled = false;
    }
  });
  return form;
}

function describeSyncState(state) {
  return { stale: 'list may be out of date', needs_auth: 'the server needs credentials', empty: 'the server lists no tools', error: 'the last sync failed' }[String(state).toLowerCase()] ?? String(state);
}

function describeEmpty(state) {
  const lower = String(state ?? '').toLowerCase();
  if (lower === 'needs_auth') return 'The server refused to list its tools without credentials. Add an API key or headers, then sync.';
  if (lower === 'empty') return 'The server answered but lists no tools.';
  return 'No tools known yet. Use "Sync tools" to ask the server.';
}
