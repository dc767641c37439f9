// oauth-example-server: the official TypeScript SDK's OAuth example for a browser test — an MCP
// server (`greet`, `multi-greet`…) that answers 401 without a token, behind the SDK's demo
// authorization server (discovery, dynamic client registration, PKCE, resource indicators,
// strict audience checks; it consents at once, as a person who already approved would). Both
// listen on free loopback ports; `stop` ends the whole process group.

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { repositoryRoot } from './chromium.js';

const interop = path.join(repositoryRoot, 'interop');
const script = path.join(interop, 'node_modules', '@modelcontextprotocol', 'sdk', 'dist', 'esm', 'examples', 'server', 'simpleStreamableHttp.js');

/** A loopback port nothing listens on now. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

async function waitForPort(port, deadline) {
  for (;;) {
    const open = await new Promise((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.end();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`the OAuth example server did not listen on port ${port} in time`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Starts the example; resolves to `{mcpUrl, authorizationServer, logs, stop}`. */
export async function startOAuthExampleServer({ timeoutMs = 20000 } = {}) {
  if (!existsSync(script)) {
    throw new Error('the TypeScript SDK is not installed: run `bash interop/install.sh` (the README\'s test command does).');
  }
  const [mcpPort, authPort] = [await freePort(), await freePort()];
  const child = spawn(process.execPath, ['--require', path.join(interop, 'loopback.cjs'), script, '--oauth', '--oauth-strict'], {
    env: { ...process.env, MCP_PORT: String(mcpPort), MCP_AUTH_PORT: String(authPort) },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const logs = [];
  child.stdout.on('data', (chunk) => logs.push(chunk.toString()));
  child.stderr.on('data', (chunk) => logs.push(chunk.toString()));
  const deadline = Date.now() + timeoutMs;
  try {
    await waitForPort(mcpPort, deadline);
    await waitForPort(authPort, deadline);
  } catch (error) {
    process.kill(-child.pid, 'SIGKILL');
    throw new Error(`${error.message}:\n${logs.join('')}`);
  }
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    process.kill(-child.pid, 'SIGTERM');
    await exited;
  };
  return { mcpUrl: `http://localhost:${mcpPort}/mcp`, authorizationServer: `http://localhost:${authPort}`, logs, stop };
}
