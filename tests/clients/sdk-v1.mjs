// @modelcontextprotocol/sdk (v1 line; legacy handshake only) against magnotia-mcp.
// usage: node sdk-v1.mjs -- SERVER_COMMAND [ARGS...]        over stdio
//        node sdk-v1.mjs --http URL walk|refused|progress ARGS|cancel ARGS   over Streamable HTTP
//        (see httpTarget in exercise.mjs)
// prints a JSON summary on stdout
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { exercise, httpTarget, main, serverCommand } from "./exercise.mjs";
import { WALKS, recordingFetch, refused } from "./http.mjs";

const argv = process.argv.slice(2);
const http = httpTarget(argv);
const stdio = http ? null : serverCommand(argv);
const recorder = recordingFetch();

function newTransport() {
  if (stdio) {
    return new StdioClientTransport({ command: stdio.command, args: stdio.args, env: process.env, stderr: "inherit" });
  }
  const token = process.env.MAGNOTIA_MCP_TOKEN;
  // v1 has no bearer-token provider short of OAuth: the header goes in requestInit, as its docs show.
  const requestInit = token === undefined ? {} : { headers: { Authorization: `Bearer ${token}` } };
  return new StreamableHTTPClientTransport(http.url, { requestInit, fetch: recorder.fetch });
}

await main(async () => {
  const transport = newTransport();
  let protocolVersion;
  const setProtocolVersion = transport.setProtocolVersion?.bind(transport); // HTTP: sets MCP-Protocol-Version
  transport.setProtocolVersion = (version) => {
    protocolVersion = version; // the client reports the negotiated version here after initialize
    setProtocolVersion?.(version);
  };
  const client = new Client({ name: "magnotia-tests-sdk-v1", version: "0.0.0" });
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
    const call = (params, options) => client.callTool(params, undefined, options);
    const summary = walk ? await walk(call, recorder, http.args) : await exercise(client);
    return {
      client: "@modelcontextprotocol/sdk",
      protocolVersion,
      serverInfo: client.getServerVersion(),
      capabilities: client.getServerCapabilities(),
      ...summary,
      ...(http ? { wire: recorder.wire } : {}),
    };
  } finally {
    await client.close();
  }
});
