import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A webhook receiver on loopback: every request kept by path, answered 200 unless its path is `failing`. */
export async function startReceiver(failing: ReadonlySet<string> = new Set()) {
  const received: Array<{ path: string; headers: http.IncomingHttpHeaders; body: string }> = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ path: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks).toString() });
      res.writeHead(failing.has(req.url ?? '/') ? 500 : 200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: (pathname: string) => `${base}${pathname}`,
    at: (pathname: string) => received.filter((r) => r.path === pathname),
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}
