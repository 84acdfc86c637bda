import { describe, expect, it } from 'vitest';
import { listenProblem, planListen } from '../../../local/listen.ts';

describe('where npm start listens', () => {
  it('listens on loopback by default and then delivers webhooks to this machine', () => {
    const plan = planListen({});
    expect(plan).toMatchObject({ host: '127.0.0.1', allowLoopback: true });
    expect(plan.notes.join('\n')).toMatch(/webhooks may go to receivers on this machine/);
    expect(plan.notes.join('\n')).not.toMatch(/master key/);
  });

  it('keeps loopback closed when told so', () => {
    const plan = planListen({ OUTBOUND_ALLOW_LOOPBACK: 'false' });
    expect(plan.allowLoopback).toBe(false);
    expect(plan.notes[0]).toMatch(/refused: OUTBOUND_ALLOW_LOOPBACK=false/);
  });

  it('on the network refuses loopback targets whatever is asked, and warns about the master key', () => {
    const plan = planListen({ HOST: '0.0.0.0', OUTBOUND_ALLOW_LOOPBACK: 'true' });
    expect(plan).toMatchObject({ host: '0.0.0.0', allowLoopback: false });
    expect(plan.notes[0]).toMatch(/refused.*OUTBOUND_ALLOW_LOOPBACK=true ignored/);
    expect(plan.notes[1]).toMatch(/WARNING.*master key.*HOST=127\.0\.0\.1/);
  });

  it('turns a port clash into one line naming the port and the setting', () => {
    const clash = Object.assign(new Error('listen EADDRINUSE'), { code: 'EADDRINUSE' });
    expect(listenProblem(clash, 3000, '127.0.0.1')).toBe(
      'Port 3000 on 127.0.0.1 is already in use (another npm start?): stop that server, or set PORT=<another port>',
    );
    expect(listenProblem(new Error('other'), 3000, '127.0.0.1')).toBeNull();
  });
});
