import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { inference, inferenceContextExcludes, repoRoot } from '../../lib/config.ts';
import { contextSources, dockerInstructions, parseDockerfile, parseEnv } from './support/dockerfile.ts';

const text = readFileSync(path.join(repoRoot, inference.dockerfile), 'utf8');
const dockerfile = parseDockerfile(text);
const instructions = dockerInstructions(text).map(({ keyword, args }) => `${keyword} ${args}`);
const tracked = execFileSync('git', ['ls-files'], { cwd: repoRoot, encoding: 'utf8' })
  .split('\n')
  .filter(Boolean);
const sources = contextSources(dockerfile);
const under = (file: string, dir: string) => file === dir || file.startsWith(`${dir}/`);

describe('the inference image', () => {
  it('copies from the build context only files tracked in git (or an earlier stage)', () => {
    expect(sources.length).toBeGreaterThan(0);
    for (const source of sources) {
      expect(source, 'a COPY source may not be a build argument').not.toMatch(/\$/);
      const clean = source.replace(/\/$/, '');
      expect(
        tracked.some((file) => under(file, clean)),
        `${source} is not tracked in git`,
      ).toBe(true);
    }
  });

  it('gets its models by the same fetch a fresh clone runs, with a mirror as a build argument', () => {
    expect(instructions).toContain('ARG MODELS_BASE_URL=');
    const fetchStep = instructions.find((line) => line.includes('bin/models.ts fetch'));
    expect(fetchStep).toMatch(/MODELS_BASE_URL="\$\{MODELS_BASE_URL\}"/);
    expect(fetchStep).toMatch(/bin\/models\.ts verify/);
  });

  it('sends the files the Dockerfile copies in the build context (the allow-list covers them)', () => {
    for (const source of sources) {
      const clean = source.replace(/\/$/, '');
      expect(
        inference.contextAllowList.some((rule) => under(clean, rule)),
        `${source} is outside the build context (lib/config.ts inference.contextAllowList)`,
      ).toBe(true);
    }
  });

  it('has an allow-list with nothing the Dockerfile does not copy', () => {
    for (const entry of inference.contextAllowList)
      expect(
        sources.some(
          (source) => under(source.replace(/\/$/, ''), entry) || under(entry, source.replace(/\/$/, '')),
        ),
        `${entry} is sent but never copied`,
      ).toBe(true);
  });

  it('has a /.dockerignore with the rules CDK applies (lib/config.ts is the source)', () => {
    const rules = readFileSync(path.join(repoRoot, '.dockerignore'), 'utf8')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line && !line.startsWith('#'));
    expect(rules).toEqual(inferenceContextExcludes);
  });

  it('installs with the npm settings of /.npmrc, which npm pack does not ship, as environment variables', () => {
    const npmrc = readFileSync(path.join(repoRoot, '.npmrc'), 'utf8')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line && !line.startsWith('#') && !line.startsWith(';'))
      .map((line) => line.split(/\s*=\s*(.*)/s))
      .map(([key = '', value = '']) => [`npm_config_${key.replaceAll('-', '_')}`, value]);
    const installing = dockerfile.stages.filter((stage) =>
      stage.instructions.some((i) => i.keyword === 'RUN' && /^npm ci\b/.test(i.args)),
    );
    expect(installing.length).toBeGreaterThan(0);
    for (const stage of installing) {
      const env = stage.instructions.filter((i) => i.keyword === 'ENV').flatMap((i) => parseEnv(i.args));
      expect(Object.fromEntries(env), `stage ${stage.name ?? 'final'}`).toMatchObject({
        ...Object.fromEntries(npmrc),
        // npm 10 in the base image ignores package.json "allowScripts": onnxruntime-node's own switch.
        ONNXRUNTIME_NODE_INSTALL: 'skip',
        ONNXRUNTIME_NODE_INSTALL_CUDA: 'skip',
      });
    }
    expect(sources).not.toContain('.npmrc');
  });
});
