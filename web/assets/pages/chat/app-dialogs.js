// app-dialogs: what an MCP App may ask of the person, asked in the UI's own chrome (never inside
// the app's frame, which the app draws): opening a link (`ui/open-link`), sending a message as
// the person (`ui/message`), saving the files it offers (`ui/download-file`), and the browser
// permissions its resource declares. Each resolves to the person's answer; closing a dialog
// (Escape) is a refusal.

import { h } from '../../lib/dom.js';

/** The spec's permission names (`_meta.ui.permissions`) and the browser features they map to. */
export const PERMISSION_FEATURES = {
  camera: { feature: 'camera', label: 'Camera' },
  microphone: { feature: 'microphone', label: 'Microphone' },
  geolocation: { feature: 'geolocation', label: 'Location' },
  clipboardWrite: { feature: 'clipboard-write', label: 'Write to the clipboard' },
};

/** A modal question with a refusing and a confirming button; resolves to true on confirm. */
function ask({ title, body, confirm, refuse = 'Cancel', className }) {
  return new Promise((resolve) => {
    let answer = false;
    const confirmButton = h('button', { type: 'submit', class: 'button button-primary', text: confirm });
    const refuseButton = h('button', { type: 'button', class: 'button', text: refuse });
    const form = h('form', { class: 'dialog-form', method: 'dialog' },
      h('div', { class: 'dialog-header' }, h('h2', { text: title })),
      h('div', { class: 'dialog-body stack' }, body),
      h('div', { class: 'dialog-footer' }, refuseButton, confirmButton));
    const dialog = h('dialog', { 'aria-label': title, class: `mcp-app-dialog ${className}` }, form);
    form.addEventListener('submit', () => { answer = true; });
    refuseButton.addEventListener('click', () => dialog.close());
    dialog.addEventListener('close', () => {
      dialog.remove();
      resolve(answer);
    });
    document.body.append(dialog);
    dialog.showModal();
    refuseButton.focus();
  });
}

/** Asks before opening `url` (already checked to be http(s)) for the app `appLabel`. */
export function confirmOpenLink(url, appLabel) {
  return ask({
    title: 'Open a link?',
    className: 'mcp-app-open-link',
    confirm: 'Open link',
    body: [
      h('p', { text: `The app of ${appLabel} wants to open this page in a new tab:` }),
      h('p', {}, h('code', { class: 'mcp-app-link', text: url })),
    ],
  });
}

/** Shows the message the app wants to send as the person; true: send it. */
export function confirmAppMessage(text, appLabel) {
  return ask({
    title: 'Send this message?',
    className: 'mcp-app-message',
    confirm: 'Send as my message',
    refuse: 'Don’t send',
    body: [
      h('p', { text: `The app of ${appLabel} wants to send this message in your name. It is sent as your next message (after the answer in progress, if any).` }),
      h('blockquote', { class: 'mcp-app-message-text', text }),
    ],
  });
}

/**
 * Asks which of the declared permissions (spec names) the app may use; resolves to the names
 * the person allowed (none when refused).
 */
export async function askPermissions(declared, appLabel) {
  const boxes = declared.map((name) => h('input', { type: 'checkbox', name, checked: true }));
  const allowed = await ask({
    title: 'Allow the app these permissions?',
    className: 'mcp-app-permissions',
    confirm: 'Allow the checked ones',
    refuse: 'Allow none',
    body: [
      h('p', { text: `The app of ${appLabel} asks to use:` }),
      h('ul', { class: 'plain-list' }, declared.map((name, index) => h('li', {},
        h('label', {}, boxes[index], ` ${PERMISSION_FEATURES[name]?.label ?? name}`)))),
      h('p', { class: 'small muted', text: 'Your browser may still ask you before the app uses them.' }),
    ],
  });
  return allowed ? declared.filter((_, index) => boxes[index].checked) : [];
}

/** Shows the files an app offers to download (`{name, type, size}`); true: save them. */
export function confirmDownload(files, appLabel) {
  return ask({
    title: files.length === 1 ? 'Download this file?' : `Download these ${files.length} files?`,
    className: 'mcp-app-download',
    confirm: 'Download',
    body: [
      h('p', { text: `The app of ${appLabel} offers:` }),
      h('ul', { class: 'plain-list' }, files.map((file) => h('li', {},
        h('code', { text: file.name }), ` · ${file.type || 'unknown type'} · ${formatBytes(file.size)}`))),
    ],
  });
}

function formatBytes(bytes) {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
