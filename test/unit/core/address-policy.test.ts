import { describe, expect, it } from 'vitest';
import { classifyAddress, isAllowedTarget } from '#core/net/address-policy.ts';

// Pure classification only: no test ever connects to any of these addresses.
describe('outbound address policy', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.9.9.9', 'loopback'],
    ['::1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['fe80::1', 'link-local'],
    ['fd00::1', 'private'],
    ['0.0.0.0', 'reserved'],
    ['::', 'reserved'],
    ['224.0.0.1', 'reserved'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['::ffff:a9fe:a9fe', 'link-local'],
    ['64:ff9b::10.0.0.1', 'private'],
    ['8.8.8.8', 'public'],
    ['172.32.0.1', 'public'],
    ['2606:4700::1111', 'public'],
    ['not-an-ip', 'reserved'],
  ])('classifies %s as %s', (address, expected) => {
    expect(classifyAddress(address)).toBe(expected);
  });

  it('allows loopback only when explicitly opted in', () => {
    expect(isAllowedTarget('127.0.0.1', { allowLoopback: false })).toBe(false);
    expect(isAllowedTarget('127.0.0.1', { allowLoopback: true })).toBe(true);
    expect(isAllowedTarget('10.0.0.1', { allowLoopback: true })).toBe(false);
    expect(isAllowedTarget('169.254.169.254', { allowLoopback: true })).toBe(false);
  });
});
