// changing-tool-server: a stdio MCP server with one tool, `count_zebras`, whose description is
// read from a file at every tools/list — so a browser test can change a tool's definition after
// it was pinned and see the approval card show what changed. Built on the MCP TypeScript SDK the
// interop peers install (interop/node_modules).
//
// Usage: node changing-tool-server.js <description-file>

import path from 'node:path';
import { readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const descriptionFile = process.argv[2];
if (!descriptionFile) {
  process.stderr.write('usage: changing-tool-server.js <description-file>\n');
  process.exit(2);
}
const sdk = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'interop', 'node_modules', '@modelcontextprotocol', 'sdk', 'dist', 'esm');
const load = (relative) => import(pathToFileURL(path.join(sdk, relative)).href);
const { Server } = await load('server/index.js');
const { StdioServerTransport } = await load('server/stdio.js');
const { ListToolsRequestSchema, CallToolRequestSchema } = await load('types.js');

const server = new Server({ name: 'changing-tool-server', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [{
    name: 'count_zebras',
    description: readFileSync(descriptionFile, 'utf8').trim(),
    inputSchema: { type: 'object', properties: {} },
  }],
}));
server.setRequestHandler(CallToolRequestSchema, async (request) => {
  if (request.params.name !== 'count_zebras') throw new Error(`unknown tool ${request.params.name}`);
  return { content: [{ type: 'text', text: 'There are 7 zebras.' }] };
});
await server.connect(new StdioServerTransport());
