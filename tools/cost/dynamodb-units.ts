/**
 * DynamoDB write capacity from the items a write touched, by the rules AWS documents ("Item sizes and
 * formats", "Global secondary indexes: provisioned throughput considerations"). Read capacity comes from
 * the stand-in's engine (dynalite), which sizes the items it scanned, filters included.
 */
import type { DynamoItem, DynamoWrite } from '../../local/observe.ts';

type Value = Record<string, unknown>;

/** An item's size: each attribute's name in UTF-8 bytes plus its value's size. */
export function itemBytes(item: DynamoItem): number {
  return Object.entries(item).reduce(
    (sum, [name, value]) => sum + Buffer.byteLength(name) + valueBytes(value as Value),
    0,
  );
}

function valueBytes(value: Value): number {
  const [type, inner] = Object.entries(value)[0] ?? ['NULL', true];
  switch (type) {
    case 'S':
      return Buffer.byteLength(inner as string);
    case 'N':
      return numberBytes(inner as string);
    case 'B':
      return Buffer.from(inner as string, 'base64').length;
    case 'SS':
      return (inner as string[]).reduce((sum, text) => sum + Buffer.byteLength(text), 0);
    case 'NS':
      return (inner as string[]).reduce((sum, text) => sum + numberBytes(text), 0);
    case 'BS':
      return (inner as string[]).reduce((sum, data) => sum + Buffer.from(data, 'base64').length, 0);
    // A list or map: 3 bytes, and 1 byte for each element besides its own size.
    case 'L':
      return 3 + (inner as Value[]).reduce((sum, element) => sum + 1 + valueBytes(element), 0);
    case 'M':
      return (
        3 +
        Object.entries(inner as Record<string, Value>).reduce(
          (sum, [name, element]) => sum + 1 + Buffer.byteLength(name) + valueBytes(element),
          0,
        )
      );
    default:
      // BOOL and NULL.
      return 1;
  }
}

/** About 1 byte per two significant digits, plus 1 (leading and trailing zeros are not stored). */
function numberBytes(text: string): number {
  const digits = text
    .replace(/^-/, '')
    .replace(/[eE].*$/, '')
    .replace('.', '')
    .replace(/^0+/, '')
    .replace(/0+$/, '');
  return 1 + Math.ceil(Math.max(digits.length, 1) / 2);
}

const kilobytes = (bytes: number) => Math.max(1, Math.ceil(bytes / 1024));

export interface IndexSchema {
  name: string;
  keys: string[];
  projection: string;
  nonKeyAttributes: string[];
}

/**
 * The WRUs of one item of a write request. The table: the larger of the item before and after, per KB, at
 * least 1; twice that in a transaction (a ConditionCheck included); the same when the condition failed.
 * Each index the item is in before or after: one write of its entry to put, update or remove it, two when
 * its index key changed (remove the old entry, put the new one), none when its entry did not change.
 * Whether a transaction also doubles the index writes is not documented: they are counted once.
 */
export function writeUnits(
  write: DynamoWrite,
  request: { transactional: boolean; ok: boolean },
  table: { keys: string[]; indexes: IndexSchema[] },
): number {
  const larger = Math.max(
    write.before ? itemBytes(write.before) : 0,
    write.after ? itemBytes(write.after) : 0,
  );
  const tableUnits = kilobytes(larger) * (request.transactional ? 2 : 1);
  if (!request.ok || write.checkOnly) return tableUnits;
  let indexUnits = 0;
  for (const index of table.indexes) {
    const before = write.before && indexEntry(write.before, index, table.keys);
    const after = write.after && indexEntry(write.after, index, table.keys);
    if (!before && !after) continue;
    if (!before || !after) {
      indexUnits += kilobytes(itemBytes((before ?? after)!));
      continue;
    }
    const keyChanged = index.keys.some((key) => !sameValue(before[key], after[key]));
    if (keyChanged) indexUnits += kilobytes(itemBytes(before)) + kilobytes(itemBytes(after));
    else if (!sameValue(before, after)) indexUnits += kilobytes(itemBytes(after));
  }
  return tableUnits + indexUnits;
}

/** The item's entry in the index: null when it lacks an index key (a sparse index leaves it out). */
function indexEntry(item: DynamoItem, index: IndexSchema, tableKeys: string[]): DynamoItem | null {
  if (!index.keys.every((key) => item[key] !== undefined)) return null;
  if (index.projection === 'ALL') return item;
  const kept = new Set([...tableKeys, ...index.keys, ...index.nonKeyAttributes]);
  return Object.fromEntries(Object.entries(item).filter(([name]) => kept.has(name)));
}

/** Wire-format values are plain JSON; attribute order does not matter. */
function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(sorted(a)) === JSON.stringify(sorted(b));
}

function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sorted((value as Record<string, unknown>)[key])]),
  );
}
