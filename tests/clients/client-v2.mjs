// @modelcontextprotocol/client (v2 line; legacy and 2026-07-28) against magnotia-mcp.
// usage: node client-v2.mjs legacy|auto|pin -- SERVER_COMMAND [ARGS...]        over stdio
//        node client-v2.mjs legacy|auto|pin --http URL walk|refused|progress ARGS|cancel ARGS   over Streamable HTTP
// prints a JSON summary on stdout
//   legacy: initialize only (the v2 default); auto: probe server/discover first, fall back to initialize;
//   pin: 2026-07-28 only, no fallback.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { exercise, httpTarget, main, serverCommand } from "./exercise.mjs";
import { WALKS, recordingFetch, refused } from "./http.mjs";

const argv = process.argv.slice(2);
const http = httpTarget(argv);
const stdio = http ? null : serverCommand(argv);
const modeName = (http ?? stdio).options[0] ?? "legacy";
const mode = modeName === "pin" ? { pin: "2026-07-28" } : modeName;
if (!["legacy", "auto", "pin"].includes(modeName)) {
  console.error(`unknown mode ${modeName}: use legacy, auto or pin`);
  process.exit(2);
}
const recorder = recordingFetch();

function newTransport() {
  if (stdio) {
    return new StdioClientTransport({ command: stdio.command, args: stdio.args, env: process.env, stderr: "inherit" });
  }
  const token = process.env.MAGNOTIA_MCP_TOKEN;
  // v2's way to send a static bearer token: an AuthProvider whose token() gives it (no OAuth).
  const authProvider = token === undefined ? undefined : { token: async () => token };
  return new StreamableHTTPClientTransport(http.url, { authProvider, fetch: recorder.fetch });
}

await main(async () => {
  const transport = newTransport();
  const client = new Client({ name: "magnotia-tests-client-v2", version: "0.0.0" }, { versionNegotiation: { mode } });
  if (http?.task === "refused") {
    try {
      return await refused(() => client.connect(transport), recorder);
    } finally {
      await client.close();
    }
  }
  await client.connect(transport);
  try {
    const walk = WALKS[http?.task];
    const call = (params, options) => client.callTool(params, options);
    const summary = walk ? await walk(call, recorder, http.args) : await exercise(client);
    return {
      client: "@modelcontextprotocol/client",
      mode: modeName,
      protocolVersion: client.getNegotiatedProtocolVersion(),
      serverInfo: client.getServerVersion(),
      capabilities: client.getServerCapabilities(),
      ...summary,
      ...(http ? { wire: recorder.wire } : {}),
    };
  } finally {
    await client.close();
  }
});
