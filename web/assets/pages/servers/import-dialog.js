// import-dialog: the servers page's Import dialog — a person pastes (or opens) the MCP
// configuration file of Claude Desktop, Claude Code, Cursor, VS Code or Windsurf, previews what
// the import would do (POST /api/mcp/servers/import with `dry_run`: each entry created, changed
// or skipped and why, its secrets and user fields), then confirms the same content for real.
// Editing the text after a preview asks for a new preview: what is applied is what was shown.

import { h, replaceChildren, uniqueId } from '../../lib/dom.js';
import { api } from '../../lib/api.js';

const FORMATS = [
  { value: '', label: 'Detect from the file' },
  { value: 'claude_desktop', label: 'Claude Desktop (claude_desktop_config.json)' },
  { value: 'claude_code', label: 'Claude Code (.mcp.json)' },
  { value: 'cursor', label: 'Cursor (mcp.json)' },
  { value: 'vscode', label: 'VS Code (mcp.json)' },
  { value: 'windsurf', label: 'Windsurf (mcp_config.json)' },
];

const FORMAT_NAMES = Object.fromEntries(FORMATS.filter((format) => format.value).map((format) => [format.value, format.label.replace(/ \(.*$/, '')]));

const ACTION_WORDS = { create: 'will be added', change: 'will replace the existing server', skip: 'skipped' };
const DONE_WORDS = { create: 'added', change: 'replaced', skip: 'skipped' };
const ACTION_BADGES = { create: 'badge-success', change: 'badge-warning', skip: 'badge-danger' };
const REASON_WORDS = {
  name_conflict: 'a server of this workspace has that name',
  duplicate_in_file: 'an earlier entry of the file has that name',
  url_not_allowed: 'the URL policy refuses this address',
  stdio_requires_admin: 'a local command needs an administrator',
  unsupported_entry: 'Switchboard cannot run this entry',
  invalid: 'the entry breaks a rule of server registration',
};
const OUTCOME_WORDS = { user_field: 'becomes a field each person fills in', kept_as_text: 'kept as written', not_imported: 'not imported' };

/** The request body for `content` and the dialog's choices. */
export function buildImportBody({ content, format, onConflict, dryRun }) {
  const body = { content, dry_run: dryRun, on_conflict: onConflict };
  if (format) body.format = format;
  return body;
}

/** Opens the dialog; `onImported(report)` runs after a real import. */
export function openImportDialog({ onImported }) {
  const contentId = uniqueId('import-content');
  const content = h('textarea', { id: contentId, class: 'import-content', name: 'content', rows: '10', spellcheck: 'false',
    placeholder: '{\n  "mcpServers": {\n    "everything": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"] }\n  }\n}' });
  const fileInput = h('input', { type: 'file', id: uniqueId('import-file'), accept: '.json,.jsonc,application/json' });
  const format = h('select', { id: uniqueId('import-format'), name: 'format' }, FORMATS.map((entry) => h('option', { value: entry.value, text: entry.label })));
  const onConflict = h('select', { id: uniqueId('import-conflict'), name: 'onConflict' },
    h('option', { value: 'skip', text: 'Skip it (keep the existing server)' }),
    h('option', { value: 'replace', text: 'Replace the existing server' }));
  const formError = h('p', { class: 'alert alert-error', role: 'alert', hidden: true });
  const report = h('div', { class: 'import-preview', 'aria-live': 'polite' });
  const previewButton = h('button', { type: 'submit', class: 'button', text: 'Preview' });
  const importButton = h('button', { type: 'button', class: 'button button-primary', text: 'Import', disabled: true });
  const closeButton = h('button', { type: 'button', class: 'button', text: 'Cancel' });
  const title = 'Import servers from a configuration file';
  const form = h('form', { class: 'dialog-form', method: 'dialog', novalidate: true },
    h('div', { class: 'dialog-header' }, h('h2', { text: title }), h('button', { type: 'button', class: 'button button-quiet', 'aria-label': 'Close', text: '✕', onclick: () => dialog.close() })),
    h('div', { class: 'dialog-body' },
      h('p', { class: 'small muted', text: 'Paste the MCP configuration of Claude Desktop, Claude Code, Cursor, VS Code or Windsurf. Preview shows what would happen; nothing is stored until you import. Environment values and headers are stored encrypted; references like ${env:TOKEN} become fields each person fills in.' }),
      h('p', { class: 'alert alert-warning', text: 'Every server you import receives the parts of conversations the assistant sends to its tools. Import only servers you trust with that.' }),
      formError,
      h('div', { class: 'field' }, h('label', { for: contentId, text: 'Configuration file' }), content),
      h('div', { class: 'field' }, h('label', { for: fileInput.id, text: 'Or open a file' }), fileInput),
      h('div', { class: 'form-grid' },
        h('div', { class: 'field' }, h('label', { for: format.id, text: 'Format' }), format),
        h('div', { class: 'field' }, h('label', { for: onConflict.id, text: 'When a server has the same name' }), onConflict)),
      report),
    h('div', { class: 'dialog-footer' }, closeButton, previewButton, importButton));
  const dialog = h('dialog', { 'aria-label': title, class: 'import-dialog' }, form);

  // The body previewed last; Import sends exactly it (without `dry_run`).
  let previewed = null;
  const invalidate = () => {
    if (!previewed) return;
    previewed = null;
    importButton.disabled = true;
    importButton.textContent = 'Import';
    replaceChildren(report, h('p', { class: 'small muted', text: 'Changed since the preview: preview again before importing.' }));
  };
  for (const control of [content, format, onConflict]) control.addEventListener('input', invalidate);
  fileInput.addEventListener('change', async () => {
    const file = fileInput.files?.[0];
    if (!file) return;
    content.value = await file.text();
    invalidate();
  });

  const send = async (dryRun) => {
    formError.hidden = true;
    const body = dryRun
      ? buildImportBody({ content: content.value, format: format.value, onConflict: onConflict.value, dryRun: true })
      : { ...previewed, dry_run: false };
    if (!body.content.trim()) {
      formError.textContent = 'Paste a configuration file first.';
      formError.hidden = false;
      content.focus();
      return null;
    }
    previewButton.disabled = true;
    importButton.disabled = true;
    try {
      return { body, answer: await api.post('/api/mcp/servers/import', body) };
    } catch (error) {
      formError.textContent = error.message;
      formError.hidden = false;
      importButton.disabled = !previewed;
      return null;
    } finally {
      previewButton.disabled = false;
    }
  };

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const outcome = await send(true);
    if (!outcome) return;
    previewed = outcome.body;
    const applicable = outcome.answer.created + outcome.answer.changed;
    replaceChildren(report, renderReport(outcome.answer));
    importButton.disabled = applicable === 0;
    importButton.textContent = applicable ? `Import ${applicable} server${applicable === 1 ? '' : 's'}` : 'Nothing to import';
  });
  importButton.addEventListener('click', async () => {
    if (!previewed) return;
    const outcome = await send(false);
    if (!outcome) return;
    previewed = null;
    replaceChildren(report, renderReport(outcome.answer));
    importButton.textContent = 'Imported';
    closeButton.textContent = 'Done';
    await onImported?.(outcome.answer);
  });
  closeButton.addEventListener('click', () => dialog.close());
  dialog.addEventListener('close', () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
  content.focus();
  return dialog;
}

