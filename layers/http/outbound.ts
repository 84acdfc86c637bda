import { lookup } from 'node:dns/promises';
import http, { type IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import tls from 'node:tls';
import { PayloadTooLargeError, SourceImageError } from '#core/errors.ts';
import { isAllowedTarget } from '#core/net/address-policy.ts';

interface ResolvedAddress {
  address: string;
  family: number;
}

/** Where a vetted request connects: the addresses checked, never a name resolved again. */
export interface OutboundTarget {
  /** Every address the host resolved to, each one allowed, in the resolver's order. */
  addresses: ResolvedAddress[];
  port: number;
  tls: boolean;
  /** The URL's host name, for SNI and certificate checks; absent for an IP literal. */
  servername?: string;
}

export type Resolver = (host: string) => Promise<ResolvedAddress[]>;
export type Connector = (target: OutboundTarget) => Duplex;

export interface OutboundPolicy {
  /** Local tests only (OUTBOUND_ALLOW_LOOPBACK): 127.0.0.0/8 and ::1 become reachable. */
  allowLoopback: boolean;
  /** Name resolution; the system resolver unless a test injects one. */
  resolve?: Resolver;
  /** Opens the connection to a vetted target; plain TCP or TLS unless a test injects a spy. */
  connect?: Connector;
}

export interface OutboundRequest extends OutboundPolicy {
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** For the whole exchange, redirects included: resolve, connect, send, and read the answer. */
  timeoutMs: number;
  /** Largest response body read; 0 reads none (the status is all the caller needs). */
  maxBytes: number;
  /** Redirects followed; with 0 a redirect is returned as the response. */
  maxRedirects: number;
}

export interface OutboundResponse {
  status: number;
  headers: IncomingHttpHeaders;
  bytes: Buffer;
  /** The URL that answered, after redirects. */
  url: string;
}

export type OutboundFailure =
  | 'scheme'
  | 'unresolvable'
  | 'refused'
  | 'redirects'
  | 'timeout'
  | 'too-large'
  | 'network';

/** The request never got an HTTP answer it could use; `reason` says why. Safe to show to the URL's owner. */
export class OutboundError extends Error {
  constructor(
    readonly reason: OutboundFailure,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'OutboundError';
  }
}

const systemResolver: Resolver = (host) => lookup(host, { all: true, verbatim: true });

/**
 * The default connector: Node's Happy Eyeballs (`autoSelectFamily`) over the vetted addresses, IPv6 and IPv4
 * interleaved from the family the resolver answered first, so a host whose AAAA record comes first is still
 * reached from a Lambda without IPv6 egress. Node finds the addresses through a lookup that answers with
 * the vetted list whatever it is asked, so no other address can be reached.
 */
export const connectVetted: Connector = (target) => {
  const socket = {
    // A name makes Node ask the lookup; an IP literal is its own and only address.
    host: target.servername ?? target.addresses[0]!.address,
    port: target.port,
    lookup: pinnedLookup(target.addresses),
    autoSelectFamily: true,
    // Node abandons every attempt but the last after this long (nodejs/node#54359): its 250 ms default drops
    // handshakes that are only slow. An address without a route (no IPv6 egress) fails at once regardless.
    autoSelectFamilyAttemptTimeout: 1_000,
  } satisfies net.TcpNetConnectOpts;
  return target.tls
    ? tls.connect({ ...socket, servername: target.servername, ALPNProtocols: ['http/1.1'] })
    : net.connect(socket);
};

function pinnedLookup(addresses: ResolvedAddress[]): net.LookupFunction {
  // Asynchronous, as dns.lookup is: the socket's listeners are not attached yet when it asks.
  return (_host, options, callback) =>
    process.nextTick(() =>
      options.all ? callback(null, addresses) : callback(null, addresses[0]!.address, addresses[0]!.family),
    );
}

/**
 * The one way the service talks to a URL a caller gave it (source images, webhooks). On every hop the
 * host is resolved once, every address it resolves to must be allowed (public; loopback only with the
 * opt-in), and the connection goes to that vetted address, so neither a redirect nor a DNS answer that
 * changes between check and connect (rebinding) can reach our own network. Only http and https.
 */
export async function requestOutbound(rawUrl: string, request: OutboundRequest): Promise<OutboundResponse> {
  let url = parseUrl(rawUrl);
  const deadline = Date.now() + request.timeoutMs;
  for (let hop = 0; ; hop++) {
    const target = await vet(url, request, deadline);
    const response = await exchange(url, target, request, deadline);
    const location = response.headers.location;
    if (response.status < 300 || response.status >= 400 || !location || request.maxRedirects === 0) {
      return response;
    }
    if (hop >= request.maxRedirects) throw new OutboundError('redirects', 'Too many redirects');
    url = parseUrl(new URL(location, url).toString());
  }
}

function parseUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch (cause) {
    throw new OutboundError('scheme', 'Not a valid URL', { cause });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new OutboundError('scheme', `Only http and https URLs are allowed, not ${url.protocol}`);
  }
  return url;
}

