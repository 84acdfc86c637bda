import { isIP } from 'node:net';

export type AddressClass = 'public' | 'loopback' | 'private' | 'link-local' | 'reserved';

const V4_RANGES: Array<[string, number, AddressClass]> = [
  ['0.0.0.0', 8, 'reserved'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'private'],
  ['127.0.0.0', 8, 'loopback'],
  // Includes 169.254.169.254, the cloud metadata service.
  ['169.254.0.0', 16, 'link-local'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'reserved'],
  ['192.0.2.0', 24, 'reserved'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'reserved'],
  ['198.51.100.0', 24, 'reserved'],
  ['203.0.113.0', 24, 'reserved'],
  ['224.0.0.0', 4, 'reserved'],
  ['240.0.0.0', 4, 'reserved'],
];

function v4ToInt(address: string): number {
  return address.split('.').reduce((acc, part) => (acc << 8) + Number(part), 0) >>> 0;
}

function classifyV4(address: string): AddressClass {
  const value = v4ToInt(address);
  for (const [base, bits, kind] of V4_RANGES) {
    const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
    if ((value & mask) === (v4ToInt(base) & mask)) return kind;
  }
  return 'public';
}

/** Expand an IPv6 address into its 8 groups (embedded dotted IPv4 included). */
function v6Groups(address: string): number[] {
  let text = address.toLowerCase().split('%')[0]!;
  const dotted = text.match(/(\d+\.\d+\.\d+\.\d+)$/);
  if (dotted) {
    const v4 = v4ToInt(dotted[1]!);
    text = text.replace(dotted[1]!, `${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`);
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const headGroups = head ? head.split(':').filter(Boolean) : [];
  const tailGroups = tail ? tail.split(':').filter(Boolean) : [];
  const fill = tail === undefined ? [] : Array(8 - headGroups.length - tailGroups.length).fill('0');
  return [...headGroups, ...fill, ...tailGroups].map((group) => Number.parseInt(group, 16));
}

function classifyV6(address: string): AddressClass {
  const g = v6Groups(address);
  const embeddedV4 = () => `${g[6]! >> 8}.${g[6]! & 255}.${g[7]! >> 8}.${g[7]! & 255}`;
  if (g.every((group) => group === 0)) return 'reserved';
  if (g.slice(0, 7).every((group) => group === 0) && g[7] === 1) return 'loopback';
  // IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d) and NAT64 (64:ff9b::a.b.c.d) carry an IPv4 target.
  if (g.slice(0, 5).every((group) => group === 0) && (g[5] === 0xffff || g[5] === 0))
    return classifyV4(embeddedV4());
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((group) => group === 0))
    return classifyV4(embeddedV4());
  if ((g[0]! & 0xfe00) === 0xfc00) return 'private';
  if ((g[0]! & 0xffc0) === 0xfe80) return 'link-local';
  if ((g[0]! & 0xff00) === 0xff00) return 'reserved';
  if (g[0] === 0x2001 && g[1] === 0x0db8) return 'reserved';
  return 'public';
}

/** Classify a literal IP address; anything that is not a literal address is refused as reserved. */
export function classifyAddress(address: string): AddressClass {
  const family = isIP(address.replace(/^\[|\]$/g, ''));
  if (family === 4) return classifyV4(address);
  if (family === 6) return classifyV6(address.replace(/^\[|\]$/g, ''));
  return 'reserved';
}

/** Outbound requests go to public addresses only; loopback only when explicitly allowed (local tests). */
export function isAllowedTarget(address: string, options: { allowLoopback: boolean }): boolean {
  const kind = classifyAddress(address);
  return kind === 'public' || (kind === 'loopback' && options.allowLoopback);
}
