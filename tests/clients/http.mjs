// What the Node client scripts need for `serve --http`: a fetch that records every exchange the SDK's
// Streamable HTTP transport makes (so the Python side can validate each server message for its revision and
// see what went over the wire), and the scan walk: progress, then a cancelled call.

// A fetch for the transport's `fetch` option. Every POST body is recorded as "c2s"; every message of a 200
// answer (one JSON object, or each SSE event as it arrives) as "s2c", in arrival order. `exchanges` keeps,
// per HTTP request, what was sent, the status, the content type, and `ended`: a promise settled once the
// answer's body is over, with "server" (the server ended it) or the error that cut it short.
export function recordingFetch() {
  const wire = [];
  const exchanges = [];
  const recorded = async (url, init = {}) => {
    const exchange = { method: init.method ?? "GET", sent: null, status: null, contentType: null, messages: [] };
    exchanges.push(exchange);
    if (typeof init.body === "string") {
      exchange.sent = JSON.parse(init.body);
      wire.push({ dir: "c2s", line: init.body });
    }
    let settle;
    exchange.ended = new Promise((resolve) => (settle = resolve));
    let response;
    try {
      response = await fetch(url, init);
    } catch (error) {
      settle(`fetch failed: ${error?.name}`);
      throw error;
    }
    exchange.status = response.status;
    exchange.contentType = response.headers.get("content-type");
    exchange.sessionId = response.headers.get("mcp-session-id");
    if (response.status !== 200 || !response.body) {
      settle("server");
      return response;
    }
    const sse = (exchange.contentType ?? "").startsWith("text/event-stream");
    const received = (text) => {
      exchange.messages.push(JSON.parse(text));
      wire.push({ dir: "s2c", line: text });
    };
    // Read a copy alongside the SDK; a tee'd body buffers for whichever side is behind.
    const reader = response.clone().body.pipeThrough(new TextDecoderStream()).getReader();
    (async () => {
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        if (!sse) continue;
        let cut;
        while ((cut = buffer.search(/\r?\n\r?\n/)) !== -1) {
          const event = buffer.slice(0, cut);
          buffer = buffer.slice(cut).replace(/^\r?\n\r?\n/, "");
          const data = event
            .split(/\r?\n/)
            .filter((l) => l.startsWith("data:"))
            .map((l) => l.slice(5).replace(/^ /, ""))
            .join("\n");
          if (data) received(data);
        }
      }
      if (!sse && buffer.trim()) received(buffer);
      return "server";
    })().then(settle, (error) => settle(`cut short: ${error?.name ?? error}`));
    return response;
  };
  return { fetch: recorded, wire, exchanges };
}

function errorSummary(error) {
  return {
    name: error?.constructor?.name ?? typeof error,
    code: error?.code ?? null,
    // The HTTP status the SDK reports, if it does: v2's SdkHttpError has .status, v1's StreamableHTTPError .code.
    status: error?.status ?? (typeof error?.code === "number" ? error.code : null),
    message: String(error?.message ?? error),
  };
}

// Connect, expecting to be refused; what the SDK threw and the statuses the server answered with.
export async function refused(connect, recorder) {
  try {
    await connect();
  } catch (error) {
    return {
      refused: errorSummary(error),
      statuses: recorder.exchanges.map((e) => [e.method, e.sent?.method ?? null, e.status]),
    };
  }
  throw new Error("the server accepted the connection");
}

// A search that scans (a store without the full-text index) with an onprogress callback: the SDK asks for
// progress (_meta.progressToken); what it was notified of, and what the call returned.
export async function progressWalk(call, recorder, { query }) {
  const notified = [];
  const done = await call(
    { name: "search_transcripts", arguments: { query, limit: 5 } },
    { onprogress: (p) => notified.push(p) },
  );
  const exchange = recorder.exchanges.find((e) => e.sent?.method === "tools/call");
  return {
    notified,
    hits: (done.structuredContent?.hits ?? []).map((h) => h.transcript_id),
    isError: done.isError ?? false,
    contentType: exchange?.contentType ?? null,
    progressToken: exchange?.sent?.params?._meta?.progressToken ?? null,
  };
}

// One search of `query` (which would scan for a long time), cancelled through its AbortSignal as soon as its
// first progress notification arrives; what the SDK threw and what went over the wire for it.
async function cancelledScan(call, recorder, query, limit) {
  const controller = new AbortController();
  let progressed;
  const firstProgress = new Promise((resolve) => (progressed = resolve));
  let notified = 0;
  const outcome = call(
    { name: "search_transcripts", arguments: { query, limit } },
    { signal: controller.signal, onprogress: () => progressed(++notified) },
  ).then(
    (result) => ({ result }),
    (error) => ({ error }),
  );
  await Promise.race([firstProgress, outcome]);
  controller.abort("the test cancels the scan");
  const { result, error } = await outcome;
  const exchange = recorder.exchanges.find(
    (e) => e.sent?.params?.arguments?.query === query && e.sent.params.arguments.limit === limit,
  );
  const requestId = exchange?.sent?.id;
  // How the answer ended: "server" when the server closed the stream (it does once the call has stopped), or
  // the client's own abort (a 2026-07-28 client cancels by closing the request's stream).
  const ended = exchange ? await exchange.ended : "no exchange";
  const cancels = recorder.exchanges.filter(
    (e) => e.sent?.method === "notifications/cancelled" && e.sent.params?.requestId === requestId,
  );
  for (const c of cancels) await c.ended; // its answer has come
  return {
    result: result ?? null,
    error: error ? errorSummary(error) : null,
    progressBeforeAbort: notified,
    contentType: exchange?.contentType ?? null,
    ended,
    onTheStream: (exchange?.messages ?? []).map((m) => m.method ?? (m.id === requestId ? "response" : "other")),
    cancelledPosts: cancels.map((c) => c.status),
  };
}

// Cancellation, shown by the server's slots: `slots` searches (as many as the server runs at once) are each
// cancelled on their first progress notification; then as many again must each get as far as their first
// progress, which they can only if every call of the first round stopped and gave its slot back (a call left
// running would keep its slot for as long as it scans, past the script's deadline). Last, `quick` (a
// transcript id) is fetched: the server still answers.
export async function cancelWalk(call, recorder, { endless, quick, slots }) {
  const round = (first) =>
    Promise.all(Array.from({ length: slots }, (_, i) => cancelledScan(call, recorder, endless, first + i)));
  const first = await round(1);
  const second = await round(1 + slots);
  const after = await call({ name: "get_transcript", arguments: { id: quick, max_chars: 100 } }, {});
  return { rounds: [first, second], after: after.structuredContent?.title ?? null };
}

// The walks a script runs for `--http URL TASK ARGS` besides exercise().
export const WALKS = { progress: progressWalk, cancel: cancelWalk };
