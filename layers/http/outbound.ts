import { lookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { PayloadTooLargeError, SourceImageError } from '#core/errors.ts';
import { isAllowedTarget } from '#core/net/address-policy.ts';

export interface OutboundOptions {
  allowLoopback: boolean;
  timeoutMs: number;
  maxBytes: number;
  maxRedirects?: number;
}

export interface FetchedBody {
  bytes: Buffer;
  contentType: string | null;
  finalUrl: string;
}

/**
 * GET a caller-supplied URL without letting the caller reach our own network: every hop's host is
 * resolved once, every resolved address must be public, and the connection is pinned to the vetted
 * address so that a DNS answer cannot change between the check and the connect (rebinding).
 */
export async function fetchOutbound(rawUrl: string, options: OutboundOptions): Promise<FetchedBody> {
  let url = new URL(rawUrl);
  const deadline = Date.now() + options.timeoutMs;
  for (let hop = 0; hop <= (options.maxRedirects ?? 3); hop++) {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new SourceImageError(`Only http and https URLs can be fetched, not ${url.protocol}`);
    }
    const address = await vetHost(url.hostname, options);
    const response = await get(url, address, options, deadline);
    if (response.redirect) {
      url = new URL(response.redirect, url);
      continue;
    }
    return { bytes: response.bytes!, contentType: response.contentType, finalUrl: url.toString() };
  }
  throw new SourceImageError('The image URL redirected too many times');
}

async function vetHost(
  hostname: string,
  options: OutboundOptions,
): Promise<{ address: string; family: number }> {
  const host = hostname.replace(/^\[|\]$/g, '');
  let addresses: Array<{ address: string; family: number }>;
  try {
    addresses = await lookup(host, { all: true, verbatim: true });
  } catch (cause) {
    throw new SourceImageError(`The image host ${host} could not be resolved`, { cause });
  }
  if (addresses.length === 0 || !addresses.every((entry) => isAllowedTarget(entry.address, options))) {
    throw new SourceImageError(`The image URL points to an address that is not allowed: ${host}`);
  }
  return addresses[0]!;
}

function get(
  url: URL,
  pinned: { address: string; family: number },
  options: OutboundOptions,
  deadline: number,
): Promise<{ redirect?: string; bytes?: Buffer; contentType: string | null }> {
  const pinnedLookup: LookupFunction = (_host, lookupOptions, callback) => {
    if (lookupOptions.all) callback(null, [pinned]);
    else callback(null, pinned.address, pinned.family);
  };
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const request = client.get(
      url,
      { lookup: pinnedLookup, timeout: Math.max(1, deadline - Date.now()) },
      (res) => {
        const status = res.statusCode ?? 0;
        if (status >= 300 && status < 400 && res.headers.location) {
          res.resume();
          resolve({ redirect: res.headers.location, contentType: null });
          return;
        }
        if (status < 200 || status >= 300) {
          res.resume();
          reject(new SourceImageError(`The image URL answered HTTP ${status}`));
          return;
        }
        const declared = Number(res.headers['content-length'] ?? 0);
        if (declared > options.maxBytes) {
          res.destroy();
          reject(new PayloadTooLargeError(`The image at the URL is larger than ${options.maxBytes} bytes`));
          return;
        }
        const chunks: Buffer[] = [];
        let received = 0;
        res.on('data', (chunk: Buffer) => {
          received += chunk.length;
          if (received > options.maxBytes) {
            res.destroy();
            reject(new PayloadTooLargeError(`The image at the URL is larger than ${options.maxBytes} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () =>
          resolve({ bytes: Buffer.concat(chunks), contentType: res.headers['content-type'] ?? null }),
        );
        res.on('error', (cause) =>
          reject(new SourceImageError('The image download was interrupted', { cause })),
        );
      },
    );
    request.on('timeout', () => request.destroy(new SourceImageError('The image download timed out')));
    request.on('error', (cause) =>
      reject(
        cause instanceof SourceImageError
          ? cause
          : new SourceImageError('The image could not be downloaded', { cause }),
      ),
    );
  });
}
