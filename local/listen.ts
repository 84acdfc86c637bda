/** Where `npm start` listens, and what follows from it for outbound requests to this machine. */
import { classifyAddress, LOOPBACK_SETTING } from '#core/net/address-policy.ts';

const DEFAULT_HOST = '127.0.0.1';

export interface ListenPlan {
  host: string;
  /** Whether webhooks and `url` sources may reach loopback (the value OUTBOUND_ALLOW_LOOPBACK gets). */
  allowLoopback: boolean;
  /** Lines for the banner: the webhook rule, and the master key warning when others can reach the API. */
  notes: string[];
}

const isLoopbackHost = (host: string) => host === 'localhost' || classifyAddress(host) === 'loopback';

/**
 * A server that only this machine can reach may deliver webhooks to this machine's receivers: whoever
 * asks for that can reach them already. On the network that would let any caller make the server request
 * its own neighbours (SSRF), so loopback stays closed there whatever OUTBOUND_ALLOW_LOOPBACK says.
 */
export function planListen(env: NodeJS.ProcessEnv): ListenPlan {
  const host = env.HOST?.trim() || DEFAULT_HOST;
  const asked = env[LOOPBACK_SETTING];
  if (isLoopbackHost(host)) {
    const allowLoopback = asked === undefined || asked === '' ? true : asked === 'true' || asked === '1';
    return {
      host,
      allowLoopback,
      notes: [
        allowLoopback
          ? `webhooks may go to receivers on this machine (127.0.0.1, localhost): the API listens on ${host} only`
          : `webhooks to this machine (127.0.0.1, localhost) are refused: ${LOOPBACK_SETTING}=${asked}`,
      ],
    };
  }
  return {
    host,
    allowLoopback: false,
    notes: [
      `webhooks to this machine (127.0.0.1, localhost) are refused: the API listens on ${host}, beyond loopback` +
        (asked === 'true' || asked === '1' ? ` (${LOOPBACK_SETTING}=${asked} ignored)` : ''),
      `WARNING: anyone who can reach ${host} can try the master key; keep it secret, or set HOST=${DEFAULT_HOST}`,
    ],
  };
}

/** The one line a listen failure deserves, naming the setting that changes it; null for other errors. */
export function listenProblem(error: unknown, port: number, host: string): string | null {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (code === 'EADDRINUSE') {
    return `Port ${port} on ${host} is already in use (another npm start?): stop that server, or set PORT=<another port>`;
  }
  if (code === 'EADDRNOTAVAIL') {
    return `${host} is not an address of this machine: set HOST to one of its addresses, or 0.0.0.0 for all`;
  }
  if (code === 'EACCES') return `Port ${port} needs privileges here: set PORT above 1023`;
  return null;
}
