import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { buildApp, synthesizeTemplates } from '../../lib/app.ts';
import { handlerMetadataKey, repoRoot } from '../../lib/config.ts';

const scratch = mkdtempSync(join(tmpdir(), 'photo-jobs-infra-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('synthesizeTemplates', () => {
  it('returns both templates with the handler metadata the local server maps by', () => {
    const { data, service } = synthesizeTemplates({ bundle: false });
    expect(Object.values(data.Resources).map((r) => r.Type)).toContain('AWS::DynamoDB::Table');
    const lambdas = Object.values(service.Resources).filter((r) => r.Type === 'AWS::Lambda::Function');
    expect(lambdas.length).toBeGreaterThan(0);
    for (const fn of lambdas) expect(fn.Metadata?.[handlerMetadataKey]).toEqual(expect.any(String));
  });

  it('without bundling stages no assets, so esbuild never ran', () => {
    const outdir = join(scratch, 'no-bundle');
    synthesizeTemplates({ bundle: false, outdir });
    expect(readdirSync(outdir).filter((name) => name.startsWith('asset.'))).toEqual([]);
  });
});

describe('CloudFormation validation', () => {
  it('finds nothing wrong with either template', () => {
    const outdir = join(scratch, 'validated');
    const assembly = buildApp({ bundle: false, outdir }).app.synth();
    const errors = assembly.stacks.flatMap((stack) => stack.messages).filter((m) => m.level === 'error');
    expect(errors).toEqual([]);
    const report = JSON.parse(readFileSync(join(outdir, 'validation-report.json'), 'utf8')) as {
      pluginReports: { violations?: unknown[] }[];
    };
    expect(report.pluginReports.flatMap((r) => r.violations ?? [])).toEqual([]);
  });
});

describe('bin/synth.ts', () => {
  it('writes both templates and prints their paths', async () => {
    const outdir = join(scratch, 'cdk.out');
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'bin/synth.ts'], {
      cwd: repoRoot,
      env: { ...process.env, SYNTH_BUNDLE: 'false', CDK_OUTDIR: outdir },
    });
    const printed = stdout
      .trim()
      .split('\n')
      .map((line) => resolve(repoRoot, line));
    expect(printed.sort()).toEqual(
      [join(outdir, 'PhotoJobsData.template.json'), join(outdir, 'PhotoJobsService.template.json')].sort(),
    );
    for (const path of printed) {
      expect(existsSync(path)).toBe(true);
      expect(JSON.parse(readFileSync(path, 'utf8'))).toHaveProperty('Resources');
    }
  });
});