/** The import's report: a summary line and one row per entry of the file. */
export function renderReport(answer) {
  const words = answer.dry_run ? ACTION_WORDS : DONE_WORDS;
  const formatName = FORMAT_NAMES[answer.format] ?? answer.format;
  const summary = answer.dry_run
    ? `${formatName} file${answer.format_detected ? ' (detected)' : ''}: ${answer.created} to add, ${answer.changed} to replace, ${answer.skipped} skipped. Nothing is stored yet.`
    : `Imported: ${answer.created} added, ${answer.changed} replaced, ${answer.skipped} skipped.`;
  const rows = (answer.entries ?? []).map((entry) => h('tr', { dataset: { entry: entry.name, action: entry.action } },
    h('td', {}, h('span', { class: 'mono', text: entry.name }),
      entry.name_in_file ? h('div', { class: 'small muted', text: `“${entry.name_in_file}” in the file` }) : null),
    h('td', {}, h('span', { class: `badge ${ACTION_BADGES[entry.action] ?? ''}`, text: words[entry.action] ?? entry.action }),
      entry.transport ? h('div', { class: 'small muted', text: entry.transport }) : null),
    h('td', {}, describeEntry(entry))));
  return h('div', { class: 'stack' },
    h('p', { class: answer.dry_run ? 'alert alert-info' : 'alert alert-success', role: 'status', text: summary }),
    rows.length ? h('div', { class: 'table-wrap' }, h('table', { class: 'data-table import-report' },
      h('caption', { class: 'visually-hidden', text: 'What the import does with each entry' }),
      h('thead', {}, h('tr', {}, h('th', { scope: 'col', text: 'Server' }), h('th', { scope: 'col', text: 'Outcome' }), h('th', { scope: 'col', text: 'Details' }))),
      h('tbody', {}, rows))) : h('p', { class: 'muted', text: 'The file lists no servers.' }));
}

function describeEntry(entry) {
  const reason = entry.reason ? REASON_WORDS[entry.reason] ?? entry.reason : null;
  const items = [
    reason ? h('li', { class: 'import-reason', text: entry.message && entry.message !== reason ? `${capitalise(reason)}: ${entry.message}` : capitalise(reason) }) : null,
    !reason && entry.message ? h('li', { text: entry.message }) : null,
    entry.secrets?.length ? h('li', { text: `Stored encrypted: ${entry.secrets.join(', ')}` }) : null,
    entry.user_fields?.length ? h('li', { text: `Each person fills in: ${entry.user_fields.join(', ')}` }) : null,
    (entry.references ?? []).map((reference) => h('li', { text: `${reference.reference} in ${reference.location}: ${OUTCOME_WORDS[reference.outcome] ?? reference.outcome}${reference.note ? ` (${reference.note})` : ''}` })),
    entry.ignored_keys?.length ? h('li', { class: 'muted', text: `Not used: ${entry.ignored_keys.join(', ')}` }) : null,
  ].flat().filter(Boolean);
  return items.length ? h('ul', { class: 'small plain-list' }, items) : h('span', { class: 'small muted', text: '—' });
}

const capitalise = (text) => text.charAt(0).toUpperCase() + text.slice(1);
