// signin-page: asks for an API token, checks it against GET /api/me, and keeps it in this tab's
// sessionStorage only. Explains where a token comes from, in plain words.

import { h } from '../lib/dom.js';
import { clearToken, setToken } from '../lib/session.js';

/** Draws the sign-in card into `container`. */
export function renderSignIn(container, { message, verify, onSignedIn }) {
  const input = h('input', { id: 'token-input', name: 'token', type: 'password', autocomplete: 'current-password', required: true, spellcheck: 'false', 'aria-describedby': 'token-hint' });
  const status = h('p', { class: 'alert alert-error', role: 'alert', hidden: !message, text: message || '' });
  const submit = h('button', { type: 'submit', class: 'button button-primary', text: 'Sign in' });
  const form = h('form', { class: 'card stack', 'aria-labelledby': 'signin-title' },
    h('div', { class: 'brand' }, h('img', { src: new URL('../icon.svg', import.meta.url).href, alt: '' }), 'Switchboard'),
    h('h1', { id: 'signin-title', text: 'Sign in' }),
    status,
    h('div', { class: 'field' },
      h('label', { for: 'token-input', text: 'API token' }),
      input,
      h('p', { id: 'token-hint', class: 'field-hint', text: 'The owner token is printed once when Switchboard first starts; more come from "switchboard token create". It is kept in this browser tab only and forgotten when the tab closes.' })),
    submit);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const token = input.value.trim();
    if (!token) {
      status.hidden = false;
      status.textContent = 'Enter your API token.';
      input.focus();
      return;
    }
    submit.disabled = true;
    status.hidden = true;
    setToken(token);
    try {
      if (await verify()) {
        onSignedIn();
        return;
      }
      clearToken();
      status.textContent = 'That token was not accepted. Check that you copied all of it and that it has not been revoked.';
    } catch (error) {
      clearToken();
      status.textContent = error.message;
    }
    status.hidden = false;
    submit.disabled = false;
    input.select();
  });
  container.append(form);
  input.focus();
}
