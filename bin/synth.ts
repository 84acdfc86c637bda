import { relative, resolve } from 'node:path';
import { buildApp } from '../lib/app.ts';
import { repoRoot } from '../lib/config.ts';

/**
 * `npm run synth`: the cloud assembly in cdk.out without the CDK CLI or AWS credentials.
 * SYNTH_BUNDLE=false skips esbuild (templates only); CDK_OUTDIR moves the assembly elsewhere.
 */
const started = performance.now();
const bundle = process.env.SYNTH_BUNDLE !== 'false';
const outdir = resolve(repoRoot, process.env.CDK_OUTDIR ?? 'cdk.out');

const assembly = buildApp({ bundle, outdir }).app.synth();

let errors = 0;
for (const stack of assembly.stacks) {
  for (const message of stack.messages) {
    if (message.level === 'info') continue;
    if (message.level === 'error') errors++;
    console.error(`${message.level}: ${message.id}: ${String(message.entry.data)}`);
  }
}
for (const stack of assembly.stacks) console.log(relative(process.cwd(), stack.templateFullPath));
const seconds = ((performance.now() - started) / 1000).toFixed(1);
console.error(
  `synthesized ${assembly.stacks.length} stacks in ${seconds} s (bundling ${bundle ? 'on' : 'off'})`,
);
if (errors > 0) process.exitCode = 1;
