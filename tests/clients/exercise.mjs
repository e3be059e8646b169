// The walk every Node client script does against magnotia-mcp, written once for the
// TypeScript SDK v1 (@modelcontextprotocol/sdk) and v2 (@modelcontextprotocol/client):
// their Client classes share these method names. Returns a JSON-able summary.

const KNOWN_TOOLS = ["list_transcripts", "get_transcript", "search_transcripts", "list_tasks"];

function text(block) {
  if (!block || block.type !== "text") throw new Error(`expected a text block, got ${JSON.stringify(block)}`);
  return block.text;
}

export async function exercise(client) {
  const summary = {};
  const tools = (await client.listTools()).tools;
  summary.tools = tools.map((t) => t.name);
  for (const name of summary.tools) {
    if (!KNOWN_TOOLS.includes(name)) throw new Error(`no plan to call the tool ${name}: update exercise.mjs`);
  }

  // Call every tool, in an order that lets later calls use what earlier ones found.
  summary.calls = {};
  const call = async (name, args) => {
    const r = await client.callTool({ name, arguments: args });
    if (r.isError) throw new Error(`${name} returned isError: ${text(r.content[0])}`);
    const parsed = JSON.parse(text(r.content[0]));
    if (r.structuredContent !== undefined && JSON.stringify(r.structuredContent) !== JSON.stringify(parsed)) {
      throw new Error(`${name}: structuredContent differs from the text block`);
    }
    summary.calls[name] = { isError: r.isError ?? false, structuredContent: r.structuredContent ?? null, parsed };
    return parsed;
  };
  // Time words: the result echoes the range it used ("range"), checked against the outputSchema by the SDK.
  const listed = await call("list_transcripts", { limit: 20, since: "2000", until: "tomorrow" });
  if (!listed.range || listed.range.since !== "2000-01-01T00:00:00.000Z") {
    throw new Error(`list_transcripts did not echo its range: ${JSON.stringify(listed.range)}`);
  }
  if (listed.transcripts.length === 0) throw new Error("the store has no transcripts");
  const chosen = listed.transcripts.find((t) => t.source === "meeting") ?? listed.transcripts[0];
  await call("get_transcript", { id: chosen.id, include_segments: true });
  const word = chosen.title.split(/\s+/).filter((w) => w.length > 3).pop() ?? chosen.title;
  await call("search_transcripts", { query: word });
  await call("list_tasks", {});
  const missed = summary.tools.filter((t) => !(t in summary.calls));
  if (missed.length) throw new Error(`tools not called: ${missed}`);

  // Resources.
  const resources = (await client.listResources()).resources;
  summary.resources = resources.map((r) => r.uri);
  summary.templates = (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
  const uri = resources.find((r) => r.uri.endsWith(chosen.id))?.uri;
  if (!uri) throw new Error(`no resource for transcript ${chosen.id}`);
  const read = await client.readResource({ uri });
  summary.read = read.contents[0];

  // Prompts: get every one, with arguments made from its declared arguments.
  summary.prompts = {};
  for (const prompt of (await client.listPrompts()).prompts) {
    const args = {};
    for (const a of prompt.arguments ?? []) {
      if (a.name === "transcript_id") args[a.name] = chosen.id;
      else if (a.name === "since") args[a.name] = "2000-01-01";
      else if (a.required) throw new Error(`no value for the required argument ${a.name} of ${prompt.name}`);
    }
    const got = await client.getPrompt({ name: prompt.name, arguments: args });
    summary.prompts[prompt.name] = got.messages.map((m) => m.content.type);
  }

  // Completion of a transcript id, from part of its title and from the start of its id.
  const viaPrompt = await client.complete({
    ref: { type: "ref/prompt", name: "summarize_transcript" },
    argument: { name: "transcript_id", value: word },
  });
  const viaTemplate = await client.complete({
    ref: { type: "ref/resource", uri: summary.templates[0] },
    argument: { name: "id", value: chosen.id.slice(0, 6) },
  });
  summary.chosen = chosen.id;
  summary.completions = { prompt: viaPrompt.completion.values, template: viaTemplate.completion.values };
  return summary;
}

// Shared plumbing: argv after "--" is the server command; a deadline; JSON out; non-zero on failure.
export function serverCommand(argv) {
  const at = argv.indexOf("--");
  const command = at === -1 ? [] : argv.slice(at + 1);
  if (command.length === 0) {
    console.error("usage: node <script>.mjs [options] -- SERVER_COMMAND [ARGS...]");
    process.exit(2);
  }
  return { command: command[0], args: command.slice(1), options: at === -1 ? argv : argv.slice(0, at) };
}

// `--http URL TASK [ARGS]` instead of `-- SERVER...`: drive `serve --http` at URL (bearer token from
// $MAGNOTIA_MCP_TOKEN, none if unset). TASK: walk (exercise above), progress or cancel (the walks of http.mjs,
// ARGS their JSON arguments), refused (expect the connection to be refused). null when there is no --http.
export function httpTarget(argv) {
  const at = argv.indexOf("--http");
  if (at === -1) return null;
  const [url, task = "walk", args] = argv.slice(at + 1);
  const needsArgs = ["progress", "cancel"].includes(task);
  if (!url || !(needsArgs || ["walk", "refused"].includes(task)) || needsArgs !== (args !== undefined)) {
    console.error("usage: node <script>.mjs [options] --http URL walk|refused|progress ARGS|cancel ARGS");
    process.exit(2);
  }
  return { url: new URL(url), task, args: args && JSON.parse(args), options: argv.slice(0, at) };
}

export async function main(run) {
  const deadline = setTimeout(() => {
    console.error("timed out after 60 s");
    process.exit(3);
  }, 60_000);
  deadline.unref();
  try {
    const summary = await run();
    process.stdout.write(JSON.stringify(summary) + "\n");
    process.exitCode = 0;
  } catch (error) {
    console.error(`FAILED: ${error?.constructor?.name ?? "Error"} ${error?.code ?? ""} ${error?.stack ?? error}`);
    process.exitCode = 1;
  }
}
