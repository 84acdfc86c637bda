/**
 * The response headers the service sets that a browser on another origin must be allowed to read (CORS
 * `Access-Control-Expose-Headers`; the CORS-safelisted ones need not be named): when to retry a 429, and
 * where a result redirects.
 */
export const EXPOSED_RESPONSE_HEADERS = ['retry-after', 'location'] as const;
