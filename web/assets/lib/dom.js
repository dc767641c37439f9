// dom: the one way this UI creates elements. Text always goes in as text nodes, never as HTML, so
// nothing a model, a tool or a server says can become markup. The only innerHTML in the UI is the
// Markdown renderer's output, which escapes everything first (see markdown.js).

/**
 * Creates an element. `attributes` keys: `class`, `text` (textContent), `dataset` (object),
 * `on<event>` (listener), boolean `true` sets an empty attribute, `false`/null/undefined skip it,
 * anything else becomes a string attribute. Children: nodes, strings (as text), arrays, or falsy (skipped).
 */
export function h(tagName, attributes = {}, ...children) {
  const element = document.createElement(tagName);
  for (const [name, value] of Object.entries(attributes ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'class') element.className = value;
    else if (name === 'text') element.textContent = String(value);
    else if (name === 'dataset') Object.assign(element.dataset, value);
    else if (name.startsWith('on') && typeof value === 'function') {
      element.addEventListener(name.slice(2).toLowerCase(), value);
    } else if (name === 'value' && 'value' in element) element.value = value;
    else if (name === 'checked' && 'checked' in element) element.checked = Boolean(value);
    else if (value === true) element.setAttribute(name, '');
    else element.setAttribute(name, String(value));
  }
  appendChildren(element, children);
  return element;
}

/** Appends nodes, strings (as text) and nested arrays; skips null, undefined and false. */
export function appendChildren(parent, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    parent.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return parent;
}

/** Replaces every child of `parent` with `children`. */
export function replaceChildren(parent, ...children) {
  parent.replaceChildren();
  return appendChildren(parent, children);
}

let uniqueIdCounter = 0;
/** A document-unique id for label/aria wiring. */
export function uniqueId(prefix = 'id') {
  uniqueIdCounter += 1;
  return `${prefix}-${uniqueIdCounter}`;
}

/** Formats a date-like value as local date and time, or '—' when absent or invalid. */
export function formatDateTime(value) {
  if (!value) return '—';
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return String(value);
  return date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/** "3 min ago"-style relative time for lists. */
export function formatRelativeTime(value, now = Date.now()) {
  if (!value) return '';
  const then = new Date(value).getTime();
  if (Number.isNaN(then)) return '';
  const seconds = Math.round((now - then) / 1000);
  if (seconds < 45) return 'just now';
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  if (hours < 24) return `${hours} h ago`;
  const days = Math.round(hours / 24);
  if (days < 30) return `${days} d ago`;
  return formatDateTime(value);
}

/** Copies text to the clipboard; falls back to a hidden textarea where the async API is missing. */
export async function copyTextToClipboard(text) {
  if (navigator.clipboard && window.isSecureContext) {
    try {
      await navigator.clipboard.writeText(text);
      return true;
    } catch {
      // fall through to the legacy path (permission denied in some headless contexts)
    }
  }
  const textarea = h('textarea', { class: 'visually-hidden', 'aria-hidden': 'true' });
  textarea.value = text;
  document.body.append(textarea);
  textarea.select();
  let copied = false;
  try {
    copied = document.execCommand('copy');
  } catch {
    copied = false;
  }
  textarea.remove();
  return copied;
}

/** Shows a transient message in the page's live region (announced by screen readers). */
export function showToast(message, kind = 'info') {
  let region = document.getElementById('toast-region');
  if (!region) {
    region = h('div', { id: 'toast-region', class: 'toast-region', role: 'status', 'aria-live': 'polite' });
    document.body.append(region);
  }
  const toast = h('div', { class: `toast toast-${kind}`, text: message });
  region.append(toast);
  while (region.children.length > 3) region.firstElementChild.remove();
  setTimeout(() => toast.remove(), kind === 'error' ? 8000 : 4000);
}
