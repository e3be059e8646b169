// @modelcontextprotocol/client (v2 line; legacy and 2026-07-28) against magnotia-mcp.
// usage: node client-v2.mjs legacy|auto|pin -- SERVER_COMMAND [ARGS...]   prints a JSON summary on stdout
//   legacy: initialize only (the v2 default); auto: probe server/discover first, fall back to initialize;
//   pin: 2026-07-28 only, no fallback.
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { exercise, main, serverCommand } from "./exercise.mjs";

const { command, args, options } = serverCommand(process.argv.slice(2));
const modeName = options[0] ?? "legacy";
const mode = modeName === "pin" ? { pin: "2026-07-28" } : modeName;
if (!["legacy", "auto", "pin"].includes(modeName)) {
  console.error(`unknown mode ${modeName}: use legacy, auto or pin`);
  process.exit(2);
}

await main(async () => {
  const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
  const client = new Client({ name: "magnotia-tests-client-v2", version: "0.0.0" }, { versionNegotiation: { mode } });
  await client.connect(transport);
  try {
    const summary = await exercise(client);
    return {
      client: "@modelcontextprotocol/client",
      mode: modeName,
      protocolVersion: client.getNegotiatedProtocolVersion(),
      serverInfo: client.getServerVersion(),
      capabilities: client.getServerCapabilities(),
      ...summary,
    };
  } finally {
    await client.close();
  }
});
