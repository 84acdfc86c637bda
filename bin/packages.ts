/**
 * `npm run packages [-- client|cdk]`: the two packages users install, built from this repository and
 * packed into dist/packages/*.tgz (docs/decisions/0054-what-users-install.md). The manifests are written
 * here; what they state (version, licence, the aws-cdk-lib and constructs ranges) comes from package.json.
 * - `photo-jobs-client`: the typed client and the `photo-jobs` CLI as ESM JavaScript with one declaration
 *   file, and no dependencies. Its types are the server's schemas, expanded into plain object types so that
 *   a consumer's compiler needs neither zod nor our sources.
 * - `photo-jobs-cdk`: the constructs as ESM and CommonJS with declarations; `aws-cdk-lib` and `constructs`
 *   are peer dependencies. It carries what CDK built from this repository at synth: each zip function's
 *   bundle (as a zip) and the inference image's build context (lib/config.ts `prebuilt`), so a deployer's
 *   app needs neither esbuild, sharp, onnxruntime-node nor the model weights; the image build fetches those.
 */
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import ts from 'typescript';
import yazl from 'yazl';
import { buildApp, type CfnTemplate } from '../lib/app.ts';
import { handlerMetadataKey, inference, prebuilt, repoRoot, stackNames } from '../lib/config.ts';
import { ESM_REQUIRE_BANNER } from '../lib/constructs/handler-function.ts';

const run = promisify(execFile);
const defaultOutRoot = path.join(repoRoot, 'dist', 'packages');
const rootManifest = JSON.parse(await readFile(path.join(repoRoot, 'package.json'), 'utf8')) as {
  version: string;
  license: string;
  engines: Record<string, string>;
  imports: Record<string, string>;
  devDependencies: Record<string, string>;
};

/** The names users search for (README, "From code and from a terminal"). */
export const PACKAGE_NAMES = { client: 'photo-jobs-client', cdk: 'photo-jobs-cdk' } as const;
type PackageKind = keyof typeof PACKAGE_NAMES;

const common = {
  version: rootManifest.version,
  license: rootManifest.license,
  type: 'module',
  engines: rootManifest.engines,
};

/**
 * One bundle of `entry`: ESM, or CommonJS for `require` (where `import.meta.url` is made from `__filename`,
 * so that lib/config.ts finds the package's own folder either way).
 */
async function bundle(
  entry: string,
  outfile: string,
  options: { external?: string[]; banner?: string; format?: 'esm' | 'cjs' } = {},
) {
  const format = options.format ?? 'esm';
  const shim =
    format === 'esm'
      ? ESM_REQUIRE_BANNER
      : "const __photoJobsImportMetaUrl = require('node:url').pathToFileURL(__filename).href;";
  await build({
    entryPoints: [path.join(repoRoot, entry)],
    outfile,
    bundle: true,
    format,
    platform: 'node',
    target: 'node20',
    external: options.external ?? [],
    banner: { js: [options.banner, shim].filter(Boolean).join('\n') },
    define: format === 'cjs' ? { 'import.meta.url': '__photoJobsImportMetaUrl' } : {},
    keepNames: true,
    legalComments: 'inline',
    logLevel: 'warning',
  });
}

/** The repository's compiler options (tsconfig.json), which every declaration here is emitted under. */
function compilerOptions(): ts.CompilerOptions {
  const config = ts.getParsedCommandLineOfConfigFile(
    path.join(repoRoot, 'tsconfig.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
      },
    },
  );
  if (!config) throw new Error('tsconfig.json could not be read');
  return config.options;
}

/** tsc's declarations of `entry` and every file it imports, in memory, by repo-relative `.d.ts` path. */
function emitDeclarations(entry: string): Map<string, string> {
  const options = {
    ...compilerOptions(),
    noEmit: false,
    declaration: true,
    emitDeclarationOnly: true,
    rootDir: repoRoot,
    outDir: path.join(repoRoot, '.declarations'),
  };
  const program = ts.createProgram([path.join(repoRoot, entry)], options);
  const emitted = new Map<string, string>();
  const result = program.emit(undefined, (file, text) =>
    emitted.set(path.relative(options.outDir, file), text),
  );
  const errors = result.diagnostics.filter((d) => d.category === ts.DiagnosticCategory.Error);
  if (errors.length > 0)
    throw new Error(
      ts.formatDiagnostics(errors, { ...ts.createCompilerHost(options), getNewLine: () => '\n' }),
    );
  return emitted;
}

