// A gateway client on the official TypeScript SDK that declares elicitation, driven by the
// server's integration test `gateway::sdk_clients`: its user answers every approval form with
// DECISION (`approve` or `deny`); it calls `everything__echo` (ASK_USER: the gateway asks it)
// and `everything__trigger-long-running-operation` with a progress callback, then prints
// what it was asked, what came back and the progress it heard as one JSON line.
//
// Usage: node gateway_elicit_client.mjs URL TOKEN DECISION
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [url, token, decision] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const client = new Client(
  { name: "ts-sdk-eliciting-client", version: "1.0.0" },
  { capabilities: { elicitation: { form: {} } } },
);
const asked = [];
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  asked.push({
    message: request.params.message,
    // A titled single choice is `oneOf` [{const, title}] (an untitled one would be `enum`).
    choices: request.params.requestedSchema.properties.decision?.oneOf?.map((choice) => choice.const),
  });
  return { action: "accept", content: { decision } };
});
await client.connect(transport);

const echoed = await client.callTool({ name: "everything__echo", arguments: { message: "asked" } });
const progress = [];
const long = await client.callTool(
  { name: "everything__trigger-long-running-operation", arguments: { duration: 1, steps: 3 } },
  undefined,
  { onprogress: (report) => progress.push([report.progress, report.total]) },
);

console.log(
  JSON.stringify({
    asked,
    echoed: echoed.content[0]?.text,
    echo_is_error: echoed.isError ?? false,
    long: long.content[0]?.text,
    progress,
  }),
);
await client.close();
