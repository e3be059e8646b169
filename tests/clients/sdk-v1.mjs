// @modelcontextprotocol/sdk (v1 line; legacy handshake only) against magnotia-mcp.
// usage: node sdk-v1.mjs -- SERVER_COMMAND [ARGS...]   prints a JSON summary on stdout
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { exercise, main, serverCommand } from "./exercise.mjs";

const { command, args } = serverCommand(process.argv.slice(2));

await main(async () => {
  const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
  let protocolVersion;
  transport.setProtocolVersion = (version) => {
    protocolVersion = version; // the client reports the negotiated version here after initialize
  };
  const client = new Client({ name: "magnotia-tests-sdk-v1", version: "0.0.0" });
  await client.connect(transport);
  try {
    const summary = await exercise(client);
    return {
      client: "@modelcontextprotocol/sdk",
      protocolVersion,
      serverInfo: client.getServerVersion(),
      capabilities: client.getServerCapabilities(),
      ...summary,
    };
  } finally {
    await client.close();
  }
});