/** Module specifiers of a declaration file: `import|export … from '…'` at a line's start, and `import('…')`. */
const SPECIFIER = /(^(?:import|export)\b[^;]*?\bfrom\s+|import\(\s*)(['"])([^'"]+)\2/gm;

/** Where a specifier of `fromFile` points, as a repo-relative `.d.ts` path; undefined for a package. */
function resolveDeclaration(specifier: string, fromFile: string): string | undefined {
  let target: string | undefined;
  if (specifier.startsWith('.')) target = path.join(path.dirname(fromFile), specifier);
  for (const [pattern, replacement] of Object.entries(rootManifest.imports)) {
    const prefix = pattern.replace(/\*$/, '');
    if (pattern.endsWith('*') ? specifier.startsWith(prefix) : specifier === pattern)
      target = path.normalize(
        pattern.endsWith('*') ? replacement.replace('*', specifier.slice(prefix.length)) : replacement,
      );
  }
  return target?.replace(/\.ts$/, '.d.ts');
}

/**
 * The declarations a consumer's compiler reads from `entry`: the entry and what it imports, transitively,
 * their specifiers made relative `.js` paths (which TypeScript maps to the `.d.ts` beside them). Throws if
 * they import a package other than `allowedPackages`, which a consumer would not have installed.
 */
function declarationClosure(entry: string, allowedPackages: readonly string[]): Map<string, string> {
  const emitted = emitDeclarations(entry);
  const closure = new Map<string, string>();
  const visit = (file: string) => {
    if (closure.has(file)) return;
    const text = emitted.get(file);
    if (text === undefined) throw new Error(`no declarations emitted for ${file}`);
    // Taken before its imports are visited, so that an import cycle ends here.
    closure.set(file, '');
    closure.set(
      file,
      text.replace(SPECIFIER, (all, lead: string, quote: string, specifier: string) => {
        const target = resolveDeclaration(specifier, file);
        if (!target) {
          const name = specifier
            .split('/')
            .slice(0, specifier.startsWith('@') ? 2 : 1)
            .join('/');
          if (!allowedPackages.includes(name) && !specifier.startsWith('node:'))
            throw new Error(`${file} imports ${specifier}, which the package does not depend on`);
          return all;
        }
        visit(target);
        let relative = path.relative(path.dirname(file), target).replace(/\.d\.ts$/, '.js');
        if (!relative.startsWith('.')) relative = `./${relative}`;
        return `${lead}${quote}${relative}${quote}`;
      }),
    );
  };
  visit(entry.replace(/\.ts$/, '.d.ts'));
  return closure;
}

/** A deep structural copy of a type, so that the checker prints it without the aliases it came through. */
const EXPAND_HELPER =
  'type __Expand<T> = T extends (...args: never[]) => unknown ? T : T extends Blob | Uint8Array ? T : T extends object ? { [K in keyof T]: __Expand<T[K]> } : T;';

/**
 * The client's declaration file, standing alone: tsc's declarations of client/index.ts, each type alias
 * that reaches into zod or the server's sources replaced by the plain type it stands for, as the checker
 * sees it, and those imports dropped.
 */
function clientDeclarations(): string {
  const entry = 'client/index.ts';
  const declared = emitDeclarations(entry).get('client/index.d.ts');
  if (!declared) throw new Error('no declarations emitted for client/index.ts');
  const file = ts.createSourceFile('index.d.ts', declared, ts.ScriptTarget.Latest, true);
  const imported = new Set<string>();
  for (const statement of file.statements)
    if (ts.isImportDeclaration(statement)) {
      const bindings = statement.importClause?.namedBindings;
      if (bindings && ts.isNamedImports(bindings))
        for (const element of bindings.elements) imported.add(element.name.text);
    }
  // An alias reaches into an import directly, or through another alias that does (`Out<'Job'>`).
  const reaching = new Set(imported);
  const mentionsReaching = (node: ts.Node): boolean =>
    (ts.isIdentifier(node) && reaching.has(node.text)) || ts.forEachChild(node, mentionsReaching) === true;
  const allAliases = file.statements.filter(ts.isTypeAliasDeclaration);
  let grown = true;
  while (grown) {
    grown = false;
    for (const alias of allAliases)
      if (!reaching.has(alias.name.text) && mentionsReaching(alias.type)) {
        reaching.add(alias.name.text);
        grown = true;
      }
  }
  const aliases = allAliases.filter((alias) => reaching.has(alias.name.text));
  const exported = aliases.filter((alias) =>
    alias.modifiers?.some((modifier) => modifier.kind === ts.SyntaxKind.ExportKeyword),
  );

  // Ask the checker for each alias's type through a scratch module beside the client.
  const scratch = path.join(repoRoot, 'client', '__expanded.ts');
  const source = [
    "import type * as Client from './index.ts';",
    EXPAND_HELPER,
    ...exported.map((alias) => `type ${alias.name.text} = __Expand<Client.${alias.name.text}>;`),
  ].join('\n');
  const options = compilerOptions();
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, language, ...rest) =>
    name === scratch ? ts.createSourceFile(name, source, language) : getSourceFile(name, language, ...rest);
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => name === scratch || fileExists(name);
  const program = ts.createProgram([scratch], options, host);
  const checker = program.getTypeChecker();
  const expanded = new Map<string, string>();
  for (const statement of program.getSourceFile(scratch)!.statements)
    if (ts.isTypeAliasDeclaration(statement) && !statement.name.text.startsWith('__'))
      expanded.set(
        statement.name.text,
        checker.typeToString(
          checker.getTypeAtLocation(statement.name),
          undefined,
          ts.TypeFormatFlags.NoTruncation | ts.TypeFormatFlags.InTypeAlias,
        ),
      );

  // Rewrite from the end, so that earlier positions stay valid.
  let text = declared;
  const edits: Array<{ start: number; end: number; replacement: string }> = [];
  for (const statement of file.statements) {
    if (ts.isImportDeclaration(statement))
      edits.push({ start: statement.getFullStart(), end: statement.getEnd(), replacement: '' });
    else if (ts.isTypeAliasDeclaration(statement) && aliases.includes(statement)) {
      const plain = expanded.get(statement.name.text);
      edits.push(
        plain === undefined
          ? { start: statement.getFullStart(), end: statement.getEnd(), replacement: '' }
          : { start: statement.type.getStart(), end: statement.type.getEnd(), replacement: plain },
      );
    }
  }
  for (const edit of edits.sort((a, b) => b.start - a.start))
    text = text.slice(0, edit.start) + edit.replacement + text.slice(edit.end);
  return text.trimStart();
}

/** The checker prints an expanded type on one line; Biome lays it out as the rest of our code. */
async function formatted(text: string, fileName: string): Promise<string> {
  const biome = spawn(
    path.join(repoRoot, 'node_modules/.bin/biome'),
    ['format', `--stdin-file-path=${fileName}`],
    {
      cwd: repoRoot,
    },
  );
  biome.stdin.end(text);
  const chunks: Buffer[] = [];
  biome.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
  const [code] = (await once(biome, 'close')) as [number];
  if (code !== 0) throw new Error(`biome could not format ${fileName}`);
  return Buffer.concat(chunks).toString('utf8');
}

/** The package's README (what npm shows) and its manifest, with what both packages state alike. */
async function describePackage(dir: string, readme: string, manifest: Record<string, unknown>) {
  await writeFile(path.join(dir, 'README.md'), `# ${manifest.name}\n\n${readme}\n`);
  await writeFile(
    path.join(dir, 'package.json'),
    `${JSON.stringify({ name: manifest.name, ...common, ...manifest }, null, 2)}\n`,
  );
}

async function buildClient(dir: string) {
  await bundle('client/index.ts', path.join(dir, 'index.js'));
  await bundle('client/bin.ts', path.join(dir, 'cli.js'), { banner: '#!/usr/bin/env node' });
  await writeFile(path.join(dir, 'index.d.ts'), await formatted(clientDeclarations(), 'index.d.ts'));
  await describePackage(
    dir,
    'The typed client and the `photo-jobs` command of the photo-jobs API: see the project README.',
    {
      name: PACKAGE_NAMES.client,
      description:
        'Typed client and CLI for the photo-jobs API (car photo jobs: plates, backgrounds, analysis).',
      keywords: ['photo-jobs', 'car photos', 'background removal', 'license plate', 'client'],
      exports: { '.': { types: './index.d.ts', default: './index.js' } },
      types: './index.d.ts',
      bin: { 'photo-jobs': './cli.js' },
      files: ['index.js', 'index.d.ts', 'cli.js'],
    },
  );
}

/** A zip with fixed times and modes, its entries sorted: the same bundle gives the same bytes (and hash). */
async function zipFolder(folder: string, zipFile: string) {
  const files: string[] = [];
  const walk = async (dir: string) => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) await walk(full);
      else files.push(full);
    }
  };
  await walk(folder);
  const zip = new yazl.ZipFile();
  for (const file of files.sort())
    zip.addFile(file, path.relative(folder, file).split(path.sep).join('/'), {
      mtime: new Date('1980-01-02T00:00:00Z'),
      mode: 0o100644,
    });
  zip.end();
  await mkdir(path.dirname(zipFile), { recursive: true });
  await pipeline(zip.outputStream, createWriteStream(zipFile));
}

