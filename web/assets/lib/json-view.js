// json-view: a collapsible, syntax-highlighted JSON viewer with copy to clipboard, for tool
// arguments and results. Built from <details>/<summary> so it is keyboard and screen-reader usable
// without extra code; every value is inserted as text (no HTML). Children of a collapsed node are
// built only when it is first opened, so large results stay cheap.

import { h, copyTextToClipboard, showToast } from './dom.js';

const LONG_STRING = 600;
/** Builds a node's children on demand (toggle events fire asynchronously, Expand all cannot wait). */
const childBuilders = new WeakMap();

/**
 * Builds a viewer for `value`. Options: `label` (heading text), `expandDepth` (levels open at
 * first, default 1), `copyText` (what Copy puts on the clipboard; default pretty JSON of value).
 */
export function renderJsonViewer(value, { label = 'JSON', expandDepth = 1, copyText } = {}) {
  const tree = h('div', { class: 'json-tree', role: 'tree', 'aria-label': label });
  tree.append(renderJsonNode(value, { depth: 0, expandDepth, key: undefined, isLast: true }));
  const copyButton = h('button', {
    type: 'button',
    class: 'button button-small button-quiet',
    text: 'Copy',
    'aria-label': `Copy ${label} to clipboard`,
    onclick: async () => {
      const copied = await copyTextToClipboard(copyText ?? JSON.stringify(value, null, 2));
      copyButton.textContent = copied ? 'Copied' : 'Copy failed';
      setTimeout(() => { copyButton.textContent = 'Copy'; }, 1500);
      if (!copied) showToast('The browser did not allow copying to the clipboard.', 'error');
    },
  });
  const setAllOpen = (open) => {
    for (let pass = 0; pass < 32; pass += 1) {
      const closed = [...tree.querySelectorAll('details')].filter((details) => details.open !== open);
      if (closed.length === 0) break;
      for (const details of closed) {
        if (open) childBuilders.get(details)?.();
        details.open = open;
      }
    }
  };
  const toolbar = h('div', { class: 'json-toolbar' },
    h('span', { class: 'json-label', text: label }),
    h('span', { class: 'json-actions' },
      h('button', { type: 'button', class: 'button button-small button-quiet', text: 'Expand all', onclick: () => setAllOpen(true) }),
      h('button', { type: 'button', class: 'button button-small button-quiet', text: 'Collapse', onclick: () => setAllOpen(false) }),
      copyButton));
  return h('div', { class: 'json-viewer' }, toolbar, tree);
}

/** Parses text as JSON when it is JSON; returns the text itself otherwise. */
export function parseJsonLoosely(text) {
  if (typeof text !== 'string') return text;
  const trimmed = text.trim();
  if (!/^[[{"]|^-?\d|^(true|false|null)$/.test(trimmed)) return text;
  try {
    return JSON.parse(trimmed);
  } catch {
    return text;
  }
}

function renderKey(key) {
  if (key === undefined) return null;
  const keyText = typeof key === 'number' ? String(key) : JSON.stringify(key);
  return [h('span', { class: typeof key === 'number' ? 'json-index' : 'json-key', text: keyText }), h('span', { class: 'json-punctuation', text: ': ' })];
}

function renderPrimitive(value) {
  if (value === null) return h('span', { class: 'json-null', text: 'null' });
  if (typeof value === 'boolean') return h('span', { class: 'json-boolean', text: String(value) });
  if (typeof value === 'number') return h('span', { class: 'json-number', text: String(value) });
  if (typeof value === 'string') {
    const quoted = JSON.stringify(value);
    if (quoted.length <= LONG_STRING) return h('span', { class: 'json-string', text: quoted });
    const shown = h('span', { class: 'json-string', text: `${quoted.slice(0, LONG_STRING)}…` });
    const more = h('button', {
      type: 'button',
      class: 'link-button',
      text: `show all ${value.length} characters`,
      onclick: () => { shown.textContent = quoted; more.remove(); },
    });
    return h('span', {}, shown, ' ', more);
  }
  return h('span', { class: 'json-other', text: String(value) });
}

function renderJsonNode(value, { depth, expandDepth, key, isLast }) {
  const comma = isLast ? null : h('span', { class: 'json-punctuation', text: ',' });
  if (value === null || typeof value !== 'object') {
    return h('div', { class: 'json-row', role: 'treeitem' }, renderKey(key), renderPrimitive(value), comma);
  }
  const isArray = Array.isArray(value);
  const entries = isArray ? value.map((item, index) => [index, item]) : Object.entries(value);
  const [open, close] = isArray ? ['[', ']'] : ['{', '}'];
  if (entries.length === 0) {
    return h('div', { class: 'json-row', role: 'treeitem' }, renderKey(key), h('span', { class: 'json-punctuation', text: open + close }), comma);
  }
  const countText = isArray ? `${entries.length} item${entries.length === 1 ? '' : 's'}` : `${entries.length} key${entries.length === 1 ? '' : 's'}`;
  const children = h('div', { class: 'json-children', role: 'group' });
  let built = false;
  const build = () => {
    if (built) return;
    built = true;
    entries.forEach(([childKey, childValue], position) => {
      children.append(renderJsonNode(childValue, { depth: depth + 1, expandDepth, key: childKey, isLast: position === entries.length - 1 }));
    });
  };
  const details = h('details', { class: 'json-node', role: 'treeitem' },
    h('summary', {},
      renderKey(key),
      h('span', { class: 'json-punctuation', text: open }),
      h('span', { class: 'json-preview', text: ` ${countText} ${close}` })),
    children,
    h('div', { class: 'json-close' }, h('span', { class: 'json-punctuation', text: close }), comma));
  childBuilders.set(details, build);
  details.addEventListener('toggle', () => { if (details.open) build(); });
  if (depth < expandDepth) {
    build();
    details.open = true;
  }
  return details;
}
