// signin-page: offers "Sign in with <provider>" when single sign-on is configured (GET
// /auth/providers; the button goes to /auth/oidc/login and the server's session cookie signs
// the tab in when the provider sends the person back), and always asks for an API token too:
// checked against GET /api/me and kept in this tab's sessionStorage only. A refused single
// sign-on comes back as #/signin?sso_error=… and is shown as the message.

import { h } from '../lib/dom.js';
import { clearToken, setToken } from '../lib/session.js';

/** Draws the sign-in card into `container`. */
export function renderSignIn(container, { message, verify, onSignedIn }) {
  const ssoError = new URLSearchParams(location.hash.split('?')[1] ?? '').get('sso_error');
  if (ssoError) message = `Single sign-on did not work: ${ssoError}`;
  const input = h('input', { id: 'token-input', name: 'token', type: 'password', autocomplete: 'current-password', required: true, spellcheck: 'false', 'aria-describedby': 'token-hint' });
  const status = h('p', { class: 'alert alert-error', role: 'alert', hidden: !message, text: message || '' });
  const submit = h('button', { type: 'submit', class: 'button button-primary', text: 'Sign in' });
  const ssoSlot = h('div', { class: 'stack', hidden: true });
  showSingleSignOn(ssoSlot);
  const form = h('form', { class: 'card stack', 'aria-labelledby': 'signin-title' },
    h('div', { class: 'brand' }, h('img', { src: new URL('../icon.svg', import.meta.url).href, alt: '' }), 'Switchboard'),
    h('h1', { id: 'signin-title', text: 'Sign in' }),
    status,
    ssoSlot,
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

/** Fills `slot` with the single sign-on button when the server offers one. */
async function showSingleSignOn(slot) {
  let options = null;
  try {
    const response = await fetch('/auth/providers', { headers: { Accept: 'application/json' }, cache: 'no-store' });
    if (response.ok) options = await response.json();
  } catch {
    return;
  }
  if (!options?.oidc) return;
  slot.append(
    h('a', { class: 'button button-primary', href: options.oidc.login_url, text: `Sign in with ${options.oidc.display_name}` }),
    h('p', { class: 'field-hint', text: 'Or use an API token:' }));
  slot.hidden = false;
}
