import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The rooms of house-style.md and the one direction their arrows run: functions -> layers/{http,aws,vision}
 * -> layers/core. A failure here names the import and the rule it breaks, so the rule is learned from the
 * check rather than from a review.
 */
const REPO = path.resolve(import.meta.dirname, '..', '..');
const SUBPATHS: Record<string, string> = {
  '#core/': 'layers/core/',
  '#aws/': 'layers/aws/',
  '#vision/': 'layers/vision/',
  '#http/': 'layers/http/',
  '#models/': 'models/',
  '#wiring/': 'functions/wiring/',
  '#tools/': 'tools/',
};

const roomOf = (file: string): string => {
  const [top, second] = file.split('/');
  if (top === 'layers') return second!.endsWith('.ts') ? 'layers/config' : `layers/${second}`;
  return top!;
};

/** What each room may import from other rooms (its own room is always allowed). */
const ALLOWED: Record<string, readonly string[]> = {
  'layers/core': [],
  'layers/config': ['layers/core'],
  'layers/aws': ['layers/core', 'layers/config'],
  'layers/http': ['layers/core', 'layers/config'],
  'layers/vision': ['layers/core', 'layers/config', 'models'],
  models: ['layers/core'],
  // get-openapi serves, as data, the document `npm run openapi` writes (docs/openapi.json).
  functions: ['layers/core', 'layers/config', 'layers/aws', 'layers/http', 'layers/vision', 'models', 'docs'],
  // lib/config.ts makes the route table from the endpoints' own statements (functions/api/endpoints.ts).
  lib: ['layers/core', 'functions'],
  // Offline tools (fitting a head) run the operations' own code on labelled photos; nothing imports them.
  // The cost model (tools/cost/) reads the synthesized app and traces jobs on the embedded stack through the
  // project's client, with an API key made as the CLI makes one.
  tools: ['layers/core', 'layers/config', 'layers/aws', 'layers/vision', 'models', 'lib', 'local', 'client'],
  // The client's types are the server's own schemas, endpoint ones included (type imports only).
  client: ['layers/core', 'layers/http', 'functions'],
  local: [
    'layers/core',
    'layers/config',
    'layers/aws',
    'layers/http',
    'layers/vision',
    'models',
    'functions',
    'lib',
  ],
  // `npm run openapi` writes the document the endpoints' schema.ts files make up (functions/api/openapi.ts).
  bin: [
    'layers/core',
    'layers/config',
    'layers/aws',
    'layers/http',
    'layers/vision',
    'models',
    'functions',
    'lib',
    'local',
    'client',
  ],
};

/**
 * Known exceptions, each with the issue that removes it. Keep this list short; an entry whose import is gone
 * fails the test, so it cannot outlive its reason.
 */
const EXCEPTIONS: ReadonlyArray<{ from: string; to: string; why: string }> = [];

/** Packages the pure domain must not use: it is the part that runs the same everywhere. */
const NOT_IN_CORE = /^(@aws-sdk\/|sharp$|onnxruntime-node$|@middy\/)/;

const sources = execFileSync('git', ['ls-files', '*.ts'], { cwd: REPO, encoding: 'utf8' })
  .split('\n')
  .filter((file) => file && !file.startsWith('test/') && roomOf(file) in ALLOWED);

function resolveImport(from: string, specifier: string): string | null {
  for (const [prefix, dir] of Object.entries(SUBPATHS)) {
    if (specifier.startsWith(prefix)) return dir + specifier.slice(prefix.length);
  }
  if (specifier === '#config') return 'layers/config.ts';
  if (specifier.startsWith('.'))
    return path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier));
  return null;
}

const imports = new Map(
  sources.map((file) => {
    const text = readFileSync(path.join(REPO, file), 'utf8');
    const { importedFiles } = ts.preProcessFile(text, true, true);
    return [file, { text, specifiers: importedFiles.map((entry) => entry.fileName) }] as const;
  }),
);

