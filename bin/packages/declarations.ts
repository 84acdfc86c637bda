/**
 * The declaration files the packages ship, made with tsc from this repository's sources: the construct's
 * as a closure of files that import only its peer dependencies, the client's as one file that stands alone.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { repoRoot } from '../../lib/config.ts';

/** package.json's subpath imports (`#core/*`), which a declaration's specifiers may use. */
const subpathImports = (
  JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { imports: Record<string, string> }
).imports;

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
  for (const [pattern, replacement] of Object.entries(subpathImports)) {
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
export function declarationClosure(entry: string, allowedPackages: readonly string[]): Map<string, string> {
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
export function clientDeclarations(): string {
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
export async function formatted(text: string, fileName: string): Promise<string> {
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
