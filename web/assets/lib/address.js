// address: the tab's hash address (`#/name/a/b?x=1`). The shell's router reads it; a page
// rewrites it in place (the chat's conversation id, the graph's open tab) only while the tab is
// still on that page. A page finishing work after the person followed a link elsewhere (a
// conversation loading, an answer starting) must not take the address back: the router would
// then draw the page that was left instead of the one asked for.

/** Parses `#/name/a/b?x=1` into `{name, parts, query}`. */
export function parseHash(hash) {
  const [path, queryString = ''] = hash.replace(/^#\/?/, '').split('?');
  const [name = '', ...parts] = path.split('/').filter(Boolean).map(decodeURIComponent);
  return { name, parts, query: new URLSearchParams(queryString) };
}

/** Replaces the address with `hash` (no new history entry) when the tab is still on `hash`'s page. */
export function replaceAddress(hash) {
  if (parseHash(location.hash).name === parseHash(hash).name) history.replaceState(null, '', hash);
}
