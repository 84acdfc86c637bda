import {
  DescribeExecutionCommand,
  ExecutionAlreadyExists,
  SFNClient,
  StartExecutionCommand,
} from '@aws-sdk/client-sfn';
import type { Config } from '#config';
import { FOLLOW_UP_SUFFIX, jobRunName } from '#core/jobs/ids.ts';
import type { ArchiveWorkflow, FollowUpStarter, WorkflowStarter } from '#core/ports.ts';
import { clientSettings } from './client-settings.ts';

export const sfnClient = (cfg: Config) => new SFNClient(clientSettings(cfg, cfg.SFN_ENDPOINT));

export function sfnWorkflow(client: SFNClient, stateMachineArn: string): WorkflowStarter {
  return {
    async start(jobId, attempt) {
      // Express: the name is not unique and a repeated start is another run. It names the job's attempt, which
      // the webhook's delivery and event ids are made from, so every run of one attempt uses the same ones.
      await client.send(
        new StartExecutionCommand({
          stateMachineArn,
          name: jobRunName(jobId, attempt),
          input: JSON.stringify({ jobId }),
        }),
      );
    },
  };
}

/** The job runs' follow-ups (Standard): one execution per name, so a second hand-over of one run is refused. */
export function sfnFollowUps(client: SFNClient, stateMachineArn: string): FollowUpStarter {
  return {
    async deliver(jobId, attempt) {
      const execution = jobRunName(jobId, attempt);
      // The name the run's own hand-over uses (lib/constructs/job-workflow.ts): a taken one is left as it is.
      await startUnlessTaken(client, stateMachineArn, `${execution}${FOLLOW_UP_SUFFIX}`, {
        jobId,
        execution,
      });
    },
  };
}

/** The archive workflow (unpack a batch, build its download): one execution per name. */
export function sfnArchiveWorkflow(client: SFNClient, stateMachineArn: string): ArchiveWorkflow {
  return {
    async start(name, task) {
      if (await startUnlessTaken(client, stateMachineArn, name, task)) return 'running';
      const executionArn = `${stateMachineArn.replace(':stateMachine:', ':execution:')}:${name}`;
      const { status } = await client.send(new DescribeExecutionCommand({ executionArn }));
      return status === 'RUNNING' || status === 'PENDING_REDRIVE'
        ? 'running'
        : status === 'SUCCEEDED'
          ? 'succeeded'
          : 'failed';
    },
  };
}

/** Start a Standard execution named `name`; false when that name is taken (a Standard name is unique). */
async function startUnlessTaken(
  client: SFNClient,
  stateMachineArn: string,
  name: string,
  input: unknown,
): Promise<boolean> {
  try {
    await client.send(new StartExecutionCommand({ stateMachineArn, name, input: JSON.stringify(input) }));
    return true;
  } catch (error) {
    if (error instanceof ExecutionAlreadyExists) return false;
    throw error;
  }
}
