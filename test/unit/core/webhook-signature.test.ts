import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  generateWebhookSecret,
  parseSignatureHeader,
  ROTATION_OVERLAP_SECONDS,
  rotateSecrets,
  SIGNATURE_TOLERANCE_SECONDS,
  signatureHeader,
  signingSecrets,
  verifySignature,
  type WebhookSecret,
} from '#core/webhooks/signature.ts';

const body = JSON.stringify({ job_id: 'job_1', status: 'success', result: true });
const t = 1_800_000_000;
const secret = 'whsec_test_secret';

describe('webhook signature', () => {
  it('is t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.body">, as a receiver computes it by hand', () => {
    const header = signatureHeader([secret], t, body);
    const expected = createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');
    expect(header).toBe(`t=${t},v1=${expected}`);
    expect(parseSignatureHeader(header)).toEqual({ timestamp: t, signatures: [expected] });
  });

  it('verifies with the secret, the raw body and a clock inside the window', () => {
    const header = signatureHeader([secret], t, body);
    expect(verifySignature({ header, body, secret, nowSeconds: t })).toBe(true);
    expect(verifySignature({ header, body: Buffer.from(body), secret, nowSeconds: t + 10 })).toBe(true);
  });

  it('refuses another secret, a changed body or a changed timestamp', () => {
    const header = signatureHeader([secret], t, body);
    expect(verifySignature({ header, body, secret: 'whsec_other', nowSeconds: t })).toBe(false);
    expect(verifySignature({ header, body: body.replace('success', 'failed'), secret, nowSeconds: t })).toBe(
      false,
    );
    // The receiver's own serialization of the parsed body is not the signed bytes.
    expect(
      verifySignature({ header, body: JSON.stringify(JSON.parse(body), null, 2), secret, nowSeconds: t }),
    ).toBe(false);
    const moved = header.replace(`t=${t}`, `t=${t + 60}`);
    expect(verifySignature({ header: moved, body, secret, nowSeconds: t + 60 })).toBe(false);
  });

  it('refuses a replay outside the window, in the past or the future', () => {
    const header = signatureHeader([secret], t, body);
    const window = SIGNATURE_TOLERANCE_SECONDS;
    expect(window).toBe(300);
    expect(verifySignature({ header, body, secret, nowSeconds: t + window })).toBe(true);
    expect(verifySignature({ header, body, secret, nowSeconds: t + window + 1 })).toBe(false);
    expect(verifySignature({ header, body, secret, nowSeconds: t - window - 1 })).toBe(false);
    expect(verifySignature({ header, body, secret, nowSeconds: t + 3600, toleranceSeconds: 7200 })).toBe(
      true,
    );
  });

  it.each([null, '', 'v1=abc', `t=${t}`, `t=${t},v1=zz`, 'garbage'])(
    'refuses the malformed header %j',
    (header) => {
      expect(verifySignature({ header, body, secret, nowSeconds: t })).toBe(false);
    },
  );

  it('makes random, prefixed secrets', () => {
    const a = generateWebhookSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(generateWebhookSecret()).not.toBe(a);
  });
});

