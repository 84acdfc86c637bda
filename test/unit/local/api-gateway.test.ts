import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  API_GATEWAY_PAYLOAD_BYTES,
  LAMBDA_INVOKE_PAYLOAD_BYTES,
  MAX_HEADER_BYTES,
  MAX_INLINE_BODY_BYTES,
  MAX_URL_BYTES,
} from '#core/limits/request.ts';
import { createApiServer, type LocalRoute } from '../../../local/api-gateway.ts';
import { readTopology } from '../../../local/template.ts';

let server: http.Server;
let port: number;
const seen: Array<{
  routeKey: string;
  pathParameters?: Record<string, string | undefined>;
  bodyBytes: number;
}> = [];

beforeAll(async () => {
  server = createApiServer([
    {
      routeKey: 'GET /api/v1/jobs/{job_id}',
      invoke: async (event) => {
        seen.push({ routeKey: event.routeKey, pathParameters: event.pathParameters, bodyBytes: 0 });
        return { statusCode: 200, headers: { 'content-type': 'application/json' }, body: '{"ok":true}' };
      },
    },
    {
      routeKey: 'POST /api/v1/jobs',
      invoke: async (event) => {
        const bytes = event.body ? Buffer.from(event.body, event.isBase64Encoded ? 'base64' : 'utf8') : null;
        seen.push({ routeKey: event.routeKey, bodyBytes: bytes?.length ?? 0 });
        // A handler that refuses early, as the batch handler does for an archive it will not open.
        return {
          statusCode: 413,
          body: JSON.stringify({ code: 413, message: 'archive too big', result: false }),
        };
      },
    },
    {
      routeKey: 'GET /api/v1/crash',
      invoke: async () => {
        throw new Error('the function crashed');
      },
    },
    { routeKey: 'GET /api/v1/nonsense', invoke: async () => ({ statusCode: 1234, body: 'x' }) },
    {
      // The response's JSON (body and the envelope around it) just past, or just within, Lambda's 6 MB.
      routeKey: 'GET /api/v1/sized/{size}',
      invoke: async (event) => {
        const envelope = JSON.stringify({ statusCode: 200, body: '' }).length;
        const fill = Number(event.pathParameters?.size) - envelope;
        // A JSON string: its two quotes are escaped in the response's JSON, 4 bytes in all.
        return { statusCode: 200, body: `"${'x'.repeat(fill - 4)}"` };
      },
    },
    {
      // A function still running when API Gateway stops waiting for it (a small limit for the 30 s).
      routeKey: 'GET /api/v1/slow',
      timeoutMs: 50,
      invoke: () => new Promise((resolve) => setTimeout(() => resolve({ statusCode: 200 }), 2_000).unref()),
    },
    {
      routeKey: '$default',
      invoke: async (event) => {
        seen.push({ routeKey: event.routeKey, bodyBytes: event.body?.length ?? 0 });
        return {
          statusCode: 404,
          body: JSON.stringify({ code: 404, message: 'from $default', result: false }),
        };
      },
    },
  ]);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown>;
  /** The connection it travelled on, compared by identity (see hostile-clients.test.ts for why not reusedSocket). */
  socket: net.Socket;
}

function request(
  agent: http.Agent,
  method: string,
  path: string,
  options: { body?: Buffer; headers?: Record<string, string> } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, method, path, agent, headers: options.headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null'),
            socket: req.socket as net.Socket,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

const keepAlive = () => new http.Agent({ keepAlive: true, maxSockets: 1 });

describe('local API gateway', () => {
  it('answers a path with broken percent-encoding with 404 and keeps serving', async () => {
    const agent = keepAlive();
    const broken = await request(agent, 'GET', '/api/v1/jobs/%E0%A4%A');
    expect(broken.status).toBe(404);
    expect(broken.body).toEqual({ code: 404, message: 'Not found', result: false });
    const next = await request(agent, 'GET', '/api/v1/jobs/job_1');
    expect(next.status).toBe(200);
    expect(next.socket).toBe(broken.socket);
    agent.destroy();
  });

  it('sends a request no route takes to the $default route, with no path parameters', async () => {
    const agent = keepAlive();
    for (const [method, path] of [
      ['GET', '/api/v1/nowhere'],
      ['DELETE', '/api/v1/jobs/job_1'],
    ] as const) {
      const answer = await request(agent, method, path);
      expect(answer.status).toBe(404);
      expect(answer.body).toEqual({ code: 404, message: 'from $default', result: false });
      expect(seen.at(-1)).toEqual({ routeKey: '$default', bodyBytes: 0 });
    }
    agent.destroy();
  });

  it('answers a request no route takes as API Gateway does when there is no $default route', async () => {
    const routes: LocalRoute[] = [
      { routeKey: 'GET /api/v1/quota', invoke: async () => ({ statusCode: 200 }) },
    ];
    await withServer(routes, async (url) => {
      for (const [method, path] of [
        ['GET', '/api/v1/nowhere'],
        ['DELETE', '/api/v1/quota'],
      ]) {
        const answer = await fetch(`${url}${path}`, { method });
        expect(answer.status).toBe(404);
        expect(answer.headers.get('allow')).toBeNull();
        expect(await answer.json()).toEqual({ message: 'Not Found' });
      }
    });
  });

  it('turns a crashing function or a malformed answer into API Gateway’s 500', async () => {
    const agent = keepAlive();
    for (const path of ['/api/v1/crash', '/api/v1/nonsense']) {
      const answer = await request(agent, 'GET', path);
      expect(answer.status).toBe(500);
      expect(answer.body).toEqual({ message: 'Internal Server Error' });
    }
    expect((await request(agent, 'GET', '/api/v1/jobs/job_2')).status).toBe(200);
    agent.destroy();
  });

  it('stops waiting for a function at the integration timeout with API Gateway’s 503', async () => {
    const agent = keepAlive();
    const answer = await request(agent, 'GET', '/api/v1/slow');
    expect(answer.status).toBe(503);
    expect(answer.body).toEqual({ message: 'Service Unavailable' });
    expect((await request(agent, 'GET', '/api/v1/jobs/job_2')).socket).toBe(answer.socket);
    agent.destroy();
  });

  it("answers 500 when the function's response is over Lambda's 6 MB payload, and passes one at the limit", async () => {
    const agent = keepAlive();
    const over = await request(agent, 'GET', `/api/v1/sized/${LAMBDA_INVOKE_PAYLOAD_BYTES + 1}`);
    expect(over.status).toBe(500);
    expect(over.body).toEqual({ message: 'Internal Server Error' });
    const at = await request(agent, 'GET', `/api/v1/sized/${LAMBDA_INVOKE_PAYLOAD_BYTES}`);
    expect(at.status).toBe(200);
    agent.destroy();
  });

  it('refuses a body whose event is over Lambda’s 6 MB as API Gateway does, on a connection that stays usable', async () => {
    const agent = keepAlive();
    const before = seen.length;
    // Binary, so base64 in the event: 4.8 MB of body is 6.4 MB of event.
    const big = await request(agent, 'POST', '/api/v1/jobs', {
      body: Buffer.alloc(4_800_000),
      headers: { 'content-type': 'application/zip' },
    });
    expect(big.status).toBe(413);
    expect(big.body).toEqual({ message: 'Request Entity Too Large' });
    expect(seen.length).toBe(before);
    const next = await request(agent, 'GET', '/api/v1/jobs/job_3');
    expect(next.status).toBe(200);
    expect(next.socket).toBe(big.socket);
    agent.destroy();
  });

  it('passes a text body past the inline limit whose event fits, and refuses one over the 10 MB quota', async () => {
    const agent = keepAlive();
    const text = await request(agent, 'POST', '/api/v1/jobs', {
      body: Buffer.alloc(5_000_000, 'a'),
      headers: { 'content-type': 'application/json' },
    });
    expect(seen.at(-1)).toMatchObject({ routeKey: 'POST /api/v1/jobs', bodyBytes: 5_000_000 });
    expect(text.body).toEqual({ code: 413, message: 'archive too big', result: false });
    const before = seen.length;
    const over = await request(agent, 'POST', '/api/v1/nowhere', {
      body: Buffer.alloc(API_GATEWAY_PAYLOAD_BYTES + 1),
    });
    expect(over.status).toBe(413);
    expect(over.body).toEqual({ message: 'Request Entity Too Large' });
    expect(seen.length).toBe(before);
    expect((await request(agent, 'GET', '/api/v1/jobs/job_3')).socket).toBe(over.socket);
    agent.destroy();
  });

  it("delivers a handler's early 413 for a body at the limit, and the connection stays usable", async () => {
    const agent = keepAlive();
    const answer = await request(agent, 'POST', '/api/v1/jobs', {
      body: Buffer.alloc(MAX_INLINE_BODY_BYTES),
      headers: { 'content-type': 'application/zip' },
    });
    expect(answer.status).toBe(413);
    expect(answer.body).toEqual({ code: 413, message: 'archive too big', result: false });
    expect(seen.at(-1)).toMatchObject({ routeKey: 'POST /api/v1/jobs', bodyBytes: MAX_INLINE_BODY_BYTES });
    expect((await request(agent, 'GET', '/api/v1/jobs/job_4')).socket).toBe(answer.socket);
    agent.destroy();
  });

  it('hands the body of a request to an unknown route to the $default route', async () => {
    const agent = keepAlive();
    const answer = await request(agent, 'POST', '/api/v1/nowhere', {
      body: Buffer.alloc(2 * 1024 * 1024, 'a'),
      headers: { 'content-type': 'text/plain' },
    });
    expect(answer.status).toBe(404);
    expect(seen.at(-1)).toEqual({ routeKey: '$default', bodyBytes: 2 * 1024 * 1024 });
    expect((await request(agent, 'GET', '/api/v1/jobs/job_5')).socket).toBe(answer.socket);
    agent.destroy();
  });

  it('answers Expect: 100-continue with 413 before the body is sent when the declared size is over 10 MB', async () => {
    const answer = await rawExchange(
      `POST /api/v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Length: ${API_GATEWAY_PAYLOAD_BYTES + 1}\r\nExpect: 100-continue\r\n\r\n`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer).not.toContain('100 Continue');
    expect(answer).toContain('{"message":"Request Entity Too Large"}');
  });

  it('refuses a URL or headers over their limits with 413 naming the limit', async () => {
    const agent = keepAlive();
    const longUrl = await request(agent, 'GET', `/api/v1/jobs/${'a'.repeat(MAX_URL_BYTES)}`);
    expect(longUrl.status).toBe(413);
    expect(longUrl.body.message).toContain('limit: URL length');
    agent.destroy();
    const headers = await rawExchange(
      `GET /api/v1/jobs/job_6 HTTP/1.1\r\nHost: x\r\nX-Padding: ${'p'.repeat(MAX_HEADER_BYTES)}\r\n\r\n`,
    );
    expect(headers).toMatch(/^HTTP\/1\.1 413 /);
    expect(headers).toContain('limit: header size');
    const garbage = await rawExchange('NOT HTTP AT ALL\r\n\r\n');
    expect(garbage).toMatch(/^HTTP\/1\.1 400 /);
    expect((await request(keepAlive(), 'GET', '/api/v1/jobs/job_7')).status).toBe(200);
  });
});

/** A gateway of its own over `routes`, listening while `use` runs. */
async function withServer(routes: LocalRoute[], use: (url: string) => Promise<void>) {
  const own = createApiServer(routes);
  await new Promise<void>((resolve) => own.listen(0, '127.0.0.1', resolve));
  try {
    await use(`http://127.0.0.1:${(own.address() as AddressInfo).port}`);
  } finally {
    own.closeAllConnections();
    await new Promise((resolve) => own.close(resolve));
  }
}

/** Write raw bytes and collect whatever the server answers until it closes or goes quiet. */
function rawExchange(text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let answer = '';
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(answer);
    }, 1000);
    socket.on('data', (chunk) => {
      answer += chunk.toString('latin1');
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(answer);
    });
    socket.on('error', (error) => {
      clearTimeout(timer);
      if (answer) resolve(answer);
      else reject(error);
    });
    socket.write(text);
  });
}

