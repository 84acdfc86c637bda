/** `npm run openapi`: write docs/openapi.json from the zod schemas; the unit test fails while it is stale. */
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { serializeOpenApi } from '#http/openapi/generator.ts';
import { buildOpenApiDocument } from '../functions/api/openapi.ts';

const target = fileURLToPath(new URL('../docs/openapi.json', import.meta.url));
await writeFile(target, serializeOpenApi(buildOpenApiDocument()));
console.log(`wrote ${target}`);
