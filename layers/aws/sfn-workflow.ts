import {
  DescribeExecutionCommand,
  ExecutionAlreadyExists,
  ExecutionDoesNotExist,
  SFNClient,
  StartExecutionCommand,
} from '@aws-sdk/client-sfn';
import type { Config } from '#config';
import type { ArchiveWorkflow, WorkflowStarter, WorkflowStates } from '#core/ports.ts';
import { clientSettings } from './client-settings.ts';

export const sfnClient = (cfg: Config) => new SFNClient(clientSettings(cfg, cfg.SFN_ENDPOINT));

export function sfnWorkflow(client: SFNClient, stateMachineArn: string): WorkflowStarter & WorkflowStates {
  return {
    async state(jobId, attempt) {
      const executionArn = `${stateMachineArn.replace(':stateMachine:', ':execution:')}:${jobId}-${attempt}`;
      try {
        const { status } = await client.send(new DescribeExecutionCommand({ executionArn }));
        return status === 'RUNNING' ? 'running' : 'ended';
      } catch (error) {
        if (error instanceof ExecutionDoesNotExist) return 'missing';
        throw error;
      }
    },
    async start(jobId, attempt) {
      try {
        // The name makes a repeated start of the same attempt a no-op instead of a second run.
        await client.send(
          new StartExecutionCommand({
            stateMachineArn,
            name: `${jobId}-${attempt}`,
            input: JSON.stringify({ jobId }),
          }),
        );
      } catch (error) {
        if (!(error instanceof ExecutionAlreadyExists)) throw error;
      }
    },
  };
}

/** The archive workflow (unpack a batch, build its download): one execution per name. */
export function sfnArchiveWorkflow(client: SFNClient, stateMachineArn: string): ArchiveWorkflow {
  return {
    async start(name, task) {
      try {
        await client.send(new StartExecutionCommand({ stateMachineArn, name, input: JSON.stringify(task) }));
        return 'running';
      } catch (error) {
        if (!(error instanceof ExecutionAlreadyExists)) throw error;
      }
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
