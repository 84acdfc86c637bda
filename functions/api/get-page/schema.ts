/**
 * The contract of the web console and the API reference: static pages outside `/api/v1`, public like the
 * spec, and not in the OpenAPI document (they are no part of the API). route-table.ts makes their routes
 * from it.
 */
export const contract = {
  auth: 'none',
  operations: {
    'GET /': {},
    'GET /docs': {},
    'GET /console/{file}': {},
    'GET /docs/{file}': {},
    'GET /docs/vendor/{file}': {},
  },
  pathParameters: {},
} as const;
