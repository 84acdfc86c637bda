/** RFC 6761: `localhost` and every name under it are loopback, whatever a resolver answers. */
const isLocalhostName = (host: string) => /^(.+\.)?localhost\.?$/i.test(host);

/**
 * Whether an http(s) URL's host may be an IP literal. The URL parser writes such a host's IPv4 address in
 * any spelling (`0x7f.1`, `2130706433`) as dotted decimal and an IPv6 one in brackets, so any other host is
 * a name; for other schemes the host is left as sent, and only the address parser can tell.
 */
const mayBeLiteral = (url: URL) =>
  !['http:', 'https:'].includes(url.protocol) ||
  url.hostname.startsWith('[') ||
  /^[\d.]+$/.test(url.hostname);

/**
 * Why a webhook URL can never be delivered to, or null when it may be. Only what is known without a DNS
 * lookup is judged here (literal addresses and `localhost`); a name is still checked at each attempt.
 * A refusal at creation beats a job whose every delivery fails with the reason visible only in /deliveries.
 * The address parser (./address-policy.ts, ipaddr.js) is imported only for a host that may be a literal:
 * it cost every cold start of the functions that check a webhook, most of which name none or a host name.
 */
export async function webhookTargetProblem(
  url: string,
  options: { allowLoopback: boolean },
): Promise<string | null> {
  const parsed = new URL(url);
  const host = parsed.hostname;
  const localhost = isLocalhostName(host);
  if (!localhost && !mayBeLiteral(parsed)) return null;
  const { classifyAddress, isAddressLiteral, LOOPBACK_SETTING } = await import('./address-policy.ts');
  const kind = localhost ? 'loopback' : isAddressLiteral(host) ? classifyAddress(host) : 'public';
  if (kind === 'public' || (kind === 'loopback' && options.allowLoopback)) return null;
  if (kind === 'loopback') {
    return (
      `webhook_url points to a loopback address (${host}), which this server does not deliver to; ` +
      `a server run on your own machine delivers there with ${LOOPBACK_SETTING}=true (docs/webhooks.md)`
    );
  }
  return `webhook_url points to a ${kind} address (${host}), which webhooks are never delivered to`;
}
