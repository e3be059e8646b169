// Reads JSON lines, each a string, on stdin; writes one JSON line per text: [o200k_base tokens, Claude tokens].
// Each tokenizer is built once (the Claude one as @anthropic-ai/tokenizer's countTokens builds it per call).
import { createInterface } from "node:readline";
import { createRequire } from "node:module";
import { get_encoding } from "tiktoken";

const require = createRequire(import.meta.url);
const { getTokenizer } = require("@anthropic-ai/tokenizer");

const openai = get_encoding("o200k_base");
const claude = getTokenizer();
// One answer line per line read, at once: a test asks one text at a time and waits for its count.
for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
  if (!line.trim()) continue;
  const text = JSON.parse(line);
  // countTokens' own steps: NFKC, then every special token allowed.
  const counts = [openai.encode(text, "all").length, claude.encode(text.normalize("NFKC"), "all").length];
  process.stdout.write(JSON.stringify(counts) + "\n");
}
claude.free();
openai.free();
