import { ExecutionAlreadyExists, type SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import type { WorkflowStarter } from '#core/ports.ts';

export function sfnWorkflow(client: SFNClient, stateMachineArn: string): WorkflowStarter {
  return {
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
