import { BadRequestError } from '../errors.ts';
import type { KeyDefaults } from '../keys/api-key.ts';
import type { Aspect, Background, Framing, JobParams, OutputFormat } from './job.ts';

/** Legacy names from the `/process` route (spec 2.1). */
export const NAMED_PLATE_COLORS = {
  black: '#000000',
  white: '#ffffff',
  graphite: '#141414',
} as const;

export const DEFAULT_PLATE_COLOR: string = NAMED_PLATE_COLORS.graphite;

const BY_NAME: ReadonlyMap<string, string> = new Map(Object.entries(NAMED_PLATE_COLORS));

/** The legacy colour names `normalizePlateColor` accepts besides `#RRGGBB`. */
export const PLATE_COLOR_NAMES = [...BY_NAME.keys()];

export function normalizePlateColor(raw: string): string {
  const value = raw.trim().toLowerCase();
  const named = BY_NAME.get(value);
  if (named) return named;
  if (/^#[0-9a-f]{6}$/.test(value)) return value;
  throw new BadRequestError(`plate_color must be #RRGGBB or one of ${PLATE_COLOR_NAMES.join(', ')}`);
}

/** Each true spelling beside its false one; `parseBooleanish` accepts them in any case. */
const SPELLING_PAIRS = [
  ['true', 'false'],
  ['1', '0'],
  ['smooth', 'raw'],
  ['yes', 'no'],
  ['on', 'off'],
] as const;
const TRUE_SPELLINGS = new Set<string>(SPELLING_PAIRS.map(([yes]) => yes));
const FALSE_SPELLINGS = new Set<string>(SPELLING_PAIRS.map(([, no]) => no));
/** What `parseBooleanish` accepts as text (besides the booleans themselves). */
export const BOOLEAN_SPELLINGS: readonly string[] = SPELLING_PAIRS.flat();

export function parseBooleanish(field: string, raw: string | boolean): boolean {
  if (typeof raw === 'boolean') return raw;
  const value = raw.trim().toLowerCase();
  if (TRUE_SPELLINGS.has(value)) return true;
  if (FALSE_SPELLINGS.has(value)) return false;
  throw new BadRequestError(`${field} must be true/false, 1/0 or smooth/raw`);
}

export interface RequestedParams {
  plateColor?: string;
  plateSmoothing?: boolean;
  plateMaskOnly?: boolean;
  background?: Background;
  backgroundFileKey?: string;
  webhookUrl?: string;
  requirePlate?: boolean;
  format?: OutputFormat;
  maxWidth?: number;
  framing?: Framing;
  shadow?: boolean;
  aspect?: Aspect;
  requireExterior?: boolean;
}

/** The output options: taken from the request alone (a key stores no default for them). */
const outputParams = (requested: RequestedParams) => ({
  format: requested.format ?? null,
  maxWidth: requested.maxWidth ?? null,
  // A canvas shape only exists for a centred car, so asking for one asks for the centring too.
  framing: requested.framing ?? (requested.aspect && requested.aspect !== 'keep' ? 'center' : null),
  shadow: requested.shadow ?? null,
  aspect: requested.aspect ?? null,
  requireExterior: requested.requireExterior ?? null,
});

/** Request over key default over service default (spec 2.1). */
export function resolveParams(requested: RequestedParams, defaults: KeyDefaults): JobParams {
  return {
    plateColor: requested.plateColor ?? defaults.plateColor ?? DEFAULT_PLATE_COLOR,
    plateSmoothing: requested.plateSmoothing ?? defaults.plateSmoothing ?? true,
    plateMaskOnly: requested.plateMaskOnly ?? defaults.plateMaskOnly ?? false,
    // A custom file beats any preset; the key's stored file beats the service's preset.
    backgroundFileKey:
      requested.backgroundFileKey ?? (requested.background ? null : (defaults.backgroundFileKey ?? null)),
    background: requested.background ?? defaults.background ?? 'studio',
    webhookUrl: requested.webhookUrl ?? defaults.webhookUrl ?? null,
    ...(requested.requirePlate ? { requirePlate: true } : {}),
    ...outputParams(requested),
  };
}
