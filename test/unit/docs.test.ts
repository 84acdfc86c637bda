import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfig, TUNABLE_SETTINGS } from '#config';
import { API_PREFIX } from '#core/jobs/envelope.ts';
import { OPERATION_NAMES } from '#core/jobs/operations.ts';
import { formatBytes } from '#core/units.ts';
import { SERVICE_MODELS } from '#models/fetch.ts';
import { MODELS, type ModelId, type ModelManifest } from '#models/manifest.ts';
import { pageRoutes, routes } from '../../lib/config.ts';

/**
 * The README is a newcomer's first map: a route or a setting that exists in the code but not there is one
 * they cannot find. These tests read the code's own lists (the route table, the environment it reads) and
 * name what the README leaves out.
 */
const REPO = path.resolve(import.meta.dirname, '..', '..');
const read = (file: string) => readFileSync(path.join(REPO, file), 'utf8');
const readme = read('README.md');

/** The rooms whose code runs (the test suites' own switches are CONTRIBUTING.md's business). */
const CODE_ROOMS = ['bin', 'lib', 'local', 'layers', 'functions', 'models', 'client', 'tools', 'web'];

const codeFiles = execFileSync('git', ['ls-files', ...CODE_ROOMS], { cwd: REPO, encoding: 'utf8' })
  .split('\n')
  .filter((file) => /\.(ts|mjs|js)$/.test(file));