describe('local API gateway throttling, as an HTTP API stage does it', () => {
  it('answers 429 in API Gateway’s own shape past the stage’s rate, for every client alike', async () => {
    let invoked = 0;
    const throttled = createApiServer(
      [
        {
          routeKey: 'GET /api/v1/quota',
          invoke: async () => {
            invoked += 1;
            return { statusCode: 200, body: '{}' };
          },
        },
      ],
      { throttle: { rate: 0.001, burst: 2 } },
    );
    await new Promise<void>((resolve) => throttled.listen(0, '127.0.0.1', resolve));
    const { port: throttledPort } = throttled.address() as AddressInfo;
    const get = async (headers: Record<string, string>) => {
      const response = await fetch(`http://127.0.0.1:${throttledPort}/api/v1/quota`, { headers });
      return { status: response.status, body: await response.json() };
    };
    try {
      expect((await get({ 'x-api-key': 'a' })).status).toBe(200);
      expect((await get({ 'x-api-key': 'b' })).status).toBe(200);
      // The stage is shared: a third client is refused too, and no function runs for it.
      expect(await get({ 'x-api-key': 'c' })).toEqual({
        status: 429,
        body: { message: 'Too Many Requests' },
      });
      expect(invoked).toBe(2);
    } finally {
      throttled.closeAllConnections();
      await new Promise((resolve) => throttled.close(resolve));
    }
  });

  it('reads the stage throttle from the template’s default route settings', () => {
    const topology = readTopology(
      [
        {
          Resources: {
            Stage: {
              Type: 'AWS::ApiGatewayV2::Stage',
              Properties: { DefaultRouteSettings: { ThrottlingRateLimit: 50, ThrottlingBurstLimit: 80 } },
            },
          },
        },
      ],
      (id) => id,
    );
    expect(topology.throttle).toEqual({ rate: 50, burst: 80 });
  });
});

