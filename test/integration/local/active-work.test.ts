import { DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamodbActiveWork } from '#aws/dynamodb-active.ts';
import { activeShard } from '#aws/dynamodb-items.ts';
import { jobItem } from '#aws/dynamodb-jobs.ts';
import type { Job, JobStatus } from '#core/jobs/job.ts';
import { TABLE_INDEXES } from '#core/storage-layout.ts';
import { startLocalDynamo } from '../../../local/dynamodb.ts';
import { readTopology } from '../../../local/template.ts';
import { plainAssembly } from '../../support/assembly.ts';

const TABLE = 'photo-jobs';

/** The sweeper's view of unfinished work, over the table as the CDK app defines it. */
describe('active work from the sparse index', () => {
  let dynamo: Awaited<ReturnType<typeof startLocalDynamo>>;
  let client: DynamoDBClient;

  beforeAll(async () => {
    const { templates } = await plainAssembly();
    const { tables } = readTopology([templates.data, templates.service], () => TABLE);
    dynamo = await startLocalDynamo({ tables });
    client = new DynamoDBClient({
      endpoint: dynamo.endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
  });
  afterAll(async () => {
    client?.destroy();
    await dynamo?.close();
  });

  const write = (id: string, status: JobStatus, owed: Partial<Job> = {}) =>
    client.send(
      new PutItemCommand({
        TableName: TABLE,
        Item: jobItem({
          id,
          seq: 1,
          ownerId: 'owner',
          status,
          version: 1,
          createdAt: '2026-11-25T00:00:00.000Z',
          ...owed,
        } as Job),
      }),
    );

  it('lists queued and processing jobs from every shard, and forgets a job once it ends', async () => {
    const ids = Array.from({ length: 40 }, (_, i) => `job_active_${i}`);
    // Forty ids land in every one of the index's shards, so a shard left unread would lose some.
    expect(new Set(ids.map(activeShard)).size).toBe(TABLE_INDEXES.active.shards);
    for (const [i, id] of ids.entries()) await write(id, i % 2 ? 'queued' : 'processing');
    await write('job_done', 'success');
    await write('job_failed', 'failed');

    const active = dynamodbActiveWork(client, TABLE);
    expect((await active.activeJobs()).map((job) => job.id).sort()).toEqual([...ids].sort());

    await write(ids[0]!, 'success');
    await write(ids[1]!, 'cancelled');
    expect((await active.activeJobs()).map((job) => job.id).sort()).toEqual(ids.slice(2).sort());
    expect(await active.activeBatches()).toEqual([]);
  });

  it('keeps a failed job listed while the sweeper still owes its follow-up', async () => {
    await write('job_owed', 'failed', { followUpDue: 1 });
    const active = dynamodbActiveWork(client, TABLE);
    expect((await active.activeJobs()).map((job) => job.id)).toContain('job_owed');

    await write('job_owed', 'failed');
    expect((await active.activeJobs()).map((job) => job.id)).not.toContain('job_owed');
  });
});
