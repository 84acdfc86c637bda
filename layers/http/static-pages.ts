import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { HttpResult } from './responses.ts';

/**
 * The web console (`/`) and the API reference (`/docs`) are static files served by one API function, so
 * that the page a user opens locally is the page `cdk deploy` serves (docs/decisions/0043-web-console-and-api-reference.md).
 * In the Lambda bundle the files sit beside `index.mjs` (copied by the function's bundling hook); from the
 * sources they sit in the repository (`web/`, `node_modules/swagger-ui-dist/`).
 */
const here = path.dirname(fileURLToPath(import.meta.url));
const firstExisting = (...candidates: string[]): string =>
  candidates.find((candidate) => existsSync(candidate)) ?? candidates.at(-1)!;

const PAGE_ROOTS = {
  web: () => firstExisting(path.join(here, 'web'), path.resolve(here, '..', '..', 'web')),
  swaggerUi: () =>
    firstExisting(
      path.join(here, 'vendor', 'swagger-ui'),
      path.resolve(here, '..', '..', 'node_modules', 'swagger-ui-dist'),
    ),
};

/** The files of swagger-ui-dist that /docs loads; nothing else of the package is served. */
const SWAGGER_UI_FILES = ['swagger-ui-bundle.js', 'swagger-ui.css'] as const;

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/**
 * Nothing on these pages loads from another origin: the console and the reference work offline and leak
 * no key to a CDN. Images may come from anywhere: a result link redirects to the storage's own origin, and
 * `blob:` shows a picked photo before it is uploaded.
 */
const CONTENT_SECURITY_POLICY =
  "default-src 'self'; img-src * blob: data:; style-src 'self' 'unsafe-inline'; " +
  "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

export interface PageFile {
  root: keyof typeof PAGE_ROOTS;
  file: string;
}

/**
 * Which file a page path names, or null. Only names made of safe characters under a known folder are
 * served, so no path can climb out of it.
 */
export function pageFileFor(requestPath: string): PageFile | null {
  const clean = requestPath.replace(/\/+$/, '') || '/';
  if (clean === '/' || clean === '/console') return { root: 'web', file: 'console/index.html' };
  if (clean === '/docs') return { root: 'web', file: 'docs/index.html' };
  const asset = clean.match(/^\/(console|docs)\/([a-z0-9-]+\.(?:js|css|svg))$/);
  if (asset) return { root: 'web', file: `${asset[1]}/${asset[2]}` };
  const vendor = clean.match(/^\/docs\/vendor\/([a-z0-9.-]+)$/);
  if (vendor && (SWAGGER_UI_FILES as readonly string[]).includes(vendor[1]!))
    return { root: 'swaggerUi', file: vendor[1]! };
  return null;
}

/** The file as a response, or null when it does not exist. */
export async function pageResponse(page: PageFile): Promise<HttpResult | null> {
  const body = await readFile(path.join(PAGE_ROOTS[page.root](), page.file), 'utf8').catch(() => null);
  if (body === null) return null;
  const type = CONTENT_TYPES[path.extname(page.file)] ?? 'application/octet-stream';
  return {
    statusCode: 200,
    headers: {
      'content-type': type,
      // The pages change with the code; vendored files only with a dependency bump.
      'cache-control': page.root === 'swaggerUi' ? 'public, max-age=86400' : 'no-cache',
      'content-security-policy': CONTENT_SECURITY_POLICY,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
    },
    body,
  };
}
