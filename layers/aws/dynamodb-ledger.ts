import type { TransactWriteItem } from '@aws-sdk/client-dynamodb';
import type { LedgerEntry } from '#core/credits/ledger.ts';
import { type Item, keys, num, str } from './dynamodb-items.ts';

export const ledgerPartition = (account: string): string => `LEDGER#${account}`;

/**
 * A ledger entry as a conditional put. Its sort key names the job version the movement belongs to,
 * so the entry can only ever be written once, in the same transaction as the balance change.
 */
export function ledgerWrite(
  table: string,
  account: string,
  entry: LedgerEntry,
  reference: string,
): TransactWriteItem {
  return {
    Put: {
      TableName: table,
      Item: {
        pk: { S: ledgerPartition(account) },
        sk: { S: `${entry.at}#${reference}#${entry.kind}` },
        kind: { S: entry.kind },
        amount: { N: String(entry.amount) },
        ...(entry.jobId ? { job_id: { S: entry.jobId } } : {}),
        at: { S: entry.at },
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    },
  };
}

export const ledgerEntryOf = (item: Item): LedgerEntry => ({
  kind: str(item, 'kind') as LedgerEntry['kind'],
  amount: num(item, 'amount'),
  jobId: str(item, 'job_id') ?? null,
  at: str(item, 'at')!,
});

/** The account item with its opening grant, for a transaction. */
export function openAccountWrites(
  table: string,
  account: string,
  credits: number,
  at: string,
): TransactWriteItem[] {
  return [
    {
      Put: {
        TableName: table,
        Item: {
          ...keys.account(account),
          available: { N: String(credits) },
          reserved: { N: '0' },
          used_total: { N: '0' },
          in_flight: { N: '0' },
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    ledgerWrite(table, account, { kind: 'grant', amount: credits, jobId: null, at }, 'open'),
  ];
}
