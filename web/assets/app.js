// app: the shell — checks the tab's token, draws the navigation, and routes hash URLs
// (#/chat, #/buds, #/servers, #/kg, #/tokens, #/people, #/audit) to page modules loaded on demand. Hash routing keeps every
// UI URL on `/`, so UI paths never collide with API paths like /chat/stream.

import { h, replaceChildren } from './lib/dom.js';
import { api, ApiError } from './lib/api.js';
import { parseHash } from './lib/address.js';
import { endSession, getToken, mayHaveCookieSession, getIdentity, hasScope, onSessionChange, setCookieSession, setIdentity, signOut, usesCookieSession } from './lib/session.js';

const ROUTES = [
  { name: 'chat', label: 'Chat', load: () => import('./pages/chat/chat-page.js') },
  { name: 'buds', label: 'Assistants', load: () => import('./pages/buds/buds-page.js') },
  { name: 'servers', label: 'Servers', load: () => import('./pages/servers/servers-page.js') },
  { name: 'kg', label: 'Knowledge graph', load: () => import('./pages/kg-page.js') },
  { name: 'tokens', label: 'My tokens', load: () => import('./pages/tokens-page.js') },
  { name: 'people', label: 'People', load: () => import('./pages/people-page.js'), adminOnly: true },
  { name: 'audit', label: 'Audit', load: () => import('./pages/audit-page.js'), adminOnly: true },
];

const root = document.getElementById('root');
let pageCleanup = null;
let renderGeneration = 0;
let signInMessage = '';
let cookieProbed = false;

/** Navigates to a hash route. */
export function navigate(hash, { replace = false } = {}) {
  if (replace) {
    history.replaceState(null, '', hash);
    route();
  } else if (location.hash === hash) {
    route();
  } else {
    location.hash = hash;
  }
}

async function loadIdentity() {
  try {
    setIdentity(await api.get('/api/me', { signOutOn401: false }));
    return true;
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return false;
    if (error instanceof ApiError && error.status === 404) {
      setIdentity({ scopes: [], unknown: true });
      return true;
    }
    throw error;
  }
}

async function route() {
  const generation = ++renderGeneration;
  const { name, parts, query } = parseHash(location.hash);
  if (!getToken() && !usesCookieSession()) {
    // A single sign-on session cookie, if the browser has one, signs the tab in.
    if (!cookieProbed && mayHaveCookieSession()) {
      cookieProbed = true;
      try {
        setCookieSession(await loadIdentity());
      } catch {
        setCookieSession(false);
      }
    }
    if (!usesCookieSession()) {
      await showSignIn();
      return;
    }
  }
  if (!getIdentity()) {
    try {
      if (!(await loadIdentity())) {
        signOut('Your saved token is no longer accepted. Sign in again.');
        return;
      }
    } catch (error) {
      replaceChildren(root, h('main', { class: 'signin', id: 'main' }, h('div', { class: 'card' },
        h('h1', { text: 'Switchboard is not reachable' }),
        h('p', { class: 'alert alert-error', role: 'alert', text: error.message }),
        h('button', { class: 'button', type: 'button', text: 'Try again', onclick: () => route() }))));
      return;
    }
  }
  if (generation !== renderGeneration) return;
  const routeEntry = ROUTES.find((entry) => entry.name === name) ?? null;
  if (!routeEntry) {
    navigate('#/chat', { replace: true });
    return;
  }
  for (const dialog of document.querySelectorAll('dialog[open]')) dialog.close();
  document.getElementById('toast-region')?.replaceChildren();
  const main = renderShell(routeEntry.name);
  pageCleanup?.();
  pageCleanup = null;
  if (routeEntry.adminOnly && !hasScope('admin') && !getIdentity()?.unknown) {
    replaceChildren(main, h('div', { class: 'card' }, h('h1', { text: routeEntry.label }),
      h('p', { text: 'Only workspace administrators can see this page. Ask an administrator for a token with the admin scope.' })));
    return;
  }
  main.replaceChildren(h('p', { class: 'muted row' }, h('span', { class: 'spinner', 'aria-hidden': 'true' }), 'Loading…'));
  try {
    const module = await routeEntry.load();
    if (generation !== renderGeneration) return;
    main.replaceChildren();
    const cleanup = (await module.renderPage(main, { parts, query, navigate })) ?? null;
    // The person went elsewhere while this page was still drawing: the newer route has already
    // replaced it, so it is put away here (nothing else holds its cleanup).
    if (generation !== renderGeneration) {
      cleanup?.();
      return;
    }
    pageCleanup = cleanup;
  } catch (error) {
    if (generation !== renderGeneration) return;
    replaceChildren(main, h('p', { class: 'alert alert-error', role: 'alert', text: `This page could not load: ${error.message}` }));
  }
  document.title = `${routeEntry.label} · Switchboard`;
}

function renderShell(activeName) {
  let main = root.querySelector('#main.app-main');
  const identity = getIdentity();
  const links = ROUTES.filter((entry) => !entry.adminOnly || hasScope('admin') || identity?.unknown).map((entry) =>
    h('a', { class: 'nav-link', href: `#/${entry.name}`, 'aria-current': entry.name === activeName ? 'page' : undefined, text: entry.label }));
  const who = identity?.user?.name ?? '';
  const workspace = identity?.workspace?.name ?? '';
  const scopes = identity?.scopes ?? [];
  const role = scopes.includes('admin') ? 'Administrator' : scopes.length ? scopes.join(', ') : '';
  const nav = h('nav', { class: 'app-nav', 'aria-label': 'Main' },
    h('div', { class: 'brand' }, h('img', { src: new URL('./icon.svg', import.meta.url).href, alt: '' }), 'Switchboard'),
    links,
    h('div', { class: 'nav-footer' },
      who || workspace ? h('div', { class: 'identity', title: identity?.user_id ? `User ${identity.user_id}` : null },
        who ? h('div', { text: who }) : null,
        workspace ? h('div', { text: `Workspace: ${workspace}` }) : null,
        role ? h('div', { text: role }) : null) : null,
      h('button', { type: 'button', class: 'button button-small', text: 'Sign out', onclick: () => endSession() })));
  if (!main) {
    main = h('main', { class: 'app-main', id: 'main', tabindex: '-1' });
    replaceChildren(root, h('div', { class: 'app' }, nav, main));
  } else {
    root.querySelector('.app-nav').replaceWith(nav);
  }
  return main;
}

async function showSignIn() {
  pageCleanup?.();
  pageCleanup = null;
  const { renderSignIn } = await import('./pages/signin-page.js');
  const main = h('main', { class: 'signin', id: 'main' });
  replaceChildren(root, main);
  renderSignIn(main, {
    message: signInMessage,
    verify: async () => loadIdentity(),
    onSignedIn: () => {
      signInMessage = '';
      const { name } = parseHash(location.hash);
      navigate(name && name !== 'signin' ? location.hash : '#/chat', { replace: true });
    },
  });
  document.title = 'Sign in · Switchboard';
}

onSessionChange((change) => {
  if (!change.signedIn) {
    signInMessage = change.reason ?? '';
    route();
  }
});
window.addEventListener('hashchange', () => route());
route();
