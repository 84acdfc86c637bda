/**
 * Just enough of the Dockerfile syntax for the infra tests to read functions/inference/Dockerfile and to
 * rehearse its build without Docker: continuation lines joined, comments dropped, instructions grouped by
 * stage. No heredocs, no JSON-form COPY (the Dockerfile uses neither; the parser refuses them).
 */
export interface Instruction {
  /** Upper case: `COPY`, `RUN`, ... */
  keyword: string;
  /** Everything after the keyword, as written. */
  args: string;
}

export interface Stage {
  /** The `AS` name; the final stage has none. */
  name?: string;
  base: string;
  instructions: Instruction[];
}

export interface Dockerfile {
  /** `ARG`s before the first `FROM` (usable in `FROM` lines only, unless redeclared in a stage). */
  globalArgs: Instruction[];
  stages: Stage[];
}

/** Logical instructions: continuation lines joined, comments and blank lines dropped. */
export function dockerInstructions(text: string): Instruction[] {
  return text
    .split('\n')
    .filter((line) => !line.trim().startsWith('#'))
    .join('\n')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => {
      const [keyword = '', args = ''] = line.split(/\s+(.*)/s);
      if (/<</.test(args) || (keyword.toUpperCase() === 'COPY' && args.startsWith('[')))
        throw new Error(`unsupported Dockerfile syntax: ${line}`);
      return { keyword: keyword.toUpperCase(), args: args.trim() };
    });
}

export function parseDockerfile(text: string): Dockerfile {
  const result: Dockerfile = { globalArgs: [], stages: [] };
  for (const instruction of dockerInstructions(text)) {
    if (instruction.keyword === 'FROM') {
      const [base = '', as, name] = instruction.args.split(/\s+/);
      result.stages.push({ base, name: as?.toUpperCase() === 'AS' ? name : undefined, instructions: [] });
    } else if (result.stages.length === 0) {
      if (instruction.keyword !== 'ARG') throw new Error(`${instruction.keyword} before FROM`);
      result.globalArgs.push(instruction);
    } else {
      result.stages.at(-1)!.instructions.push(instruction);
    }
  }
  return result;
}

export interface Copy {
  /** `--from=<stage>`, when the sources come from an earlier stage instead of the build context. */
  from?: string;
  sources: string[];
  destination: string;
}

export function parseCopy(args: string): Copy {
  const words = args.split(/\s+/);
  const flags = words.filter((word) => word.startsWith('--'));
  const paths = words.filter((word) => !word.startsWith('--'));
  const from = flags.find((flag) => flag.startsWith('--from='))?.slice('--from='.length);
  if (paths.length < 2) throw new Error(`COPY needs a source and a destination: ${args}`);
  return { from, sources: paths.slice(0, -1), destination: paths.at(-1)! };
}

/** Every build-context COPY source of every stage. */
export function contextSources(dockerfile: Dockerfile): string[] {
  return dockerfile.stages.flatMap((stage) =>
    stage.instructions
      .filter((instruction) => instruction.keyword === 'COPY')
      .map((instruction) => parseCopy(instruction.args))
      .filter((copy) => copy.from === undefined)
      .flatMap((copy) => copy.sources),
  );
}

/** `ENV a=1 b=2` (or the old `ENV a 1`) as pairs; values unquoted, no spaces inside them. */
export function parseEnv(args: string): Array<[string, string]> {
  if (!args.includes('=')) {
    const [name = '', value = ''] = args.split(/\s+(.*)/s);
    return [[name, value]];
  }
  return args.split(/\s+/).map((pair) => {
    const [name = '', value = ''] = pair.split(/=(.*)/s);
    return [name, value.replace(/^"(.*)"$/, '$1')];
  });
}
