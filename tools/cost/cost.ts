/**
 * `npm run cost`: what a job of each operation costs on AWS, per 1,000 jobs, by service, from the app
 * synthesized now, the committed trace and bench figures, and the price table. Offline, a few seconds.
 * `npm run cost -- trace`: counts one job of each operation again on the embedded stack first and writes
 * tools/cost/traced-requests.json (about a minute).
 */
import { writeFile } from 'node:fs/promises';
import { synthesizeTemplates } from '../../lib/app.ts';
import { costTable, inputsSummary, memoryTable, readSnapshots, staleness, TRACE_FILE } from './report.ts';

if (process.argv[2] === 'trace') {
  const { traceJobs } = await import('./trace.ts');
  const trace = await traceJobs();
  await writeFile(TRACE_FILE, `${JSON.stringify(trace, null, 2)}\n`);
  console.log(`Written ${TRACE_FILE}`);
} else if (process.argv[2] !== undefined) {
  console.error('usage: npm run cost [-- trace]');
  process.exit(2);
}

const templates = synthesizeTemplates();
const snapshots = await readSnapshots();
const stale = staleness(snapshots.trace, templates);
if (stale.length > 0) {
  console.error(
    `The trace no longer matches the template; run \`npm run cost -- trace\`:\n${stale.join('\n')}`,
  );
  process.exit(1);
}
console.log(costTable(templates, snapshots));
console.log();
console.log(memoryTable(templates, snapshots));
console.log();
console.log(inputsSummary(templates, snapshots));