/**
 * Keeps what CDK built from this repository's app with bundling on (`prebuilt/` of config.ts): from
 * `assembly`, a cloud assembly synthesized so already, or from a synth of its own.
 */
async function buildPrebuilt(dir: string, assembly?: string) {
  const outdir = assembly ?? (await mkdtemp(path.join(tmpdir(), 'photo-jobs-package-synth-')));
  try {
    if (!assembly) buildApp({ bundle: true, validate: false, outdir }).app.synth();
    const template = JSON.parse(
      await readFile(path.join(outdir, `${stackNames.service}.template.json`), 'utf8'),
    ) as CfnTemplate;
    // Where CDK staged each asset, by its hash (the template names an asset by its hash in Code).
    const assets = JSON.parse(
      await readFile(path.join(outdir, `${stackNames.service}.assets.json`), 'utf8'),
    ) as {
      files: Record<string, { source: { path: string } }>;
      dockerImages: Record<string, { source: { directory: string } }>;
    };
    const stagedBy = new Map<string, string>([
      ...Object.entries(assets.files).map(([hash, asset]) => [hash, asset.source.path] as const),
      ...Object.entries(assets.dockerImages).map(([hash, asset]) => [hash, asset.source.directory] as const),
    ]);
    for (const resource of Object.values(template.Resources)) {
      const handler = resource.Metadata?.[handlerMetadataKey] as string | undefined;
      if (!handler) continue;
      const code = JSON.stringify(resource.Properties?.Code);
      const hash = [...stagedBy.keys()].find((candidate) => code.includes(candidate));
      if (!hash) throw new Error(`no staged asset for ${handler}`);
      const staged = path.join(outdir, stagedBy.get(hash)!);
      if (handler === inference.handler)
        await cp(staged, path.join(dir, prebuilt.inferenceContext), {
          recursive: true,
        });
      else await zipFolder(staged, path.join(dir, prebuilt.bundleOf(handler)));
    }
  } finally {
    if (!assembly) await rm(outdir, { recursive: true, force: true });
  }
}

