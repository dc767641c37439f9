// server-form: the add/edit dialog for an MCP server — templates for common servers, the fields
// each transport needs (command and arguments for stdio; URL, headers and a write-only API key for
// HTTP, SSE and WebSocket), session scope and timeout, and the warning that a server receives
// conversation context. Errors from the API are shown next to the form in its own words.

import { h, uniqueId } from '../../lib/dom.js';

export const SERVER_TEMPLATES = [
  { id: 'filesystem', label: 'Filesystem', values: { name: 'files', transport: 'stdio', command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/path/to/shared/folder'] },
    hint: 'Reads and writes files under the folders you list as the last arguments.' },
  { id: 'everything', label: 'Everything (demo)', values: { name: 'everything', transport: 'stdio', command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything'] },
    hint: 'The MCP reference test server: tools, resources, prompts, elicitation.' },
  { id: 'fetch', label: 'Fetch', values: { name: 'fetch', transport: 'stdio', command: 'uvx', args: ['mcp-server-fetch'] },
    hint: 'Fetches web pages for the assistant.' },
  { id: 'n8n', label: 'n8n', values: { name: 'n8n', transport: 'sse', url: 'https://n8n.example.com/mcp/your-workflow-id/sse' },
    hint: 'An n8n "MCP Server Trigger" workflow; paste its SSE URL and, if set, its bearer token as API key.' },
];

/** Parses "KEY=value" lines into an object; returns `{value, error}`. */
export function parseKeyValueLines(text, separator, what) {
  const result = {};
  for (const [index, rawLine] of String(text ?? '').split('\n').entries()) {
    const line = rawLine.trim();
    if (!line) continue;
    const at = line.indexOf(separator);
    if (at <= 0) return { value: null, error: `Line ${index + 1} of ${what} needs the form NAME${separator}${separator === ':' ? ' ' : ''}value.` };
    result[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }
  return { value: result, error: null };
}

/** Builds the request body from the form's raw values; returns `{body, errors}`. */
export function buildServerBody(raw, { editing }) {
  const errors = {};
  const body = { name: raw.name.trim(), transport: raw.transport };
  if (!/^[A-Za-z0-9_-]{1,32}$/.test(body.name)) errors.name = 'Use 1 to 32 letters, digits, "-" or "_".';
  if (raw.transport === 'stdio') {
    body.command = raw.command.trim();
    body.args = raw.args.split('\n').map((line) => line.trim()).filter(Boolean);
    if (!body.command) errors.command = 'Enter the program to run, e.g. npx.';
    const env = parseKeyValueLines(raw.env, '=', 'the environment');
    if (env.error) errors.env = env.error;
    else body.env = env.value;
    const workingDir = (raw.workingDir ?? '').trim();
    if (workingDir) body.working_dir = workingDir;
    else if (editing) body.working_dir = null;
  } else {
    body.url = raw.url.trim();
    const expected = raw.transport === 'websocket' ? /^wss?:\/\//i : /^https?:\/\//i;
    if (!expected.test(body.url)) errors.url = raw.transport === 'websocket' ? 'Enter a ws:// or wss:// address.' : 'Enter an http:// or https:// address.';
    const headers = parseKeyValueLines(raw.headers, ':', 'the headers');
    if (headers.error) errors.headers = headers.error;
    else body.headers = headers.value;
    if (raw.apiKey) body.api_key = raw.apiKey;
    else if (editing && raw.clearApiKey) body.api_key = null;
  }
  body.session_scope = raw.sessionScope;
  if (raw.timeoutMs !== '') {
    const timeout = Number(raw.timeoutMs);
    if (!Number.isInteger(timeout) || timeout < 100) errors.timeoutMs = 'Enter a whole number of milliseconds (at least 100), or leave it empty for the default.';
    else body.timeout_ms = timeout;
  }
  body.is_active = raw.isActive;
  return { body, errors };
}

/** Opens the dialog; `onSave(body)` must resolve or throw an Error with a message. */
export function openServerDialog({ server = null, onSave }) {
  const editing = Boolean(server);
  const controls = {};
  const errorSlots = {};
  const field = (key, labelText, control, hint) => {
    const id = control.id || uniqueId('server');
    control.id = id;
    controls[key] = control;
    errorSlots[key] = h('p', { class: 'field-error', id: `${id}-error` });
    control.setAttribute('aria-describedby', `${id}-error${hint ? ` ${id}-hint` : ''}`);
    return h('div', { class: 'field', dataset: { field: key } }, h('label', { for: id, text: labelText }), control,
      hint ? h('p', { class: 'field-hint', id: `${id}-hint`, text: hint }) : null, errorSlots[key]);
  };
  const transportSelect = h('select', { name: 'transport' },
    h('option', { value: 'stdio', text: 'Local command (stdio)' }),
    h('option', { value: 'streamable_http', text: 'Streamable HTTP' }),
    h('option', { value: 'sse', text: 'HTTP + SSE (legacy, e.g. n8n)' }),
    h('option', { value: 'websocket', text: 'WebSocket' }));
  const stdioFields = h('div', {},
    field('command', 'Command', h('input', { name: 'command', type: 'text', autocomplete: 'off', spellcheck: 'false' }), 'The program to start; it is run directly, never through a shell. Needs an admin token.'),
    field('args', 'Arguments (one per line)', h('textarea', { name: 'args', rows: '3', spellcheck: 'false' })),
    field('env', 'Environment variables (NAME=value, one per line)', h('textarea', { name: 'env', rows: '2', spellcheck: 'false' }),
      editing && server.env_names?.length ? `Stored: ${server.env_names.join(', ')} (values are not shown). Entering variables replaces them.` : 'Values are stored encrypted and never shown again.'),
    field('workingDir', 'Working directory (optional)', h('input', { name: 'workingDir', type: 'text', autocomplete: 'off', spellcheck: 'false' })));
  const apiKeyHint = editing ? 'Write-only: leave empty to keep the current key. Stored encrypted; never shown again.' : 'Write-only: stored encrypted and never shown again. Sent as Authorization: Bearer.';
  const clearApiKey = h('input', { type: 'checkbox', id: uniqueId('clear-key'), name: 'clearApiKey' });
  const networkFields = h('div', {},
    field('url', 'Server URL', h('input', { name: 'url', type: 'url', autocomplete: 'off', spellcheck: 'false', placeholder: 'https://…' })),
    field('headers', 'Extra headers (Name: value, one per line)', h('textarea', { name: 'headers', rows: '2', spellcheck: 'false' }),
      editing && server.header_names?.length ? `Stored: ${server.header_names.join(', ')} (values are not shown). Entering headers replaces them.` : 'Values are stored encrypted and never shown again.'),
    field('apiKey', 'API key', h('input', { name: 'apiKey', type: 'password', autocomplete: 'new-password' }), apiKeyHint),
    editing ? h('div', { class: 'field-checkbox field' }, clearApiKey, h('label', { for: clearApiKey.id, text: 'Remove the stored API key' })) : null);
  const form = h('form', { class: 'dialog-form', method: 'dialog', novalidate: true });
  const formError = h('p', { class: 'alert alert-error', role: 'alert', hidden: true });
  const templates = editing ? null : h('div', { class: 'stack' },
    h('p', { class: 'small muted', text: 'Start from a template:' }),
    h('div', { class: 'template-list' }, SERVER_TEMPLATES.map((template) => h('button', {
      type: 'button', class: 'button button-small', text: template.label, title: template.hint,
      onclick: () => fill({ ...template.values }),
    }))));
  const sessionScope = h('select', { name: 'sessionScope' },
    h('option', { value: 'shared', text: 'Shared by the workspace (default)' }),
    h('option', { value: 'per_user', text: 'One per user' }),
    h('option', { value: 'per_conversation', text: 'One per conversation' }));
  const isActive = h('input', { type: 'checkbox', id: uniqueId('active'), name: 'isActive', checked: true });
  const saveButton = h('button', { type: 'submit', class: 'button button-primary', text: editing ? 'Save changes' : 'Add server' });
  const cancelButton = h('button', { type: 'button', class: 'button', text: 'Cancel' });
  const title = editing ? `Edit ${server.name}` : 'Add an MCP server';
  form.append(
    h('div', { class: 'dialog-header' }, h('h2', { text: title }), h('button', { type: 'button', class: 'button button-quiet', 'aria-label': 'Close', text: '✕', onclick: () => dialog.close() })),
    h('div', { class: 'dialog-body' },
      h('p', { class: 'alert alert-warning', text: 'A server you add here receives the parts of conversations the assistant sends to its tools (questions, names, file contents…). Only add servers you trust with that.' }),
      formError,
      templates,
      h('div', { class: 'form-grid' },
        field('name', 'Name', h('input', { name: 'name', type: 'text', required: true, maxlength: '32', autocomplete: 'off', spellcheck: 'false' }), 'Letters, digits, - and _; tools appear as name__tool.'),
        field('transport', 'Transport', transportSelect)),
      stdioFields,
      networkFields,
      h('details', {}, h('summary', { text: 'Advanced' }),
        h('div', { class: 'form-grid' },
          field('sessionScope', 'Session scope', sessionScope, 'Use per user or per conversation for servers that keep state (browsers, editors).'),
          field('timeoutMs', 'Tool call timeout (ms)', h('input', { name: 'timeoutMs', type: 'number', min: '100', step: '100', placeholder: '30000' }))),
        h('div', { class: 'field field-checkbox' }, isActive, h('label', { for: isActive.id, text: 'Active (offer its tools to the assistant)' })))),
    h('div', { class: 'dialog-footer' }, cancelButton, saveButton));
  const dialog = h('dialog', { 'aria-label': title }, form);

  const showTransportFields = () => {
    const stdio = transportSelect.value === 'stdio';
    stdioFields.hidden = !stdio;
    networkFields.hidden = stdio;
    controls.url.placeholder = transportSelect.value === 'websocket' ? 'wss://…' : 'https://…';
  };
  function fill(values) {
    controls.name.value = values.name ?? '';
    transportSelect.value = values.transport ?? 'stdio';
    controls.command.value = values.command ?? '';
    controls.args.value = (values.args ?? []).join('\n');
    controls.env.value = Object.entries(values.env ?? {}).map(([key, value]) => `${key}=${value}`).join('\n');
    controls.url.value = values.url ?? '';
    controls.workingDir.value = values.working_dir ?? '';
    controls.headers.value = '';
    controls.apiKey.value = '';
    showTransportFields();
    controls.name.focus();
  }
  transportSelect.addEventListener('change', showTransportFields);
  cancelButton.addEventListener('click', () => dialog.close());
  dialog.addEventListener('close', () => dialog.remove());
  if (server) {
    fill(server);
    sessionScope.value = server.session_scope ?? 'shared';
    controls.timeoutMs.value = server.timeout_ms ?? '';
    isActive.checked = server.is_active !== false;
  } else {
    fill({ transport: 'streamable_http' });
  }

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const raw = {
      name: controls.name.value, transport: transportSelect.value, command: controls.command.value, args: controls.args.value,
      env: controls.env.value, workingDir: controls.workingDir.value, url: controls.url.value, headers: controls.headers.value, apiKey: controls.apiKey.value,
      clearApiKey: clearApiKey.checked, sessionScope: sessionScope.value, timeoutMs: controls.timeoutMs.value.trim(), isActive: isActive.checked,
    };
    const { body, errors } = buildServerBody(raw, { editing });
    // Stored secrets are write-only: an untouched field keeps them, it does not clear them.
    if (editing && !controls.headers.value.trim()) delete body.headers;
    if (editing && !controls.env.value.trim()) delete body.env;
    for (const [key, slot] of Object.entries(errorSlots)) {
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
    } finally {
      saveButton.disabled = false;
    }
  });
  document.body.append(dialog);
  dialog.showModal();
  controls.name.focus();
  return dialog;
}
