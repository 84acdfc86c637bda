import { describe, expect, it } from 'vitest';
import { classifyAddress, isAllowedTarget } from '#core/net/address-policy.ts';
import { webhookTargetProblem } from '#core/net/webhook-target.ts';

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
    // Other spellings of IPv4 (what a URL parser or a resolver may hand over).
    ['2130706433', 'loopback'],
    ['0x7f000001', 'loopback'],
    ['0177.0.0.1', 'loopback'],
    ['0x7f.1', 'loopback'],
    ['127.1', 'loopback'],
    ['017700000001', 'loopback'],
    ['0xa9.0xfe.0xa9.0xfe', 'link-local'],
    ['2852039166', 'link-local'],
    ['012.0.0.1', 'private'],
    ['3232235777', 'private'],
    // IPv6 transition forms carrying a private or loopback IPv4.
    ['::ffff:10.0.0.1', 'private'],
    ['[::ffff:7f00:1]', 'loopback'],
    ['::ffff:0:a00:1', 'private'],
    ['::10.0.0.1', 'private'],
    ['::a00:1', 'reserved'],
    ['::127.0.0.1', 'loopback'],
    ['64:ff9b::a9fe:a9fe', 'link-local'],
    ['64:ff9b::8.8.8.8', 'public'],
    ['64:ff9b:1::a00:1', 'private'],
    ['2002:a00:1::1', 'reserved'],
    ['2002:7f00:1::', 'reserved'],
    ['2002:808:808::1', 'reserved'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'reserved'],
    ['2001:0::f5ff:fffe', 'reserved'],
    // Site-local, unique-local, zoned and other special IPv6.
    ['fec0::1', 'private'],
    ['feff::1', 'private'],
    ['fc00::1', 'private'],
    ['fdff:ffff::1', 'private'],
    ['fe80::1%eth0', 'link-local'],
    ['ff02::1', 'reserved'],
    ['2001:db8::1', 'reserved'],
    ['100::1', 'reserved'],
    ['4000::1', 'reserved'],
    ['127.0.0.1%eth0', 'reserved'],
    ['255.255.255.255', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['2a00:1450:4001::200e', 'public'],
  ])('classifies %s as %s', (address, expected) => {
    expect(classifyAddress(address)).toBe(expected);
  });

  it('allows loopback only when explicitly opted in', () => {
    expect(isAllowedTarget('127.0.0.1', { allowLoopback: false })).toBe(false);
    expect(isAllowedTarget('127.0.0.1', { allowLoopback: true })).toBe(true);
    expect(isAllowedTarget('10.0.0.1', { allowLoopback: true })).toBe(false);
    expect(isAllowedTarget('169.254.169.254', { allowLoopback: true })).toBe(false);
  });

  it.each([
    'http://127.0.0.1:8792/hook',
    'http://localhost:8792/hook',
    'http://api.localhost/hook',
    'http://[::1]/hook',
    'http://127.1/hook',
    'http://2130706433/hook',
    'https://0x7f.1/hook',
    'http://[::ffff:127.0.0.1]/hook',
  ])('refuses the loopback webhook %s by naming the setting that allows it', async (url) => {
    await expect(webhookTargetProblem(url, { allowLoopback: false })).resolves.toMatch(
      /loopback.*OUTBOUND_ALLOW_LOOPBACK=true/,
    );
    await expect(webhookTargetProblem(url, { allowLoopback: true })).resolves.toBeNull();
  });

  it('refuses private and metadata webhooks whatever the setting, and leaves names to delivery', async () => {
    for (const allowLoopback of [false, true]) {
      const problem = (url: string) => webhookTargetProblem(url, { allowLoopback });
      await expect(problem('http://10.0.0.1/hook')).resolves.toMatch(/private address/);
      await expect(problem('http://169.254.169.254/')).resolves.toMatch(/link-local/);
      await expect(problem('http://0xa9fea9fe/')).resolves.toMatch(/link-local/);
      await expect(problem('http://10.0.0.1/hook')).resolves.not.toMatch(/OUTBOUND/);
      await expect(problem('https://hooks.example.com/x')).resolves.toBeNull();
      await expect(problem('https://1.2.3.4.example.com/x')).resolves.toBeNull();
    }
  });
});
