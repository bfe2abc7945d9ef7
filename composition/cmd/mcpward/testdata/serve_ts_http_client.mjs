// A client of the TypeScript MCP SDK that connects to "mcpward serve
// --http" over Streamable HTTP at SERVE_URL, with "Authorization: Bearer
// SERVE_TOKEN" when SERVE_TOKEN is set, waits for the tool TOOL, calls it
// with {"text": TEXT} and prints {"tools", "text", "isError",
// "protocolVersion"} as JSON; a failure prints {"error"} and exits 1. Run
// by TestServeTypeScriptClientHTTP with MCP_SDK (the SDK package's
// directory).
import { pathToFileURL } from "node:url";

const sdk = pathToFileURL(process.env.MCP_SDK).href;
const { Client } = await import(`${sdk}/dist/esm/client/index.js`);
const { StreamableHTTPClientTransport } = await import(`${sdk}/dist/esm/client/streamableHttp.js`);

const headers = process.env.SERVE_TOKEN ? { Authorization: `Bearer ${process.env.SERVE_TOKEN}` } : {};
const transport = new StreamableHTTPClientTransport(new URL(process.env.SERVE_URL), { requestInit: { headers } });
const client = new Client({ name: "ts-http-client", version: "0" });
try {
  await client.connect(transport);
  let tools = [];
  for (let i = 0; i < 400; i++) {
    tools = (await client.listTools()).tools;
    if (tools.some((t) => t.name === process.env.TOOL)) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const r = await client.callTool({ name: process.env.TOOL, arguments: { text: process.env.TEXT } });
  console.log(JSON.stringify({
    tools: tools.map((t) => t.name).sort(),
    text: r.content[0].text,
    isError: !!r.isError,
    protocolVersion: transport.protocolVersion ?? "",
  }));
  await client.close();
} catch (e) {
  console.log(JSON.stringify({ error: String(e && e.message ? e.message : e) }));
  process.exit(1);
}
