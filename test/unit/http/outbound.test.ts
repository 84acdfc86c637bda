import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PayloadTooLargeError, SourceImageError } from '#core/errors.ts';
import {
  type Connector,
  connectVetted,
  fetchOutbound,
  OutboundError,
  type OutboundTarget,
  type Resolver,
  requestOutbound,
} from '#http/outbound.ts';
import { httpWebhookSender } from '#http/webhook-sender.ts';

/**
 * A connect spy that records every connection the client asks for and opens only loopback ones, through the
 * real connector: whatever the client does wrong, no packet leaves this machine.
 */
function loopbackOnly() {
  const targets: OutboundTarget[] = [];
  const sockets: net.Socket[] = [];
  const connect: Connector = (target) => {
    targets.push(target);
    const outside = target.addresses.find(({ address }) => address !== '127.0.0.1' && address !== '::1');
    if (outside) throw new Error(`the test refused a connection to ${outside.address}`);
    const socket = connectVetted(target) as net.Socket;
    sockets.push(socket);
    return socket;
  };
  return {
    connect,
    targets,
    addresses: () => targets.flatMap((target) => target.addresses.map(({ address }) => address)),
    /** The addresses Node's Happy Eyeballs tried, in order (recorded only when there was more than one). */
    attempts: () => sockets.flatMap((socket) => socket.autoSelectFamilyAttemptedAddresses ?? []),
  };
}

/** A resolver from a table; names not in it fail as NXDOMAIN would. */
function resolverOf(table: Record<string, string[] | (() => string[])>) {
  const asked: string[] = [];
  const resolve: Resolver = async (host) => {
    asked.push(host);
    const entry = table[host] ?? (net.isIP(host) ? [host] : undefined);
    if (!entry) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return (typeof entry === 'function' ? entry() : entry).map((address) => ({
      address,
      family: net.isIP(address),
    }));
  };
  return { resolve, asked };
}

let server: http.Server;
let origin: string;
let port: number;
const received: Array<{ method?: string; url?: string; headers: http.IncomingHttpHeaders; body: string }> =
  [];
