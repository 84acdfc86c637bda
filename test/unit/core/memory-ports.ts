import { type CreditAccount, reservationRefusal, reserve, settle } from '#core/credits/credits.ts';
import type { FileRecord } from '#core/files/files.ts';
import type { IdempotencyRecord } from '#core/idempotency/idempotency.ts';
import type { Job } from '#core/jobs/job.ts';
import type {
  Clock,
  CreditMovement,
  DeliveryRepository,
  FileRepository,
  JobRepository,
  ObjectStore,
  WorkflowStarter,
} from '#core/ports.ts';
import type { Delivery, DeliveryAttempt } from '#core/webhooks/delivery.ts';

/**
 * In-memory ports with the same all-or-nothing semantics as the DynamoDB adapters, the jobs in flight per
 * account included (each reservation opens one, its settlement closes it; at `maxInFlight`, 429).
 */
export function memoryStore(accounts: Record<string, number> = {}, options: { maxInFlight?: number } = {}) {
  const maxInFlight = options.maxInFlight ?? Infinity;
  const jobs = new Map<string, Job>();
  const claims = new Map<string, IdempotencyRecord>();
  const balances = new Map<string, CreditAccount>(
    Object.entries(accounts).map(([id, available]) => [id, { available, reserved: 0, usedTotal: 0 }]),
  );
  const inFlight = new Map<string, number>();

  /** The account after the movement, and a commit that moves its in-flight count too; throws when refused. */
  const applied = (movement: CreditMovement | null) => {
    if (!movement) return null;
    const account = balances.get(movement.account);
    if (!account) throw new Error(`no account ${movement.account}`);
    const open = inFlight.get(movement.account) ?? 0;
    if (movement.kind === 'reserve') {
      const refusal = reservationRefusal(
        { available: account.available, inFlight: open },
        movement.amount,
        maxInFlight,
      );
      if (refusal) throw refusal;
    }
    const after =
      movement.kind === 'reserve'
        ? reserve(account, movement.amount)
        : settle(account, movement.amount, movement.kind);
    return {
      after,
      commit() {
        balances.set(movement.account, after);
        inFlight.set(movement.account, Math.max(0, open + (movement.kind === 'reserve' ? 1 : -1)));
      },
    };
  };

  const repository: JobRepository = {
    async get(jobId) {
      return jobs.get(jobId) ?? null;
    },
    async findIdempotent(scope, key) {
      return claims.get(`${scope}#${key}`) ?? null;
    },
    async insert(job, reservation, claim) {
      if (claim && claims.has(`${claim.scope}#${claim.key}`)) {
        return { inserted: false, existing: claims.get(`${claim.scope}#${claim.key}`)! };
      }
      const movement = applied(reservation);
      jobs.set(job.id, job);
      movement?.commit();
      if (claim) claims.set(`${claim.scope}#${claim.key}`, { jobId: job.id, fingerprint: claim.fingerprint });
      return { inserted: true };
    },
    async update(before, after, movement) {
      if (jobs.get(before.id)?.version !== before.version) return false;
      const moved = applied(movement);
      jobs.set(after.id, after);
      moved?.commit();
      return true;
    },
    async listByOwner(ownerId, page) {
      const own = [...jobs.values()]
        .filter((job) => job.ownerId === ownerId && (!page.before || job.seq < page.before))
        .filter((job) => !page.status || job.status === page.status)
        .sort((a, b) => b.seq - a.seq);
      const slice = own.slice(0, page.limit);
      return { jobs: slice, nextCursor: own.length > page.limit ? slice.at(-1)!.seq : null };
    },
  };

  const started: Array<{ jobId: string; attempt: number }> = [];
  const workflow: WorkflowStarter = {
    async start(jobId, attempt) {
      started.push({ jobId, attempt });
    },
  };
  const clock: Clock = { now: () => new Date('2026-11-22T08:00:00.000Z') };

  return {
    jobs: repository,
    workflow,
    clock,
    files: memoryFiles(clock).repository,
    balances,
    started,
    stored: jobs,
  };
}

