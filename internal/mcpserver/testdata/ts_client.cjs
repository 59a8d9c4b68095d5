// An MCP client that is not ours: the official TypeScript SDK. It spawns the server named in the
// plan (argv[2], JSON: {command, args, env, calls: [{name, arguments}]}), lists its tools, makes
// the calls in order and prints one JSON object: {server, tools: [{name, description}],
// results: [{isError, text}]}. NODE_MODULES names the folder holding @modelcontextprotocol/sdk.
const path = require("node:path");
const { createRequire } = require("node:module");

const req = createRequire(path.join(process.env.NODE_MODULES, "_resolve_from_here.js"));
const { Client } = req("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = req("@modelcontextprotocol/sdk/client/stdio.js");

async function main() {
  const plan = JSON.parse(process.argv[2]);
  const transport = new StdioClientTransport({
    command: plan.command,
    args: plan.args,
    env: { ...process.env, ...(plan.env || {}) },
    stderr: "inherit",
  });
  const client = new Client({ name: "ts-sdk-test-client", version: "1.0.0" });
  await client.connect(transport);
  const listed = await client.listTools();
  const results = [];
  for (const call of plan.calls || []) {
    const r = await client.callTool({ name: call.name, arguments: call.arguments || {} });
    const text = (r.content || []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
    results.push({ isError: !!r.isError, text });
  }
  process.stdout.write(JSON.stringify({
    server: client.getServerVersion(),
    tools: listed.tools.map((t) => ({ name: t.name, description: t.description || "", inputSchema: t.inputSchema })),
    results,
  }));
  await client.close();
}

main().catch((err) => {
  process.stderr.write(String(err && err.stack ? err.stack : err) + "\n");
  process.exit(1);
});