const hanging = new Set<http.ServerResponse>();

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({
        method: req.method,
        url: req.url,
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      });
      const redirect = (location: string) => {
        res.writeHead(302, { location });
        res.end();
      };
      switch (req.url) {
        case '/x.jpg':
          res.writeHead(200, { 'content-type': 'image/jpeg' });
          res.end(Buffer.alloc(100, 1));
          return;
        case '/big':
          res.writeHead(200, { 'content-length': '5000' });
          res.end(Buffer.alloc(5000));
          return;
        case '/big-chunked':
          res.writeHead(200);
          res.write(Buffer.alloc(3000));
          res.end(Buffer.alloc(3000));
          return;
        case '/to-private':
          return redirect('http://10.0.0.1/x.jpg');
        case '/to-metadata':
          return redirect('http://169.254.169.254/latest/meta-data');
        case '/to-metadata-v6':
          return redirect('http://[::ffff:169.254.169.254]/latest/meta-data');
        case '/chain':
          return redirect('/to-metadata');
        case '/to-loopback-name':
          return redirect(`http://loopback.test:${port}/x.jpg`);
        case '/to-file':
          return redirect('file:///etc/passwd');
        case '/loop':
          return redirect('/loop');
        case '/silent':
          hanging.add(res);
          return;
        default:
          res.writeHead(204);
          res.end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  origin = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  for (const res of hanging) res.destroy();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const get = (url: string, extra: Partial<Parameters<typeof fetchOutbound>[1]> = {}) =>
  fetchOutbound(url, { allowLoopback: true, timeoutMs: 2_000, maxBytes: 1_000_000, ...extra });

describe('fetchOutbound (source images)', () => {
  it('downloads from loopback only with the explicit opt-in', async () => {
    const spy = loopbackOnly();
    const fetched = await get(`${origin}/x.jpg`, { connect: spy.connect });
    expect(fetched.bytes).toHaveLength(100);
    expect(fetched.contentType).toBe('image/jpeg');
    expect(spy.addresses()).toEqual(['127.0.0.1']);
  });

  it.each([
    ['127.0.0.1', (p: number) => `http://127.0.0.1:${p}/x.jpg`],
    ['::1', (p: number) => `http://[::1]:${p}/x.jpg`],
    ['a name that resolves to loopback', (p: number) => `http://loopback.test:${p}/x.jpg`],
  ])('refuses %s without the opt-in, before connecting', async (_name, url) => {
    const spy = loopbackOnly();
    const dns = resolverOf({ 'loopback.test': ['127.0.0.1'] });
    await expect(
      get(url(port), { allowLoopback: false, connect: spy.connect, resolve: dns.resolve }),
    ).rejects.toThrow(/not allowed/);
    expect(spy.targets).toEqual([]);
  });

  it.each([
    ['10.0.0.1', '/to-private', '10.0.0.1'],
    ['169.254.169.254 (metadata)', '/to-metadata', '169.254.169.254'],
    ['169.254.169.254 as an IPv4-mapped IPv6 address', '/to-metadata-v6', '::ffff:a9fe:a9fe'],
    ['the metadata address two hops away', '/chain', '169.254.169.254'],
  ])('refuses a redirect to %s without ever connecting there', async (_name, path, host) => {
    const spy = loopbackOnly();
    const dns = resolverOf({});
    const error = await get(`${origin}${path}`, { connect: spy.connect, resolve: dns.resolve }).catch(
      (e) => e,
    );
    expect(error).toBeInstanceOf(SourceImageError);
    expect(error.message).toMatch(/not allowed/);
    // Every connection went to the loopback server; the refused host was only resolved (a literal needs no DNS).
    expect(new Set(spy.addresses())).toEqual(new Set(['127.0.0.1']));
    expect(dns.asked.at(-1)).toBe(host);
  });

  it('refuses a name when any of its addresses is private, before connecting', async () => {
    const spy = loopbackOnly();
    const dns = resolverOf({ 'mixed.test': ['93.184.216.34', '10.1.2.3'], 'inside.test': ['192.168.1.10'] });
    for (const url of ['http://mixed.test/x.jpg', 'http://inside.test/x.jpg']) {
      await expect(get(url, { connect: spy.connect, resolve: dns.resolve })).rejects.toThrow(/not allowed/);
    }
    expect(spy.targets).toEqual([]);
  });

  it('pins the connection to the address it vetted, so a changed DNS answer is never used (rebinding)', async () => {
    const spy = loopbackOnly();
    let answers = 0;
    const dns = resolverOf({ 'rebind.test': () => (answers++ === 0 ? ['127.0.0.1'] : ['10.0.0.1']) });
    const before = received.length;
    await get(`http://rebind.test:${port}/x.jpg`, { connect: spy.connect, resolve: dns.resolve });
    expect(dns.asked).toEqual(['rebind.test']);
    expect(spy.targets).toEqual([
      { addresses: [{ address: '127.0.0.1', family: 4 }], port, tls: false, servername: 'rebind.test' },
    ]);
    expect(received.slice(before).map((r) => r.headers.host)).toEqual([`rebind.test:${port}`]);
  });

  it('vets every hop of a redirect again', async () => {
    const spy = loopbackOnly();
    const dns = resolverOf({ 'loopback.test': ['127.0.0.1'] });
    await expect(
      get(`${origin}/to-loopback-name`, { connect: spy.connect, resolve: dns.resolve }),
    ).resolves.toMatchObject({ finalUrl: `http://loopback.test:${port}/x.jpg` });
    expect(dns.asked).toEqual(['127.0.0.1', 'loopback.test']);
  });

  it.each(['ftp://example.com/x.jpg', 'file:///etc/passwd', 'gopher://example.com/'])(
    'allows only http and https: %s',
    async (url) => {
      const spy = loopbackOnly();
      const dns = resolverOf({});
      await expect(get(url, { connect: spy.connect, resolve: dns.resolve })).rejects.toThrow(
        /Only http and https/,
      );
      expect(dns.asked).toEqual([]);
      expect(spy.targets).toEqual([]);
    },
  );

  it('refuses a redirect to another scheme and endless redirects', async () => {
    const spy = loopbackOnly();
    await expect(get(`${origin}/to-file`, { connect: spy.connect })).rejects.toThrow(/Only http and https/);
    await expect(get(`${origin}/loop`, { connect: spy.connect })).rejects.toThrow(/Too many redirects/);
  });

  it('caps the size, declared or streamed', async () => {
    const spy = loopbackOnly();
    for (const path of ['/big', '/big-chunked']) {
      await expect(get(`${origin}${path}`, { connect: spy.connect, maxBytes: 4000 })).rejects.toBeInstanceOf(
        PayloadTooLargeError,
      );
    }
  });

  it('caps the time of the whole exchange', async () => {
    const spy = loopbackOnly();
    const started = Date.now();
    await expect(get(`${origin}/silent`, { connect: spy.connect, timeoutMs: 300 })).rejects.toThrow(
      /No answer within/,
    );
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});

describe('requestOutbound for webhooks', () => {
  it('POSTs the headers and body, and returns a redirect instead of following it', async () => {
    const spy = loopbackOnly();
    const before = received.length;
    const response = await requestOutbound(`${origin}/to-private`, {
      allowLoopback: true,
      connect: spy.connect,
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-job': 'job_1' },
      body: '{"a":1}',
      timeoutMs: 2_000,
      maxBytes: 0,
      maxRedirects: 0,
    });
    expect(response.status).toBe(302);
    expect(spy.addresses()).toEqual(['127.0.0.1']);
    expect(received.slice(before)).toEqual([
      expect.objectContaining({
        method: 'POST',
        body: '{"a":1}',
        headers: expect.objectContaining({ 'x-service-job': 'job_1', 'content-length': '7' }),
      }),
    ]);
  });

  it('reports a redirect, a timeout and a refused address as failed attempts, never throwing', async () => {
    const spy = loopbackOnly();
    const sender = httpWebhookSender({ allowLoopback: true, timeoutMs: 300, connect: spy.connect });
    expect(await sender.post(`${origin}/ok`, {}, '{}')).toMatchObject({ statusCode: 204, error: null });
    expect(await sender.post(`${origin}/to-metadata`, {}, '{}')).toMatchObject({
      statusCode: 302,
      error: expect.stringMatching(/redirects are not followed/),
    });
    expect(await sender.post(`${origin}/silent`, {}, '{}')).toMatchObject({
      statusCode: null,
      error: expect.stringMatching(/No answer within 300 ms/),
    });
    const strict = httpWebhookSender({ allowLoopback: false, timeoutMs: 300, connect: spy.connect });
    expect(await strict.post(`${origin}/ok`, {}, '{}')).toMatchObject({
      statusCode: null,
      error: expect.stringMatching(/not allowed/),
    });
    expect(new Set(spy.addresses())).toEqual(new Set(['127.0.0.1']));
    expect(spy.targets).toHaveLength(3);
  });

  it('delivers to a host whose AAAA record comes first and cannot connect, over its A record', async () => {
    // The server listens on 127.0.0.1 only, so ::1 refuses at its port (or, without IPv6, cannot be reached).
    const spy = loopbackOnly();
    const dns = resolverOf({ 'dual.test': ['::1', '127.0.0.1'] });
    const sender = httpWebhookSender({
      allowLoopback: true,
      timeoutMs: 2_000,
      connect: spy.connect,
      resolve: dns.resolve,
    });
    const before = received.length;
    expect(await sender.post(`http://dual.test:${port}/ok`, {}, '{}')).toMatchObject({
      statusCode: 204,
      error: null,
    });
    expect(received.slice(before).map((r) => r.headers.host)).toEqual([`dual.test:${port}`]);
    expect(dns.asked).toEqual(['dual.test']);
    expect(spy.attempts()).toEqual([`::1:${port}`, `127.0.0.1:${port}`]);
  });

  it('names each address tried when none of them connects', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const nobody = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const spy = loopbackOnly();
    const sender = httpWebhookSender({
      allowLoopback: true,
      timeoutMs: 2_000,
      connect: spy.connect,
      resolve: resolverOf({ 'dual.test': ['::1', '127.0.0.1'] }).resolve,
    });
    expect(await sender.post(`http://dual.test:${nobody}/ok`, {}, '{}')).toMatchObject({
      statusCode: null,
      // ::1's code depends on the machine: ECONNREFUSED with IPv6, EADDRNOTAVAIL or the like without.
      error: expect.stringMatching(/^The connection failed \(::1 E[A-Z]+, 127\.0\.0\.1 ECONNREFUSED\)$/),
    });
    expect(spy.attempts()).toEqual([`::1:${nobody}`, `127.0.0.1:${nobody}`]);
  });

  it('names the failure', async () => {
    const error = await requestOutbound('http://nowhere.test/', {
      allowLoopback: false,
      resolve: resolverOf({}).resolve,
      timeoutMs: 500,
      maxBytes: 0,
      maxRedirects: 0,
    }).catch((e) => e);
    expect(error).toBeInstanceOf(OutboundError);
    expect(error.reason).toBe('unresolvable');
  });
});
