import type { Batch, BatchItem } from '#core/batches/batch.ts';
import { reserve } from '#core/credits/credits.ts';
import { TooManyRequestsError } from '#core/errors.ts';
import type { BatchRepository, ObjectStore, ObjectStreams } from '#core/ports.ts';
import { type memoryStore, missingKeyRefusal } from './memory-ports.ts';

type Store = ReturnType<typeof memoryStore>;

/**
 * Batches over the in-memory job store, with the DynamoDB adapter's rules: every write checks the
 * batch version, and starting an item inserts its job and reserves its credits in the same step
 * (nothing here awaits between the check and the write, so concurrent calls interleave like
 * transactions). `maxInFlight` is the account's cap on queued and processing jobs (429).
 */
export function memoryBatches(store: Store, maxInFlight = 20) {
  const batches = new Map<string, Batch>();
  const items = new Map<string, BatchItem>();
  const itemKey = (batchId: string, index: number) => `${batchId}#${index}`;
  const copy = <T>(value: T): T => structuredClone(value);

  const repository: BatchRepository = {
    async create(batch, list) {
      for (const item of list) items.set(itemKey(batch.id, item.index), copy(item));
      batches.set(batch.id, copy(batch));
    },
    async putItems(list) {
      for (const item of list) items.set(itemKey(item.batchId, item.index), copy(item));
    },
    async get(batchId) {
      const batch = batches.get(batchId);
      return batch ? copy(batch) : null;
    },
    async items(batchId) {
      return [...items.values()]
        .filter((item) => item.batchId === batchId)
        .sort((a, b) => a.index - b.index)
        .map(copy);
    },
    async item(batchId, index) {
      const item = items.get(itemKey(batchId, index));
      return item ? copy(item) : null;
    },
    async update(before, after, changes = {}) {
      if (batches.get(before.id)?.version !== before.version) return false;
      const start = changes.start;
      const reservation = start?.reservation;
      if (reservation) {
        const account = store.balances.get(reservation.account);
        if (!account) throw new Error(`no account ${reservation.account}`);
        const inFlight = [...store.stored.values()].filter(
          (other) => other.account === reservation.account && ['queued', 'processing'].includes(other.status),
        ).length;
        const reserved = reserve(account, reservation.amount); // 402 before anything changes
        if (inFlight >= maxInFlight) throw new TooManyRequestsError('too many jobs in flight');
        store.balances.set(reservation.account, reserved);
      }
      if (start) store.stored.set(start.job.id, copy(start.job));
      if (changes.item) items.set(itemKey(changes.item.batchId, changes.item.index), copy(changes.item));
      batches.set(before.id, copy({ ...after, version: before.version + 1 }));
      return true;
    },
  };
  return { repository, batches, items };
}

/** Objects in memory, with the streaming half of the S3 adapter; a read of a missing key is refused. */
export function memoryObjects() {
  const objects = new Map<string, { body: Buffer; contentType: string; disposition?: string }>();
  const store: ObjectStore & ObjectStreams = {
    async put(key, body, contentType) {
      objects.set(key, { body: Buffer.from(body), contentType });
    },
    async get(key) {
      const object = objects.get(key);
      if (!object) throw missingKeyRefusal(key);
      return object.body;
    },
    async delete(key) {
      objects.delete(key);
    },
    async presignGet(key) {
      return `https://storage.example/${key}?signed`;
    },
    async getStream(key) {
      const body = await this.get(key);
      // Several chunks, as a network body arrives.
      return (async function* () {
        for (let at = 0; at < body.length; at += 1000) yield body.subarray(at, at + 1000);
      })();
    },
    async putStream(key, body, options) {
      const chunks: Buffer[] = [];
      for await (const chunk of body) chunks.push(Buffer.from(chunk));
      const joined = Buffer.concat(chunks);
      objects.set(key, {
        body: joined,
        contentType: options.contentType,
        disposition: options.contentDisposition,
      });
      return { bytes: joined.length };
    },
    async exists(key) {
      return objects.has(key);
    },
  };
  return { store, objects };
}
