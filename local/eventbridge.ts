import { randomUUID } from 'node:crypto';
import { appendFile, mkdir } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { sendAwsJson } from './aws-json.ts';
import { type Authorizer, accessDeniedJson, accessKeyOf, eventsRequests } from './iam.ts';
import type { Observer } from './observe.ts';

interface PutEventsEntry {
  Source?: string;
  DetailType?: string;
  Detail?: string;
  EventBusName?: string;
  Resources?: string[];
  Time?: number | string;
}

/** An entry's size as EventBridge documents it ("Calculating PutEvents event entry size"). */
const entryBytes = (entry: PutEventsEntry): number =>
  (entry.Time === undefined ? 0 : 14) +
  [entry.Source, entry.DetailType, entry.Detail, ...(entry.Resources ?? [])].reduce(
    (sum, text) => sum + Buffer.byteLength(text ?? ''),
    0,
  );

/**
 * Serves EventBridge's PutEvents (JSON 1.1) on loopback for the real SDK client, and appends each event to
 * a JSON Lines file in the shape a rule's target receives (`version`, `id`, `detail-type`, `source`, `time`,
 * `detail`, ...) plus `event-bus-name`. Tests and people read the file instead of a bus.
 */
export async function startLocalEventBridge(opts: {
  logFile: string;
  /** IAM enforced (local/iam.ts): absent, every signed request is allowed. */
  authorize?: Authorizer;
  /** Told of every PutEvents it accepts (local/observe.ts). */
  observe?: Observer;
}): Promise<{ endpoint: string; logFile: string; close(): Promise<void> }> {
  await mkdir(path.dirname(opts.logFile), { recursive: true });
  // One append after another, so that lines never interleave.
  let appending: Promise<void> = Promise.resolve();
  const append = (text: string) => {
    appending = appending.then(() => appendFile(opts.logFile, text));
    return appending;
  };

  async function putEvents(body: { Entries?: PutEventsEntry[] }) {
    const entries = body.Entries ?? [];
    if (entries.length < 1 || entries.length > 10) {
      throw Object.assign(new Error('Entries must hold 1 to 10 events'), { type: 'ValidationException' });
    }
    const results: Array<{ EventId?: string; ErrorCode?: string; ErrorMessage?: string }> = [];
    let lines = '';
    for (const entry of entries) {
      let detail: unknown;
      try {
        detail = JSON.parse(entry.Detail ?? '');
      } catch {
        detail = undefined;
      }
      if (!entry.Source || !entry.DetailType || typeof detail !== 'object' || detail === null) {
        results.push({
          ErrorCode: 'MalformedDetail',
          ErrorMessage: 'Source, DetailType and a JSON object Detail are required',
        });
        continue;
      }
      const id = randomUUID();
      const time = entry.Time === undefined ? new Date() : new Date(Number(entry.Time) * 1000);
      lines += `${JSON.stringify({
        version: '0',
        id,
        'detail-type': entry.DetailType,
        source: entry.Source,
        account: '000000000000',
        time: time.toISOString().replace(/\.\d{3}Z$/, 'Z'),
        region: 'us-east-1',
        resources: entry.Resources ?? [],
        detail,
        'event-bus-name': entry.EventBusName ?? 'default',
      })}\n`;
      results.push({ EventId: id });
    }
    if (lines) await append(lines);
    return { FailedEntryCount: results.filter((r) => r.ErrorCode).length, Entries: results };
  }

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const target = String(req.headers['x-amz-target'] ?? '');
      const reply = (status: number, payload: unknown) => sendAwsJson(res, status, payload, '1.1');
      if (target !== 'AWSEvents.PutEvents') {
        reply(400, { __type: 'UnknownOperationException', message: `Unsupported operation: ${target}` });
        return;
      }
      Promise.resolve()
        .then(async () => {
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
          const caller = accessKeyOf(req.headers.authorization, req.url ?? '/');
          const denial = await opts.authorize?.(caller, eventsRequests('PutEvents', body));
          if (denial) return { denied: accessDeniedJson(denial) };
          opts.observe?.({
            service: 'events',
            caller,
            operation: 'PutEvents',
            entryBytes: ((body.Entries ?? []) as PutEventsEntry[]).map(entryBytes),
          });
          return { out: await putEvents(body) };
        })
        .then(
          (answer) => ('denied' in answer ? reply(400, answer.denied) : reply(200, answer.out)),
          (err: Error & { type?: string }) =>
            reply(err.type ? 400 : 500, { __type: err.type ?? 'InternalException', message: err.message }),
        );
    });
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));

  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    logFile: opts.logFile,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await closed;
      await appending;
    },
  };
}
