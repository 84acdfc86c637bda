/**
 * What the suite asserts, before and after a change: `npx vitest list --json=<file>` on each tree, then
 * `node --import tsx test/support/coverage-diff.ts <before.json> <after.json>` prints, per file, the test
 * names that went and those that came (test/COVERAGE.md is its output for issue 31, with each name that
 * went mapped to its new home).
 */
import { readFileSync } from 'node:fs';

interface Listed {
  name: string;
  file: string;
}

const [beforeFile, afterFile] = process.argv.slice(2);
if (!beforeFile || !afterFile) {
  console.error('usage: coverage-diff.ts <before.json> <after.json>');
  process.exit(2);
}

/** Files as paths from their repository root (`test/...`), whichever checkout listed them. */
const read = (file: string): Listed[] =>
  (JSON.parse(readFileSync(file, 'utf8')) as Listed[]).map((test) => ({
    name: test.name,
    file: test.file.slice(test.file.lastIndexOf('/test/') + 1),
  }));
const before = read(beforeFile);
const after = read(afterFile);
const key = (test: Listed) => `${test.file}\0${test.name}`;
const keysOf = (tests: Listed[]) => new Set(tests.map(key));

function byFile(tests: Listed[]): Map<string, string[]> {
  const files = new Map<string, string[]>();
  for (const test of tests) files.set(test.file, [...(files.get(test.file) ?? []), test.name]);
  return files;
}

const beforeKeys = keysOf(before);
const afterKeys = keysOf(after);
const went = byFile(before.filter((test) => !afterKeys.has(key(test))));
const came = byFile(after.filter((test) => !beforeKeys.has(key(test))));
console.log(`Tests: ${before.length} before, ${after.length} after.\n`);
for (const file of [...new Set([...went.keys(), ...came.keys()])].sort()) {
  console.log(`### ${file}`);
  for (const name of went.get(file) ?? []) console.log(`- went: ${name}`);
  for (const name of came.get(file) ?? []) console.log(`- came: ${name}`);
  console.log('');
}
