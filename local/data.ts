import { startLocalDynamo } from './dynamodb.ts';
import { LOCAL_ADMIN_CREDENTIALS } from './iam/authorizer.ts';
import { startLocalS3 } from './s3.ts';
import { LOCAL_BUCKET, LOCAL_TABLE, readRunningStack } from './stack.ts';
import { readTopology } from './template.ts';

/**
 * Point this process's configuration at the local stack's data: the running server's DynamoDB and S3
 * when there is one (its LevelDB files are locked while it runs), else embedded ones over the same files.
 */
export async function openLocalData(dataDir: string): Promise<{
  close(): Promise<void> /** Which data, and whether a server is using it. */;
  description: string;
}> {
  const common = {
    TABLE_NAME: LOCAL_TABLE,
    BUCKET_NAME: LOCAL_BUCKET,
    AWS_REGION: 'us-east-1',
    // The CLI writes keys as the stand-ins' admin.
    AWS_ACCESS_KEY_ID: LOCAL_ADMIN_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: LOCAL_ADMIN_CREDENTIALS.secretAccessKey,
  };
  const running = await readRunningStack(dataDir);
  if (running) {
    Object.assign(process.env, common, { DYNAMODB_ENDPOINT: running.dynamodb, S3_ENDPOINT: running.s3 });
    return {
      close: async () => undefined,
      description: `in ${dataDir} (table ${LOCAL_TABLE}), through the server running on it`,
    };
  }
  const { synthesizeTemplates } = await import('../lib/app.ts');
  const templates = synthesizeTemplates({ bundle: false });
  const { tables } = readTopology([templates.data, templates.service], () => LOCAL_TABLE);
  const dynamo = await startLocalDynamo({ dataDir: `${dataDir}/dynamodb`, tables });
  const s3 = await startLocalS3({ dataDir: `${dataDir}/s3`, buckets: [LOCAL_BUCKET] });
  Object.assign(process.env, common, { DYNAMODB_ENDPOINT: dynamo.endpoint, S3_ENDPOINT: s3.endpoint });
  return {
    async close() {
      await s3.close();
      await dynamo.close();
    },
    // The key silently landing in a data dir no server reads was a first-hour 401.
    description:
      `in ${dataDir} (table ${LOCAL_TABLE}); no server is running on it now: \`npm start\` with ` +
      'the same DATA_DIR will know this key, a server on another DATA_DIR will answer 401',
  };
}