/** Every variable name the code reads from the environment. */
function environmentRead(): Set<string> {
  const names = new Set<string>();
  for (const file of codeFiles) {
    const text = read(file);
    for (const match of text.matchAll(/process\.env\.([A-Z][A-Z0-9_]*)/g)) names.add(match[1]!);
    for (const match of text.matchAll(/process\.env\[['"]([A-Z][A-Z0-9_]*)['"]\]/g)) names.add(match[1]!);
    // bin/local.ts reads `<PREFIX>_<NAME>` for each rate limit: the prefixes it passes and the names it reads.
    const prefixes = [...text.matchAll(/rateFromEnv\('([A-Z_]+)'/g)].map((match) => match[1]!);
    const suffixes = [...text.matchAll(/read\('([A-Z_]+)'/g)].map((match) => match[1]!);
    for (const prefix of prefixes) for (const suffix of suffixes) names.add(`${prefix}_${suffix}`);
  }
  // layers/config.ts parses the whole of process.env with one schema: its keys are what the functions read.
  const config = read('layers/config.ts');
  const schema = config.slice(
    config.indexOf('function buildConfigSchema'),
    config.indexOf('export type Config'),
  );
  for (const match of schema.matchAll(/^ {4}([A-Z][A-Z0-9_]*):/gm)) names.add(match[1]!);
  return names;
}

describe('README.md', () => {
  it('names every route of the route table as `METHOD /path` (without the /api/v1 prefix)', () => {
    const missing = routes
      .map((route) => `${route.method} ${route.path.slice(API_PREFIX.length)}`)
      .filter((route) => !readme.includes(`\`${route}\``));
    expect(routes.length).toBeGreaterThan(20);
    expect(missing, 'add these routes to the route table in README.md').toEqual([]);
  });

  it('names every page route (the console and the API reference)', () => {
    const missing = pageRoutes
      .map((route) => `${route.method} ${route.path}`)
      .filter((route) => !readme.includes(`\`${route}\``));
    expect(missing, 'add these page routes to README.md').toEqual([]);
  });

  it('names every environment variable the code reads', () => {
    const names = environmentRead();
    // The scan must find the well-known ones, or it finds nothing and passes for the wrong reason.
    expect([...names]).toEqual(
      expect.arrayContaining([
        'PORT',
        'DATA_DIR',
        'TABLE_NAME',
        'RATE_LIMIT_GUEST_BURST',
        'BATCH_CONCURRENCY',
      ]),
    );
    const missing = [...names].filter((name) => !readme.includes(`\`${name}\``)).sort();
    expect(missing, 'document these variables in the Configuration section of README.md').toEqual([]);
  });

  it("states each tunable's default as the configuration has it", () => {
    const defaults = parseConfig({});
    // A row may name several settings, with their defaults in the same order: `| \`A\`, \`B\` | 100, 200 |`.
    const stated = (name: string) => {
      const cells = readme
        .split('\n')
        .find((line) => line.startsWith('| `') && line.split('|')[1]!.includes(`\`${name}\``))
        ?.split('|');
      if (!cells) return undefined;
      const names = cells[1]!.split(',').map((cell) => cell.trim());
      const values = cells[2]!.split(', ').map((cell) => cell.trim());
      return values.length === names.length ? values[names.indexOf(`\`${name}\``)] : values[0];
    };
    // A default is a size, a number or a word; the README may say more after it ("0 (every CPU …)").
    const asWritten = (value: unknown) =>
      typeof value === 'number' && value >= 1024 * 1024 ? formatBytes(value) : String(value);
    const drifted = TUNABLE_SETTINGS.filter((name) => {
      const text = (stated(name) ?? '').replaceAll('`', '');
      return !text.startsWith(asWritten(defaults[name]));
    }).map((name) => `${name}: README says "${stated(name)}", the code ${asWritten(defaults[name])}`);
    expect(drifted).toEqual([]);
  });

  it('lists every operation among the modes of POST /jobs', () => {
    const row = readme.split('\n').find((line) => line.startsWith('| `POST /jobs` |')) ?? '';
    expect(OPERATION_NAMES.filter((operation) => !row.includes(`\`${operation}\``))).toEqual([]);
  });

  it('says how much the first start downloads and how large the model cache grows, as the manifest has it', () => {
    const mb = (bytes: number) => (bytes / 1e6).toFixed(bytes < 1e8 ? 1 : 0);
    const entry = (id: ModelId): ModelManifest => MODELS[id];
    // What the cache holds: each model the service runs, and each file it is derived from.
    const inCache = new Set<ModelId>();
    for (const id of SERVICE_MODELS) {
      for (let at: ModelId | undefined = id; at && !inCache.has(at); at = entry(at).derivedFrom as ModelId)
        inCache.add(at);
    }
    const bytesOf = (ids: ModelId[]) => ids.reduce((sum, id) => sum + (entry(id).bytes ?? 0), 0);
    const downloaded = [...inCache].filter((id) => entry(id).url);
    const flat = readme.replaceAll('\n', ' ');
    expect(flat).toContain(`It downloads ${mb(bytesOf(downloaded))} MB`);
    expect(flat).toContain(`\`.cache/models\` ends at about ${mb(bytesOf([...inCache]))} MB`);
  });

  it('links the documents a newcomer needs', () => {
    for (const doc of [
      'CONTRIBUTING.md',
      'docs/architecture.md',
      'docs/deploy.md',
      'docs/runbook.md',
      'docs/security.md',
      'docs/quality.md',
      'docs/webhooks.md',
      'docs/decisions/README.md',
    ]) {
      expect(readme, doc).toContain(`](${doc})`);
      expect(() => read(doc), `${doc} exists`).not.toThrow();
    }
  });
});

describe('docs/runbook.md', () => {
  it('says what to do for every alarm the construct creates', () => {
    const monitoring = read('lib/constructs/monitoring.ts');
    const alarms = [...monitoring.matchAll(/\balarm\('([A-Za-z0-9]+)'/g)].map((match) => match[1]!);
    expect(alarms.length).toBeGreaterThan(5);
    const runbook = read('docs/runbook.md');
    expect(alarms.filter((alarm) => !runbook.includes(`| \`${alarm}\` |`))).toEqual([]);
  });
});

describe('docs/decisions/', () => {
  const dir = 'docs/decisions';
  const records = readdirSync(path.join(REPO, dir)).filter((file) => /^\d{4}-[a-z0-9-]+\.md$/.test(file));
  const index = read(`${dir}/README.md`);

  it('keeps one short record per decision, each numbered once and listed in the index', () => {
    expect(records.length).toBeGreaterThan(40);
    const numbers = records.map((file) => file.slice(0, 4));
    expect(new Set(numbers).size, 'two records share a number').toBe(numbers.length);
    const long = records.filter((file) => read(`${dir}/${file}`).trimEnd().split('\n').length >= 40);
    expect(long, 'a record states what holds now in under 40 lines').toEqual([]);
    expect(records.filter((file) => !index.includes(`](${file})`))).toEqual([]);
  });
});

describe('docs/quality.md', () => {
  it('is read in one sitting: under 300 lines, each figure with the command that produces it', () => {
    const quality = read('docs/quality.md');
    expect(quality.trimEnd().split('\n').length).toBeLessThan(300);
    expect(quality).toContain('npm run eval');
    expect(quality).toContain('npm run bench');
  });
});

describe('relative links', () => {
  const documents = execFileSync('git', ['ls-files', '*.md'], { cwd: REPO, encoding: 'utf8' })
    .split('\n')
    .filter((file) => file && !file.startsWith('node_modules/'));

  it('point at files that exist', () => {
    const broken: string[] = [];
    for (const file of documents) {
      if (!existsSync(path.join(REPO, file))) continue;
      for (const match of read(file).matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = match[1]!.split('#')[0]!;
        if (!target || /^[a-z]+:/i.test(target)) continue;
        if (!existsSync(path.resolve(REPO, path.dirname(file), target))) broken.push(`${file}: ${match[1]}`);
      }
    }
    expect(documents).toContain('docs/decisions/README.md');
    expect(broken).toEqual([]);
  });
});
