import { startLocalDynamo } from './dynamodb.ts';
import { LOCAL_TABLE, readRunningStack } from './stack.ts';
import { readTopology } from './template.ts';

/**
 * Point this process's configuration at the local stack's data: the running server's DynamoDB when
 * there is one (its LevelDB files are locked while it runs), else an embedded one over the same files.
 */
export async function openLocalData(dataDir: string): Promise<{ close(): Promise<void> }> {
  const common = { TABLE_NAME: LOCAL_TABLE, BUCKET_NAME: LOCAL_TABLE, AWS_REGION: 'us-east-1' };
  const running = await readRunningStack(dataDir);
  if (running) {
    Object.assign(process.env, common, { DYNAMODB_ENDPOINT: running.dynamodb });
    return { close: async () => undefined };
  }
  const { synthesizeTemplates } = await import('../lib/app.ts');
  const templates = synthesizeTemplates({ bundle: false });
  const { tables } = readTopology([templates.data, templates.service], () => LOCAL_TABLE);
  const dynamo = await startLocalDynamo({ dataDir: `${dataDir}/dynamodb`, tables });
  Object.assign(process.env, common, { DYNAMODB_ENDPOINT: dynamo.endpoint });
  return dynamo;
}
