// static-server: serves web/ exactly as the binary lays it out (index.html with the asset prefix
// filled in, files under /assets/dev/) so the UI's JavaScript units can be tested in the browser
// without building or starting Switchboard.

import http from 'node:http';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { repositoryRoot } from './chromium.js';

const webRoot = path.join(repositoryRoot, 'web');
const types = { '.js': 'text/javascript', '.css': 'text/css', '.svg': 'image/svg+xml', '.html': 'text/html' };

/** Starts the server on 127.0.0.1 and an ephemeral port; resolves to `{origin, close}`. */
export async function startStaticServer() {
  const server = http.createServer(async (request, response) => {
    const url = new URL(request.url, 'http://localhost');
    try {
      if (url.pathname === '/' || url.pathname === '/index.html') {
        const html = (await readFile(path.join(webRoot, 'index.html'), 'utf8')).replaceAll('__ASSET_BASE__', '/assets/dev');
        response.writeHead(200, { 'content-type': 'text/html' }).end(html);
        return;
      }
      if (url.pathname === '/favicon.ico') {
        response.writeHead(204).end();
        return;
      }
      if (url.pathname === '/blank') {
        response.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><html><head><meta charset="utf-8"></head><body></body></html>');
        return;
      }
      const match = url.pathname.match(/^\/assets\/dev\/(.+)$/);
      const relative = match ? path.normalize(match[1]) : null;
      if (!relative || relative.startsWith('..')) throw new Error('not found');
      const body = await readFile(path.join(webRoot, 'assets', relative));
      response.writeHead(200, { 'content-type': types[path.extname(relative)] ?? 'application/octet-stream' }).end(body);
    } catch {
      response.writeHead(404).end('not found');
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return { origin: `http://127.0.0.1:${port}`, close: () => new Promise((resolve) => server.close(resolve)) };
}
