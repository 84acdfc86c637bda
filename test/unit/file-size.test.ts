import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * House rule: no file outside test/ holds more than 400 lines, so that each can be read in one sitting and a
 * file that grows past it is split by what its parts do. Data and prose (JSON, CSV, Markdown, images) do
 * not count.
 */
const REPO = path.resolve(import.meta.dirname, '..', '..');
const MAX_LINES = 400;
const DATA = /\.(json|jsonl|csv|md|png|jpe?g|webp|svg|onnx)$/i;

const linesOf = (file: string) => {
  const text = readFileSync(path.join(REPO, file), 'utf8');
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
};

describe('file size', () => {
  const files = execFileSync('git', ['ls-files', '-z'], { cwd: REPO, encoding: 'utf8' })
    .split('\0')
    .filter((file) => file && !file.startsWith('test/') && !DATA.test(file));
  const over = files.map((file) => ({ file, lines: linesOf(file) })).filter(({ lines }) => lines > MAX_LINES);

  it(`keeps every file outside test/ and data at ${MAX_LINES} lines or fewer`, () => {
    expect(files.length).toBeGreaterThan(100);
    expect(over.map(({ file, lines }) => `${file}: ${lines} lines`)).toEqual([]);
  });
});
