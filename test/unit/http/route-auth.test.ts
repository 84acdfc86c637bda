import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const apiDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../functions/api');
const endpoints = readdirSync(apiDir, { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && readdirSync(path.join(apiDir, entry.name)).includes('schema.ts'))
  .map((entry) => entry.name);

describe('who may call each route', () => {
  it('finds the endpoints', () => {
    expect(endpoints.length).toBeGreaterThanOrEqual(19);
  });

  // The handler's httpStack enforces `auth`; the schema's route entry documents it (security, 401/403).
  // They are written in two files, so a route opened or closed in one must fail here until the other follows.
  it.each(endpoints)('%s documents the auth its handler enforces', async (endpoint) => {
    const source = readFileSync(path.join(apiDir, endpoint, 'handler.ts'), 'utf8');
    const enforced = [...source.matchAll(/httpStack\(\{[^}]*\bauth: '([a-z-]+)'/g)].map((match) => match[1]);
    expect(enforced).toHaveLength(1);
    const { contract } = (await import(path.join(apiDir, endpoint, 'schema.ts'))) as {
      contract: { operations: Record<string, { auth: string }> };
    };
    const documented = new Set(Object.values(contract.operations).map((operation) => operation.auth));
    expect([...documented]).toEqual(enforced);
  });
});
