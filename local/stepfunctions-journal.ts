import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

export type Status = 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'ABORTED' | 'TIMED_OUT';
export type Execution = {
  /** An Express execution: unnamed in effect (names repeat), unknown to DescribeExecution and StopExecution. */
  express?: boolean;
  executionArn: string;
  stateMachineArn: string;
  name: string;
  input: string;
  status: Status;
  startDate: Date;
  stopDate?: Date;
  output?: string;
  error?: string;
  cause?: string;
  abort(): void;
  settled: Promise<void>;
};

/**
 * The executions of the local Step Functions, recorded as JSON lines so that a restart knows them again:
 * finished executions keep their names and answers, and those that were running are handed back to run
 * again. Without a file executions live in memory only.
 */
export function openJournal(
  stateFile: string | undefined,
  /** A known state machine's type; undefined for one no longer defined (its executions are dropped). */
  typeOf: (stateMachineArn: string) => 'STANDARD' | 'EXPRESS' | undefined,
) {
  const executions = new Map<string, Execution>();
  const toResume: Execution[] = [];
  // A stop of the whole server is not the executions' end: they stay running on disk and resume.
  let closing = false;
  if (stateFile) {
    mkdirSync(dirname(stateFile), { recursive: true });
    const folded = new Map<string, Record<string, unknown>>();
    const text = existsSync(stateFile) ? readFileSync(stateFile, 'utf8') : '';
    for (const line of text.split('\n')) {
      if (!line.trim()) continue;
      let entry: Record<string, unknown>;
      try {
        entry = JSON.parse(line);
      } catch {
        continue; // the last line of a process killed mid-write
      }
      const arn = String(entry.executionArn);
      folded.set(arn, { ...folded.get(arn), ...entry });
    }
    for (const entry of folded.values()) {
      const type = typeOf(String(entry.stateMachineArn));
      if (!type) continue;
      const exec: Execution = {
        ...(type === 'EXPRESS' ? { express: true } : {}),
        executionArn: String(entry.executionArn),
        stateMachineArn: String(entry.stateMachineArn),
        name: String(entry.name),
        input: String(entry.input),
        status: entry.status as Status,
        startDate: new Date(String(entry.startDate)),
        stopDate: entry.stopDate ? new Date(String(entry.stopDate)) : undefined,
        output: entry.output as string | undefined,
        error: entry.error as string | undefined,
        cause: entry.cause as string | undefined,
        abort() {},
        settled: Promise.resolve(),
      };
      executions.set(exec.executionArn, exec);
      if (exec.status === 'RUNNING') toResume.push(exec);
    }
    // Compacted: one line per execution from here on.
    writeFileSync(stateFile, [...folded.values()].map((entry) => `${JSON.stringify(entry)}\n`).join(''));
  }
  return {
    executions,
    toResume,
    /**
     * Written synchronously: a line is on disk before the call that made it returns, so a kill -9 loses
     * nothing that a client was told.
     */
    record(entry: Record<string, unknown>) {
      if (stateFile && !closing) appendFileSync(stateFile, `${JSON.stringify(entry)}\n`);
    },
    close() {
      closing = true;
    },
  };
}