describe('local API gateway CORS, as an HTTP API with a CORS configuration', () => {
  it('answers a preflight itself and adds the allowed origin and exposed headers to responses', async () => {
    const invoked: string[] = [];
    const cors = createApiServer(
      [
        {
          routeKey: 'GET /api/v1/quota',
          invoke: async (event) => {
            invoked.push(event.routeKey);
            return { statusCode: 429, headers: { 'retry-after': '5' }, body: '{}' };
          },
        },
      ],
      {
        cors: {
          AllowOrigins: ['*'],
          AllowMethods: ['*'],
          AllowHeaders: ['authorization', 'x-api-key'],
          ExposeHeaders: ['retry-after', 'location'],
          MaxAge: 3600,
        },
      },
    );
    await new Promise<void>((resolve) => cors.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(cors.address() as AddressInfo).port}/api/v1/quota`;
    try {
      const preflight = await fetch(url, {
        method: 'OPTIONS',
        headers: { origin: 'https://app.example', 'access-control-request-method': 'GET' },
      });
      expect(preflight.status).toBe(204);
      expect(Object.fromEntries(preflight.headers)).toMatchObject({
        'access-control-allow-origin': '*',
        'access-control-allow-methods': '*',
        'access-control-allow-headers': 'authorization,x-api-key',
        'access-control-max-age': '3600',
      });
      expect(invoked).toEqual([]);

      const answer = await fetch(url, { headers: { origin: 'https://app.example' } });
      expect(answer.status).toBe(429);
      expect(answer.headers.get('access-control-allow-origin')).toBe('*');
      expect(answer.headers.get('access-control-expose-headers')).toBe('retry-after,location');
      expect(answer.headers.get('retry-after')).toBe('5');

      // Without an Origin it is no CORS request, and an OPTIONS that is no preflight finds no route.
      expect((await fetch(url)).headers.get('access-control-allow-origin')).toBeNull();
      expect((await fetch(url, { method: 'OPTIONS' })).status).toBe(404);
    } finally {
      cors.closeAllConnections();
      await new Promise((resolve) => cors.close(resolve));
    }
  });

  it('reads the CORS configuration from the synthesized HTTP API', () => {
    const topology = readTopology(
      [
        {
          Resources: {
            Api: {
              Type: 'AWS::ApiGatewayV2::Api',
              Properties: { CorsConfiguration: { AllowOrigins: ['*'], ExposeHeaders: ['retry-after'] } },
            },
          },
        },
      ],
      (id) => id,
    );
    expect(topology.cors).toEqual({ AllowOrigins: ['*'], ExposeHeaders: ['retry-after'] });
  });
});