async function vet(url: URL, policy: OutboundPolicy, deadline: number): Promise<OutboundTarget> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: ResolvedAddress[];
  try {
    addresses = await withDeadline((policy.resolve ?? systemResolver)(host), deadline);
  } catch (cause) {
    if (cause instanceof OutboundError) throw cause;
    throw new OutboundError('unresolvable', `The host ${host} could not be resolved`, { cause });
  }
  if (addresses.length === 0 || !addresses.every((entry) => isAllowedTarget(entry.address, policy))) {
    throw new OutboundError('refused', `The URL points to an address that is not allowed: ${host}`);
  }
  const tlsTarget = url.protocol === 'https:';
  return {
    addresses,
    port: Number(url.port || (tlsTarget ? 443 : 80)),
    tls: tlsTarget,
    ...(net.isIP(host) ? {} : { servername: host }),
  };
}

function withDeadline<T>(promise: Promise<T>, deadline: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new OutboundError('timeout', 'Timed out resolving the host')),
      Math.max(1, deadline - Date.now()),
    );
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

function exchange(
  url: URL,
  target: OutboundTarget,
  request: OutboundRequest,
  deadline: number,
): Promise<OutboundResponse> {
  const connect = request.connect ?? connectVetted;
  const body = request.body === undefined ? undefined : Buffer.from(request.body);
  const headers = {
    ...request.headers,
    ...(body ? { 'Content-Length': String(body.length) } : {}),
  };
  return new Promise((resolve, reject) => {
    let done = false;
    let timer: NodeJS.Timeout | undefined;
    // No agent: this request's socket comes from `connect`, to the vetted addresses, and is not pooled.
    // A `connect` that throws surfaces as the request's 'error'.
    const req = (target.tls ? https : http).request(url, {
      method: request.method ?? 'GET',
      headers,
      createConnection: () => connect(target) as never,
    });
    const finish = (error: OutboundError | null, response?: OutboundResponse) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (error) {
        req.destroy();
        reject(error);
      } else resolve(response!);
    };
    timer = setTimeout(
      () => finish(new OutboundError('timeout', `No answer within ${request.timeoutMs} ms`)),
      Math.max(1, deadline - Date.now()),
    );
    req.on('error', (cause) =>
      finish(new OutboundError('network', `The connection failed (${networkCode(cause)})`, { cause })),
    );
    req.on('response', (res) => {
      const answer = { status: res.statusCode ?? 0, headers: res.headers, url: url.toString() };
      const declared = Number(res.headers['content-length'] ?? 0);
      const redirect = answer.status >= 300 && answer.status < 400;
      if (request.maxBytes === 0 || redirect) {
        res.destroy();
        finish(null, { ...answer, bytes: Buffer.alloc(0) });
        return;
      }
      if (declared > request.maxBytes) {
        finish(new OutboundError('too-large', `The answer is larger than ${request.maxBytes} bytes`));
        return;
      }
      const chunks: Buffer[] = [];
      let received = 0;
      res.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (received > request.maxBytes) {
          finish(new OutboundError('too-large', `The answer is larger than ${request.maxBytes} bytes`));
          return;
        }
        chunks.push(chunk);
      });
      res.on('end', () => finish(null, { ...answer, bytes: Buffer.concat(chunks) }));
      res.on('error', (cause) =>
        finish(new OutboundError('network', 'The answer was interrupted', { cause })),
      );
    });
    req.end(body);
  });
}

// Happy Eyeballs fails with one error per address tried; the URL's owner needs each to see which route broke.
const networkCode = (error: unknown): string =>
  error instanceof AggregateError
    ? error.errors.map((each) => `${(each as { address?: unknown }).address} ${errorCode(each)}`).join(', ')
    : errorCode(error);

const errorCode = (error: unknown): string =>
  (error as { code?: unknown }).code ? String((error as { code: unknown }).code) : (error as Error).message;

// ---------------------------------------------------------------- source images

export interface OutboundOptions extends OutboundPolicy {
  timeoutMs: number;
  maxBytes: number;
  maxRedirects?: number;
}

export interface FetchedBody {
  bytes: Buffer;
  contentType: string | null;
  finalUrl: string;
}

/** GET a source image: 2xx only, redirects followed (each hop vetted), errors in the words of spec 7 (400/413). */
export async function fetchOutbound(rawUrl: string, options: OutboundOptions): Promise<FetchedBody> {
  let response: OutboundResponse;
  try {
    response = await requestOutbound(rawUrl, {
      ...options,
      method: 'GET',
      maxRedirects: options.maxRedirects ?? 3,
    });
  } catch (error) {
    if (!(error instanceof OutboundError)) throw error;
    if (error.reason === 'too-large') {
      throw new PayloadTooLargeError(`The image at the URL is larger than ${options.maxBytes} bytes`);
    }
    throw new SourceImageError(`The image could not be downloaded: ${error.message}`, { cause: error });
  }
  if (response.status < 200 || response.status >= 300) {
    throw new SourceImageError(`The image URL answered HTTP ${response.status}`);
  }
  return {
    bytes: response.bytes,
    contentType: (response.headers['content-type'] as string | undefined) ?? null,
    finalUrl: response.url,
  };
}
