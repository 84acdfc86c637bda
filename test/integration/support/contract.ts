import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { buildOpenApiDocument } from '../../../functions/api/openapi.ts';

// biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document is walked as untyped JSON.
type Json = Record<string, any>;

const document = buildOpenApiDocument() as Json;
const ajv = new Ajv2020({ allErrors: true, strict: false });
addFormats.default(ajv);
ajv.addSchema({ $id: 'openapi', components: document.components }, 'openapi');

const templates = Object.keys(document.paths).map((template) => ({
  template,
  pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
}));

/** The schema of the response the document promises for this request and status, if it promises a body. */
function documentedSchema(method: string, route: string, status: number): Json | undefined {
  const path = new URL(route, 'http://x').pathname;
  const match = templates.find(({ pattern }) => pattern.test(path));
  if (!match) throw new Error(`${method} ${path} is not in the OpenAPI document`);
  const operation = document.paths[match.template][method.toLowerCase()];
  if (!operation) throw new Error(`${method} ${match.template} is not in the OpenAPI document`);
  let response: Json | undefined = operation.responses[String(status)];
  if (!response) {
    throw new Error(
      `${method} ${match.template} answered ${status}, a status its OpenAPI entry does not list`,
    );
  }
  if (response.$ref) response = document.components.responses[response.$ref.split('/').pop()];
  return response?.content?.['application/json']?.schema;
}

/**
 * Check a real JSON answer against the schema the OpenAPI document gives for its route and status, so
 * the document cannot drift from what the handlers send. Every response read through `api()` passes here.
 */
export function expectDocumented(method: string, route: string, status: number, body: unknown): void {
  const schema = documentedSchema(method, route, status);
  if (!schema) return;
  const ref = schema.$ref ? `openapi${schema.$ref}` : undefined;
  // An inline schema (an anyOf of components) names components relative to the document.
  const inline = () =>
    ajv.compile(JSON.parse(JSON.stringify(schema).replaceAll('"$ref":"#/', '"$ref":"openapi#/')));
  const validate = ref ? ajv.getSchema(ref) : inline();
  if (!validate) throw new Error(`Cannot resolve ${schema.$ref} in the OpenAPI document`);
  if (!validate(body)) {
    throw new Error(
      `${method} ${route} answered ${status} with a body that does not match its OpenAPI schema ` +
        `${schema.$ref ?? ''}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 2000)}`,
    );
  }
}
