import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { Client } from '../client/client.js';
import { ReconcileFence } from './fence.js';

/** A client that records the signal it was fenced with: all the fence asks of one. */
const fakeClient = () => {
  const fencedWith: AbortSignal[] = [];
  const client = { withSignal: (s: AbortSignal) => (fencedWith.push(s), { fencedBy: s }) } as unknown as Client;
  return { client, fencedWith };
};

describe('ReconcileFence', () => {
  it("aborts a signal already handed out when the term ends, with the term's reason", () => {
    const term = new AbortController();
    const fence = new ReconcileFence(term.signal, fakeClient().client);
    const signal = fence.signal;
    expect(signal.aborted).toBe(false);
    term.abort(new Error('leader lease lost'));
    expect(signal.aborted).toBe(true);
    expect((signal.reason as Error).message).toBe('leader lease lost');
  });

  it('hands out an aborted signal when asked after the term ended or the reconcile timed out', () => {
    const term = new AbortController();
    const ended = new ReconcileFence(term.signal, fakeClient().client);
    term.abort(new Error('shutting down'));
    expect(ended.signal.aborted).toBe(true);
    expect((ended.signal.reason as Error).message).toBe('shutting down');

    const timedOut = new ReconcileFence(new AbortController().signal, fakeClient().client);
    timedOut.abort(new Error('reconcile timed out'));
    expect(timedOut.signal.aborted).toBe(true);
    expect((timedOut.signal.reason as Error).message).toBe('reconcile timed out');
  });

  it('fences one client with its signal, made once, and only when asked for', () => {
    const { client, fencedWith } = fakeClient();
    const fence = new ReconcileFence(new AbortController().signal, client);
    expect(fencedWith).toHaveLength(0);
    const c = fence.client;
    expect(fence.client).toBe(c);
    expect(fencedWith).toEqual([fence.signal]);
  });

  it('keeps the first reason; disposed, leaves nothing listening on the term', () => {
    const term = new AbortController();
    const fence = new ReconcileFence(term.signal, fakeClient().client);
    const signal = fence.signal;
    fence.abort(new Error('first'));
    fence.abort(new Error('second'));
    expect((signal.reason as Error).message).toBe('first');

    // A thousand reconciles that used their signal leave no listener on the term (no leak, no
    // MaxListenersExceededWarning); those that never asked for one never added any.
    const long = new AbortController();
    for (let i = 0; i < 1000; i++) {
      const f = new ReconcileFence(long.signal, fakeClient().client);
      if (i % 2) void f.signal;
      f.dispose();
    }
    expect(getEventListeners(long.signal, 'abort')).toHaveLength(0);
  });
});