async function buildCdk(dir: string, assembly?: string) {
  // ESM for `import`, CommonJS for `require` (the app `cdk init --language javascript` makes).
  const external = ['aws-cdk-lib', 'aws-cdk-lib/*', 'constructs'];
  await bundle('lib/index.ts', path.join(dir, 'lib', 'index.js'), { external });
  await bundle('lib/index.ts', path.join(dir, 'lib', 'index.cjs'), { external, format: 'cjs' });
  for (const [file, text] of declarationClosure('lib/index.ts', ['aws-cdk-lib', 'constructs'])) {
    await mkdir(path.join(dir, 'types', path.dirname(file)), { recursive: true });
    await writeFile(path.join(dir, 'types', file), text);
  }
  await buildPrebuilt(dir, assembly);
  await describePackage(
    dir,
    "The photo-jobs service as an AWS CDK v2 construct: `new PhotoJobs(stack, 'Jobs', {})`. See docs/deploy.md of the project.",
    {
      name: PACKAGE_NAMES.cdk,
      description:
        'AWS CDK v2 construct of the photo-jobs service: HTTP API, Step Functions job workflow and ONNX inference on Lambda.',
      keywords: ['photo-jobs', 'awscdk', 'aws-cdk', 'cdk-construct', 'car photos'],
      exports: {
        '.': { types: './types/lib/index.d.ts', import: './lib/index.js', require: './lib/index.cjs' },
      },
      types: './types/lib/index.d.ts',
      peerDependencies: {
        'aws-cdk-lib': `^${rootManifest.devDependencies['aws-cdk-lib']}`,
        constructs: `^${rootManifest.devDependencies.constructs}`,
      },
      files: ['lib', 'types', 'prebuilt'],
    },
  );
}

/**
 * Builds one package in `<outRoot>/<kind>` and packs it into `outRoot`; returns the tarball's path. The
 * construct package takes its bundles from `assembly` when given (a cloud assembly of this app synthesized
 * with bundling on), else from a synth of its own.
 */
export async function buildPackage(
  kind: PackageKind,
  outRoot = defaultOutRoot,
  options: { assembly?: string } = {},
): Promise<{ tarball: string; unpackedBytes: number }> {
  const dir = path.join(outRoot, kind);
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  await (kind === 'client' ? buildClient(dir) : buildCdk(dir, options.assembly));
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', outRoot], {
    cwd: dir,
    maxBuffer: 16 * 1024 * 1024,
  });
  const [packed] = JSON.parse(stdout) as Array<{ filename: string; unpackedSize: number }>;
  return { tarball: path.join(outRoot, packed!.filename), unpackedBytes: packed!.unpackedSize };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const kinds = (
    process.argv.slice(2).length > 0 ? process.argv.slice(2) : ['client', 'cdk']
  ) as PackageKind[];
  for (const kind of kinds) {
    if (!(kind in PACKAGE_NAMES)) throw new Error(`unknown package ${kind}: client or cdk`);
    const started = performance.now();
    const { tarball, unpackedBytes } = await buildPackage(kind);
    console.log(
      `${PACKAGE_NAMES[kind]}: ${path.relative(process.cwd(), tarball)} (${(unpackedBytes / 1e6).toFixed(1)} MB unpacked, ${((performance.now() - started) / 1000).toFixed(0)} s)`,
    );
  }
}