describe('webhook secret rotation', () => {
  const created = new Date('2026-11-01T00:00:00.000Z');
  const rotatedAt = new Date('2026-11-22T08:00:00.000Z');
  const original: WebhookSecret[] = [{ secret: 'whsec_old', createdAt: created.toISOString() }];

  it('puts the new secret first and lets the old one overlap for 24 hours', () => {
    const rotated = rotateSecrets(original, 'whsec_new', rotatedAt);
    expect(ROTATION_OVERLAP_SECONDS).toBe(24 * 3600);
    expect(rotated).toEqual([
      { secret: 'whsec_new', createdAt: rotatedAt.toISOString() },
      { secret: 'whsec_old', createdAt: created.toISOString(), expiresAt: '2026-11-23T08:00:00.000Z' },
    ]);
  });

  it('signs with both during the overlap, so either secret verifies', () => {
    const rotated = rotateSecrets(original, 'whsec_new', rotatedAt);
    const during = new Date(rotatedAt.getTime() + 3600_000);
    expect(signingSecrets(rotated, during)).toEqual(['whsec_new', 'whsec_old']);
    const now = Math.floor(during.getTime() / 1000);
    const header = signatureHeader(signingSecrets(rotated, during), now, body);
    expect(parseSignatureHeader(header).signatures).toHaveLength(2);
    for (const key of ['whsec_new', 'whsec_old']) {
      expect(verifySignature({ header, body, secret: key, nowSeconds: now })).toBe(true);
    }
  });

  it('stops signing with the old secret when the overlap ends', () => {
    const rotated = rotateSecrets(original, 'whsec_new', rotatedAt);
    const after = new Date(rotatedAt.getTime() + ROTATION_OVERLAP_SECONDS * 1000 + 1);
    expect(signingSecrets(rotated, after)).toEqual(['whsec_new']);
    const now = Math.floor(after.getTime() / 1000);
    const header = signatureHeader(signingSecrets(rotated, after), now, body);
    expect(verifySignature({ header, body, secret: 'whsec_old', nowSeconds: now })).toBe(false);
  });

  it('never extends an overlap and drops expired secrets on the next rotation', () => {
    const first = rotateSecrets(original, 'whsec_b', rotatedAt);
    const soon = new Date(rotatedAt.getTime() + 3600_000);
    const second = rotateSecrets(first, 'whsec_c', soon);
    expect(second.map((entry) => [entry.secret, entry.expiresAt])).toEqual([
      ['whsec_c', undefined],
      ['whsec_b', '2026-11-23T09:00:00.000Z'],
      ['whsec_old', '2026-11-23T08:00:00.000Z'],
    ]);
    const later = new Date(rotatedAt.getTime() + 2 * ROTATION_OVERLAP_SECONDS * 1000);
    expect(rotateSecrets(second, 'whsec_d', later).map((entry) => entry.secret)).toEqual([
      'whsec_d',
      'whsec_c',
    ]);
  });
});

describe('the verification example in docs/webhooks.md', () => {
  const markdown = readFileSync(new URL('../../../docs/webhooks.md', import.meta.url), 'utf8');
  const block = markdown.match(/```js\n([\s\S]*?function verifyWebhook[\s\S]*?)```/)?.[1] ?? '';
  const source = block.replace(/^import .*$/m, '').replace('export function', 'function');
  const verifyWebhook = new Function('createHmac', 'timingSafeEqual', `${source}; return verifyWebhook;`)(
    createHmac,
    timingSafeEqual,
  ) as (rawBody: string, header: string | undefined, secret: string) => boolean;

  it('is about ten lines', () => {
    expect(block.trim().split('\n').length).toBeLessThanOrEqual(12);
  });

  it('accepts what the service signs, with one secret or two', () => {
    const now = Math.floor(Date.now() / 1000);
    expect(verifyWebhook(body, signatureHeader([secret], now, body), secret)).toBe(true);
    expect(verifyWebhook(body, signatureHeader(['whsec_new', secret], now, body), secret)).toBe(true);
  });

  it('refuses a changed body, another secret, an old timestamp and no header', () => {
    const now = Math.floor(Date.now() / 1000);
    expect(verifyWebhook(`${body} `, signatureHeader([secret], now, body), secret)).toBe(false);
    expect(verifyWebhook(body, signatureHeader([secret], now, body), 'whsec_other')).toBe(false);
    expect(verifyWebhook(body, signatureHeader([secret], now - 301, body), secret)).toBe(false);
    expect(verifyWebhook(body, undefined, secret)).toBe(false);
    expect(verifyWebhook(body, `t=${now},v1=xyz`, secret)).toBe(false);
  });
});
