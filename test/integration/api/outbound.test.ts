import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { markedPhoto } from '../../support/marker-vision.ts';
import { api, type RunningServer, startServer, WITHOUT_MODELS } from '../support/local-server.ts';

/**
 * Source URLs end to end. Nothing here sends a packet beyond loopback: private and metadata addresses are
 * only ever the Location of a loopback redirect, which the client must refuse before connecting (the unit
 * test of layers/http/outbound.ts proves it never connects there).
 */
async function startImageHost() {
  const photo = await markedPhoto();
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(req.url ?? '');
    const redirect = (location: string) => {
      res.writeHead(302, { location });
      res.end();
    };
    if (req.url === '/x.jpg') {
      res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': photo.length });
      res.end(photo);
    } else if (req.url === '/to-private') redirect('http://10.0.0.1/x.jpg');
    else if (req.url === '/to-metadata') redirect('http://169.254.169.254/latest/meta-data');
    else if (req.url === '/to-private-then-metadata') redirect('/to-metadata');
    else if (req.url === '/to-self') redirect('/x.jpg');
    else {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    hits,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe('outbound safety of source URLs', () => {
  let host: Awaited<ReturnType<typeof startImageHost>>;
  beforeAll(async () => {
    host = await startImageHost();
  });
  afterAll(async () => {
    await host?.close();
  });

  describe('as in AWS (OUTBOUND_ALLOW_LOOPBACK=false)', () => {
    let server: RunningServer;
    beforeAll(async () => {
      // The server inherits this environment: the opt-in must not come from there either.
      expect(process.env.OUTBOUND_ALLOW_LOOPBACK).toBeUndefined();
      server = await startServer({ ...WITHOUT_MODELS, OUTBOUND_ALLOW_LOOPBACK: 'false' });
    });

    it('refuses a loopback webhook_url at creation and as the key setting, naming the setting', async () => {
      const key = await server.createKey(5);
      const hook = 'http://127.0.0.1:8792/hook';
      const created = await api(server, key).postJson('/jobs', {
        mode: 'plate',
        url: `http://127.0.0.1:${host.port}/x.jpg`,
        webhook_url: hook,
      });
      expect(created.status).toBe(400);
      expect(created.body.message).toMatch(/loopback.*OUTBOUND_ALLOW_LOOPBACK=true/);
      const stored = await api(server, key).postJson('/webhook', {
        webhook_url: 'http://localhost:8792/hook',
      });
      expect(stored.status).toBe(400);
      expect(stored.body.message).toMatch(/OUTBOUND_ALLOW_LOOPBACK/);
    });
    afterAll(async () => {
      await server?.stop();
    });

    it.each([
      ['127.0.0.1', (port: number) => `http://127.0.0.1:${port}/x.jpg`],
      ['[::1]', (port: number) => `http://[::1]:${port}/x.jpg`],
      ['localhost', (port: number) => `http://localhost:${port}/x.jpg`],
      ['127.1 (a short form of 127.0.0.1)', (port: number) => `http://127.1:${port}/x.jpg`],
    ])('refuses a url at %s with 400, without fetching it', async (_name, url) => {
      const before = host.hits.length;
      const response = await api(server, server.masterKey).postJson('/jobs', {
        mode: 'plate',
        url: url(host.port),
      });
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({
        result: false,
        code: 400,
        message: expect.stringMatching(/not allowed/),
      });
      expect(host.hits.length).toBe(before);
    });

    it.each(['ftp://example.com/x.jpg', 'file:///etc/passwd'])(
      'refuses the non-http url %s with 400',
      async (url) => {
        const response = await api(server, server.masterKey).postJson('/jobs', { mode: 'plate', url });
        expect(response.status).toBe(400);
      },
    );
  });

  describe('with the loopback opt-in that local tests use', () => {
    let server: RunningServer;
    beforeAll(async () => {
      server = await startServer({ ...WITHOUT_MODELS, OUTBOUND_ALLOW_LOOPBACK: 'true' });
    });
    afterAll(async () => {
      await server?.stop();
    });

    it('fetches from loopback, following a redirect that stays there', async () => {
      const master = api(server, server.masterKey);
      for (const pathname of ['/x.jpg', '/to-self']) {
        const response = await master.postJson('/jobs', {
          mode: 'plate',
          url: `http://127.0.0.1:${host.port}${pathname}`,
        });
        expect(response.status, pathname).toBe(202);
      }
    });

    it.each([
      ['10.0.0.1', '/to-private'],
      ['169.254.169.254 (metadata)', '/to-metadata'],
      ['169.254.169.254 two hops away', '/to-private-then-metadata'],
    ])('refuses a redirect to %s with 400', async (_name, pathname) => {
      const response = await api(server, server.masterKey).postJson('/jobs', {
        mode: 'plate',
        url: `http://127.0.0.1:${host.port}${pathname}`,
      });
      expect(response.status).toBe(400);
      expect(response.body.message).toMatch(/not allowed/);
    });

    it('applies the same rules to assets uploaded from a url', async () => {
      const response = await api(server, server.masterKey).postJson('/assets', {
        url: `http://127.0.0.1:${host.port}/to-metadata`,
      });
      expect(response.status).toBe(400);
    });
  });
});
