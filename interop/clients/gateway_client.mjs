// A gateway client on the official TypeScript SDK (`Client` over Streamable HTTP), driven by
// the server's integration test `gateway::sdk_clients`: lists every page of tools, calls
// `everything__echo`, lists the resources and reads the first one through the gateway, then
// prints what it got as one JSON line.
//
// Usage: node gateway_client.mjs URL TOKEN MESSAGE
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, token, message] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const client = new Client({ name: "ts-sdk-gateway-client", version: "1.0.0" });
await client.connect(transport);

const tools = [];
let cursor;
do {
  const page = await client.listTools(cursor ? { cursor } : {});
  tools.push(...page.tools.map((tool) => tool.name));
  cursor = page.nextCursor;
} while (cursor);
const called = await client.callTool({ name: "everything__echo", arguments: { message } });
const resources = (await client.listResources()).resources.map((resource) => resource.uri);
const read = await client.readResource({ uri: resources[0] });

console.log(
  JSON.stringify({
    server: client.getServerVersion()?.name,
    tools,
    echoed: called.content[0]?.text,
    resources,
    read_uri: read.contents[0]?.uri,
  }),
);
await client.close();