/** File records with the DynamoDB adapter's rules: one registration per job and name, expired ones hidden. */
export function memoryFiles(clock: Clock) {
  const files = new Map<number, FileRecord>();
  const claims = new Map<string, number>();
  let lastId = 0;
  const unexpired = (file: FileRecord) => Date.parse(file.expiresAt) > clock.now().getTime();
  const repository: FileRepository = {
    async nextId() {
      return ++lastId;
    },
    async insertResult(file) {
      const claim = `${file.jobId}/${file.name}`;
      if (claims.has(claim)) return false;
      claims.set(claim, file.fileId);
      files.set(file.fileId, file);
      return true;
    },
    async get(fileId) {
      const file = files.get(fileId);
      return file && unexpired(file) ? file : null;
    },
    async resultState(jobId, name) {
      const fileId = claims.get(`${jobId}/${name}`);
      if (fileId === undefined) return null;
      return (await this.get(fileId)) ? 'listed' : 'deleted';
    },
    async list(ownerId, before, limit) {
      return [...files.values()]
        .filter((f) => (ownerId === null || f.ownerId === ownerId) && (before === null || f.fileId < before))
        .filter(unexpired)
        .sort((a, b) => b.fileId - a.fileId)
        .slice(0, limit);
    },
    async delete(file) {
      return files.delete(file.fileId);
    },
  };
  return { repository, records: files };
}

/** The DynamoDB adapter's rules: conditional open, atomic attempt counter, finish only from pending. */
export function memoryDeliveries(): DeliveryRepository & { published: Set<string> } {
  const deliveries = new Map<string, Delivery>();
  const attempts: DeliveryAttempt[] = [];
  const published = new Set<string>();
  return {
    published,
    async open(delivery) {
      const existing = deliveries.get(delivery.deliveryId);
      if (existing) return existing;
      deliveries.set(delivery.deliveryId, { ...delivery });
      return delivery;
    },
    async get(_jobId, deliveryId) {
      const found = deliveries.get(deliveryId);
      return found ? { ...found } : null;
    },
    async nextAttempt(_jobId, deliveryId, at) {
      const delivery = deliveries.get(deliveryId)!;
      delivery.attempts += 1;
      delivery.updatedAt = at;
      return delivery.attempts;
    },
    async record(attempt) {
      attempts.push(attempt);
    },
    async finish(_jobId, deliveryId, status, at) {
      const delivery = deliveries.get(deliveryId)!;
      if (delivery.status === 'pending') Object.assign(delivery, { status, updatedAt: at });
    },
    async list(jobId) {
      return [...deliveries.values()]
        .filter((d) => d.jobId === jobId)
        .reverse()
        .map((delivery) => ({
          delivery,
          attempts: attempts.filter((a) => a.deliveryId === delivery.deliveryId),
        }));
    },
    async wasPublished(jobId, eventId) {
      return published.has(`${jobId}/${eventId}`);
    },
    async markPublished(jobId, eventId) {
      published.add(`${jobId}/${eventId}`);
    },
  };
}

/**
 * S3's answer to a read of a missing key for a role that may list only the prefixes it reads: AWS does not
 * document a 404 there (docs/aws-parity.md), so the in-memory stores refuse, and code that reads a key to
 * learn whether it exists fails its tests.
 */
export const missingKeyRefusal = (key: string) =>
  Object.assign(new Error(`Access Denied (reading ${key}, which is not stored)`), { name: 'AccessDenied' });

/** Objects kept by key; a read of a missing one is refused, as S3 may (`missingKeyRefusal`). */
export function memoryObjects() {
  const objects = new Map<string, Buffer>();
  const store: ObjectStore = {
    async put(key, body) {
      objects.set(key, body);
    },
    async get(key) {
      const body = objects.get(key);
      if (!body) throw missingKeyRefusal(key);
      return body;
    },
    async exists(key) {
      return objects.has(key);
    },
    async delete(key) {
      objects.delete(key);
    },
    async presignGet(key, expiresInSeconds) {
      return `https://storage.test/${key}?expires=${expiresInSeconds}`;
    },
  };
  return { store, objects };
}