describe('architecture', () => {
  it('imports across rooms only in the allowed direction', () => {
    const broken: string[] = [];
    const usedExceptions = new Set<string>();
    for (const [file, { specifiers }] of imports) {
      for (const specifier of specifiers) {
        const target = resolveImport(file, specifier);
        if (!target || target.startsWith('test/')) continue;
        const [from, to] = [roomOf(file), roomOf(target)];
        if (from === to || ALLOWED[from]!.includes(to)) continue;
        const exception = EXCEPTIONS.find((entry) => entry.from === file && entry.to === to);
        if (exception) {
          usedExceptions.add(`${exception.from} -> ${exception.to}`);
          continue;
        }
        broken.push(
          `${file} imports ${specifier}: ${from} may import only ${[from, ...ALLOWED[from]!].join(', ')}`,
        );
      }
    }
    expect(broken).toEqual([]);
    expect(
      EXCEPTIONS.map((entry) => `${entry.from} -> ${entry.to}`).filter((key) => !usedExceptions.has(key)),
    ).toEqual([]);
  });

  it('lets lib/ read of functions/ only the route table, made from the schema.ts files that state the routes', () => {
    const reads: string[] = [];
    for (const [file, { specifiers }] of imports) {
      if (roomOf(file) !== 'lib') continue;
      for (const specifier of specifiers) {
        const target = resolveImport(file, specifier);
        if (target && roomOf(target) === 'functions') reads.push(`${file} -> ${target}`);
      }
    }
    expect(reads).toEqual(['lib/config.ts -> functions/api/route-table.ts']);
  });

  it('has integration tests wait on events with test/support/eventually.ts, never on a fixed sleep', () => {
    const files = execFileSync('git', ['ls-files', 'test/integration'], { cwd: REPO, encoding: 'utf8' })
      .split('\n')
      .filter((file) => file.endsWith('.ts'));
    expect(files.length).toBeGreaterThan(20);
    const sleeps = files.flatMap((file) =>
      readFileSync(path.join(REPO, file), 'utf8')
        .split('\n')
        .flatMap((line, i) =>
          /setTimeout\(|\bsleep\(/.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [],
        ),
    );
    expect(sleeps).toEqual([]);
  });

  it('imports the AGPL-licensed IAM simulator (@cloud-copilot) only from local/: nothing deployed carries it', () => {
    const found: string[] = [];
    for (const [file, { specifiers }] of imports) {
      for (const specifier of specifiers)
        if (specifier.startsWith('@cloud-copilot/') && roomOf(file) !== 'local')
          found.push(`${file} imports ${specifier}`);
    }
    expect(found).toEqual([]);
    // The rooms that are bundled or deployed may not reach local/ at all, so not through it either.
    for (const room of [
      'layers/core',
      'layers/config',
      'layers/aws',
      'layers/http',
      'layers/vision',
      'functions',
      'lib',
      'models',
    ])
      expect(ALLOWED[room], room).not.toContain('local');
    expect(
      [...imports.keys()].filter((file) =>
        imports.get(file)!.specifiers.some((s) => s.startsWith('@cloud-copilot/')),
      ),
    ).toContain('local/iam/authorizer.ts');
  });

  it('keeps the domain pure: no AWS SDK, sharp, onnxruntime or middy, and no process.env in layers/core', () => {
    const impure: string[] = [];
    for (const [file, { text, specifiers }] of imports) {
      if (roomOf(file) !== 'layers/core') continue;
      for (const specifier of specifiers)
        if (NOT_IN_CORE.test(specifier)) impure.push(`${file} imports ${specifier}`);
      if (/\bprocess\.env\b/.test(text))
        impure.push(`${file} reads process.env (config.ts is its only reader)`);
    }
    expect(impure).toEqual([]);
  });

  it('keeps the vision math pure: layers/vision/math imports only #core/ and #vision/math/, no sharp or onnxruntime', () => {
    const impure: string[] = [];
    const math = [...imports].filter(([file]) => file.startsWith('layers/vision/math/'));
    expect(math.length).toBeGreaterThan(0);
    for (const [file, { text, specifiers }] of math) {
      for (const specifier of specifiers) {
        const target = resolveImport(file, specifier);
        const inside = target?.startsWith('layers/vision/math/') || target?.startsWith('layers/core/');
        if (!inside) impure.push(`${file} imports ${specifier}`);
      }
      if (/\bprocess\.env\b/.test(text)) impure.push(`${file} reads process.env`);
    }
    expect(impure).toEqual([]);
  });

  it('has no import circles between files', () => {
    const graph = new Map(
      [...imports].map(([file, { specifiers }]) => [
        file,
        specifiers
          .map((specifier) => resolveImport(file, specifier))
          .filter((target) => target && imports.has(target)),
      ]),
    );
    const circles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const visit = (file: string, trail: string[]) => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'open') {
        circles.push([...trail.slice(trail.indexOf(file)), file].join(' -> '));
        return;
      }
      state.set(file, 'open');
      for (const next of graph.get(file) ?? []) visit(next!, [...trail, file]);
      state.set(file, 'done');
    };
    for (const file of graph.keys()) visit(file, []);
    expect(circles).toEqual([]);
  });
});
