// A client of the TypeScript MCP SDK that starts "mcpward serve" (or
// "mcpward" with the arguments SERVE_ARGS, JSON) over stdio, waits for the
// example server's echo tool (mcp__ex__echo, or TOOL), calls it and prints
// {"tools", "text", "isError"} as JSON. Run by TestServeTypeScriptClient
// with MCP_SDK (the SDK package's directory), MCPWARD (the binary),
// SERVE_ENV (its environment, JSON) and SERVE_CWD.
import { pathToFileURL } from "node:url";

const sdk = pathToFileURL(process.env.MCP_SDK).href;
const { Client } = await import(`${sdk}/dist/esm/client/index.js`);
const { StdioClientTransport } = await import(`${sdk}/dist/esm/client/stdio.js`);

const transport = new StdioClientTransport({
  command: process.env.MCPWARD,
  args: process.env.SERVE_ARGS ? JSON.parse(process.env.SERVE_ARGS) : ["serve"],
  env: JSON.parse(process.env.SERVE_ENV),
  cwd: process.env.SERVE_CWD,
  stderr: "ignore",
});
const tool = process.env.TOOL || "mcp__ex__echo";
const client = new Client({ name: "ts-client", version: "0" });
await client.connect(transport);
let tools = [];
for (let i = 0; i < 400; i++) {
  tools = (await client.listTools()).tools;
  if (tools.some((t) => t.name === tool)) break;
  await new Promise((r) => setTimeout(r, 50));
}
const r = await client.callTool({ name: tool, arguments: { text: "from typescript" } });
console.log(JSON.stringify({ tools: tools.map((t) => t.name).sort(), text: r.content[0].text, isError: !!r.isError }));
await client.close();
