// oidc-provider: a real, certified OpenID Provider we did not write (panva's `oidc-provider`
// from npm, pinned in package-lock.json), for the single sign-on tests. It serves discovery,
// JWKS, authorization (PKCE required), token, userinfo, RP-initiated and back-channel logout
// (a signed `logout_token` POSTed to Switchboard when a session ends there); one static
// client (Switchboard); and a minimal interaction of our own in place of its development
// pages: a form asking which test person signs in, which logs them in and grants what was
// asked in one step. People and their claims (`email`, `email_verified`, `groups`…) are given
// by the test. `tamperNextIdToken()` changes a claim of the next ID token the token endpoint
// gives out, leaving its signature as it was (a tampered token, for the refusal tests);
// `reissueNextIdToken(change)` changes the next ID token's claims and signs it again with the
// provider's own key (a token the provider could have issued: an expired one, for instance);
// `rotateKeys()` makes it start over with a new signing key only.
//
// Standalone: `node support/oidc-provider.js 9400 http://127.0.0.1:8080` runs it for trying
// Switchboard's `[oidc]` by hand (person `alice`, client `switchboard` / `switchboard-secret`).

import http from 'node:http';
import { createPrivateKey, generateKeyPairSync, sign } from 'node:crypto';
import Provider from 'oidc-provider';

export const CLIENT_ID = 'switchboard';
export const CLIENT_SECRET = 'switchboard-test-secret';

/**
 * Starts the provider on 127.0.0.1:`port` for a Switchboard at `switchboardOrigin`; resolves to
 * `{issuer, tamperNextIdToken, reissueNextIdToken, rotateKeys, stop}`.
 */
export async function startOidcProvider({ port, switchboardOrigin, people }) {
  const issuer = `http://127.0.0.1:${port}`;
  const control = { tamper: false, reissue: null, key: null };
  const configuration = () => ({
    clients: [{
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
      redirect_uris: [`${switchboardOrigin}/auth/oidc/callback`],
      post_logout_redirect_uris: [`${switchboardOrigin}/`],
      backchannel_logout_uri: `${switchboardOrigin}/auth/oidc/backchannel-logout`,
      response_types: ['code'],
      grant_types: ['authorization_code'],
    }],
    scopes: ['openid', 'email', 'profile', 'groups'],
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['name', 'preferred_username'],
      groups: ['groups'],
    },
    findAccount: (ctx, id) => (people[id] ? { accountId: id, claims: () => ({ sub: id, ...people[id] }) } : undefined),
    interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
    features: {
      devInteractions: { enabled: false },
      backchannelLogout: { enabled: true },
      rpInitiatedLogout: { enabled: true, logoutSource, postLogoutSuccessSource: (ctx) => { ctx.body = page('Signed out', '<p>Signed out.</p>'); } },
    },
    pkce: { required: () => true },
    // Its outgoing requests (the back-channel logout POST) refuse special-use addresses; the
    // Switchboard under test is on loopback, so this test provider sends them without that check.
    fetch: (url, { dispatcher, ...options }) => globalThis.fetch(url, options),
    cookies: { keys: ['oidc-provider-test-cookie-key'] },
    jwks: { keys: [control.key] },
  });
  let provider;
  let handle;
  const build = () => {
    control.key = signingKey();
    provider = new Provider(issuer, configuration());
    provider.use(tamperWhenAsked);
    handle = provider.callback();
  };
  const tamperWhenAsked = async (ctx, next) => {
    await next();
    if (ctx.path !== '/token' || typeof ctx.body?.id_token !== 'string') return;
    if (control.tamper) {
      control.tamper = false;
      ctx.body = { ...ctx.body, id_token: tampered(ctx.body.id_token) };
    } else if (control.reissue) {
      const change = control.reissue;
      control.reissue = null;
      ctx.body = { ...ctx.body, id_token: reissued(ctx.body.id_token, change, control.key) };
    }
  };
  build();
  const server = http.createServer((req, res) => {
    const match = new URL(req.url, issuer).pathname.match(/^\/interaction\/([^/]+)(\/login)?$/);
    if (!match) return handle(req, res);
    interaction(provider, people, req, res, Boolean(match[2])).catch((error) => {
      res.statusCode = 500;
      res.end(String(error));
    });
  });
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    issuer,
    tamperNextIdToken: () => { control.tamper = true; },
    reissueNextIdToken: (change) => { control.reissue = change; },
    // The provider starts over with a new signing key (and without the old one).
    rotateKeys: build,
    stop: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }),
  };
}

/** The login form, and its submission: log the person in and grant what the client asked. */
async function interaction(provider, people, req, res, submitted) {
  const details = await provider.interactionDetails(req, res);
  if (!submitted) {
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    res.end(page('Test provider sign-in', `<form method="post" action="/interaction/${details.uid}/login">
      <label>Who are you? <input name="login" autofocus></label><button type="submit">Sign in to the test provider</button></form>`));
    return;
  }
  const login = new URLSearchParams(await readBody(req)).get('login') ?? '';
  if (!people[login]) {
    res.statusCode = 400;
    res.end(`unknown test person ${login}`);
    return;
  }
  const grant = new provider.Grant({ accountId: login, clientId: details.params.client_id });
  grant.addOIDCScope(String(details.params.scope));
  const grantId = await grant.save();
  await provider.interactionFinished(req, res, { login: { accountId: login }, consent: { grantId } }, { mergeWithLastSubmission: false });
}

/** A plain page (no outside resources, no favicon request). */
function page(title, body) {
  return `<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>${title}</title></head><body>${body}</body></html>`;
}

/** The end-session confirmation: the provider's own form, and a button that submits it. */
function logoutSource(ctx, form) {
  ctx.body = page('Sign out of the test provider', `${form}<button autofocus type="submit" form="op.logoutForm" value="yes" name="logout">Yes, sign me out</button>`);
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    let body = '';
    req.on('data', (chunk) => { body += chunk; });
    req.on('end', () => resolve(body));
    req.on('error', reject);
  });
}

/** A fresh RSA signing key as a private JWK. */
function signingKey() {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { ...privateKey.export({ format: 'jwk' }), use: 'sig', alg: 'RS256', kid: `test-${Date.now()}` };
}

/** `jwt` with its subject changed and its signature kept. */
function tampered(jwt) {
  const [header, payload, signature] = jwt.split('.');
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
  claims.sub = `${claims.sub}-impostor`;
  return [header, Buffer.from(JSON.stringify(claims)).toString('base64url'), signature].join('.');
}

/** `jwt` with its claims changed by `change(claims)`, signed again (RS256) with `jwk`. */
function reissued(jwt, change, jwk) {
  const [header, payload] = jwt.split('.');
  const claims = change(JSON.parse(Buffer.from(payload, 'base64url').toString()));
  const signed = `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
  const signature = sign('sha256', Buffer.from(signed), createPrivateKey({ key: jwk, format: 'jwk' }));
  return `${signed}.${signature.toString('base64url')}`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [port = '9400', origin = 'http://127.0.0.1:8080'] = process.argv.slice(2);
  const people = { alice: { email: 'alice@example.com', email_verified: true, name: 'Alice', groups: ['sb-admins'] } };
  const { issuer } = await startOidcProvider({ port: Number(port), switchboardOrigin: origin, people });
  console.log(`OpenID Provider at ${issuer} (client ${CLIENT_ID} / ${CLIENT_SECRET})`);
}
