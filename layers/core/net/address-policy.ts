import ipaddr from 'ipaddr.js';

export type AddressClass = 'public' | 'loopback' | 'private' | 'link-local' | 'reserved';

type IPv4 = ipaddr.IPv4;
type IPv6 = ipaddr.IPv6;

/** Only global unicast space is allocated for the public IPv6 internet. */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3') as [IPv6, number];
/** NAT64's well-known prefix carries a public IPv4 target (DNS64 answers with it); 64:ff9b:1::/48 is local use. */
const NAT64_WELL_KNOWN = ipaddr.parseCIDR('64:ff9b::/96') as [IPv6, number];

function classifyV4(address: IPv4): AddressClass {
  switch (address.range()) {
    case 'unicast':
      return 'public';
    case 'loopback':
      return 'loopback';
    case 'private':
    case 'carrierGradeNat':
      return 'private';
    // Includes 169.254.169.254, the cloud metadata service.
    case 'linkLocal':
      return 'link-local';
    default:
      return 'reserved';
  }
}

const embeddedV4 = (address: IPv6): IPv4 =>
  new ipaddr.IPv4([
    address.parts[6]! >> 8,
    address.parts[6]! & 255,
    address.parts[7]! >> 8,
    address.parts[7]! & 255,
  ]);

function classifyV6(address: IPv6): AddressClass {
  const range = address.range();
  // IPv4-mapped (::ffff:a.b.c.d), its RFC 6145 twin and NAT64 reach the IPv4 address inside them.
  if (range === 'ipv4Mapped' || range === 'rfc6145' || address.match(NAT64_WELL_KNOWN)) {
    return classifyV4(embeddedV4(address));
  }
  // ipaddr.js names more ranges than its type declarations list (deprecatedSiteLocal among them).
  switch (range as string) {
    case 'loopback':
      return 'loopback';
    case 'linkLocal':
      return 'link-local';
    case 'uniqueLocal':
    case 'deprecatedSiteLocal':
    case 'rfc6052':
      return 'private';
    case 'unicast':
      // Outside 2000::/3 "unicast" is unallocated or special (IPv4-compatible ::a.b.c.d among them).
      return address.match(GLOBAL_UNICAST_V6) ? 'public' : 'reserved';
    default:
      // 6to4 and Teredo are refused whatever they embed: a relay decides where they end up.
      return 'reserved';
  }
}

/**
 * Classify a literal IP address in any spelling ipaddr.js reads: dotted, decimal (`2130706433`), octal
 * (`0177.0.0.1`), hex (`0x7f.1`), short (`127.1`), bracketed or zoned IPv6. Anything that is not a literal
 * address is refused as reserved.
 */
export function classifyAddress(text: string): AddressClass {
  const bare = text.replace(/^\[|\]$/g, '');
  if (!ipaddr.isValid(bare)) return 'reserved';
  const address = ipaddr.parse(bare);
  return address.kind() === 'ipv4' ? classifyV4(address as IPv4) : classifyV6(address as IPv6);
}

/** Whether a host is an IP literal in any spelling (as opposed to a name to resolve). */
export const isAddressLiteral = (host: string): boolean => ipaddr.isValid(host.replace(/^\[|\]$/g, ''));

/** Outbound requests go to public addresses only; loopback only when explicitly allowed (local tests). */
export function isAllowedTarget(address: string, options: { allowLoopback: boolean }): boolean {
  const kind = classifyAddress(address);
  return kind === 'public' || (kind === 'loopback' && options.allowLoopback);
}

/** The setting that opens loopback to outbound requests; named in every refusal that it would lift. */
export const LOOPBACK_SETTING = 'OUTBOUND_ALLOW_LOOPBACK';
