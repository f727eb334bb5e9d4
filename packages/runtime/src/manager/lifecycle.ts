/**
 * The manager's lifecycle as one pure transition table: every phase, every event, what each causes.
 * `Manager` performs the effects; `lifecycle.test.ts` holds the rows, among them the one that was
 * missing: leadership lost while draining aborts the term at once, since another replica may lead.
 *
 *   new ──start──▶ starting ──synced──▶ standby ◀──deposed── leading
 *                     │                    │ └────elected────▶ │
 *                startFailed              stop                stop
 *                     ▼                    ▼                   ▼
 *                  stopping ◀──────────────┴──drained── draining ──deposed──▶ draining (term aborted)
 *                     │
 *                   closed ──▶ stopped
 */
export type Phase = 'new' | 'starting' | 'standby' | 'leading' | 'draining' | 'stopping' | 'stopped';

export interface LifecycleState {
  phase: Phase;
  /** While draining: whether this replica still leads (the term may run to the end of its drain). */
  leading: boolean;
}

export type LifecycleEvent =
  | { type: 'start' }
  /** Servers, webhooks and caches are up and synced. */
  | { type: 'synced' }
  | { type: 'startFailed' }
  /** Leadership won (or, without election, granted at once). */
  | { type: 'elected' }
  /** Leadership lost: the lease could not be renewed in time. */
  | { type: 'deposed' }
  | { type: 'stop' }
  /** In-flight reconciles finished (or the drain deadline passed). */
  | { type: 'drained' }
  /** Everything is closed. */
  | { type: 'closed' };

export type LifecycleEffect =
  /** Start the servers, check RBAC, serve webhooks, start the caches and wait for them to sync. */
  | 'startUp'
  /** Start the runnables that run on every replica, then stand for election (or be elected). */
  | 'campaign'
  /** A leadership term: controllers and leader-only runnables start. */
  | 'beginTerm'
  /** End the term at once: queues dropped, in-flight reconciles' signals aborted, their clients fenced. */
  | 'abortTerm'
  /** End the term gracefully: no new work, in-flight reconciles finish (up to the deadline). */
  | 'drainTerm'
  /** Stop election (releasing a lease still held), caches, webhooks, servers. */
  | 'tearDown';

export const initialLifecycle = (): LifecycleState => ({ phase: 'new', leading: false });

const to = (phase: Phase, effects: LifecycleEffect[] = [], leading = false) => ({ state: { phase, leading }, effects });
const stay = (s: LifecycleState) => ({ state: s, effects: [] as LifecycleEffect[] });

export function lifecycleStep(s: LifecycleState, e: LifecycleEvent): { state: LifecycleState; effects: LifecycleEffect[] } {
  switch (s.phase) {
    case 'new':
      if (e.type === 'start') return to('starting', ['startUp']);
      if (e.type === 'stop') return to('stopped');
      return stay(s);
    case 'starting':
      if (e.type === 'synced') return to('standby', ['campaign']);
      // A stop during start-up (a SIGTERM while the caches sync) ends it like a failure.
      if (e.type === 'startFailed' || e.type === 'stop') return to('stopping', ['tearDown']);
      return stay(s);
    case 'standby':
      if (e.type === 'elected') return to('leading', ['beginTerm'], true);
      if (e.type === 'stop') return to('stopping', ['tearDown']);
      return stay(s);
    case 'leading':
      if (e.type === 'deposed') return to('standby', ['abortTerm']);
      if (e.type === 'stop') return to('draining', ['drainTerm'], true);
      return stay(s);
    case 'draining':
      // Another replica may lead now: in-flight work stops at once instead of finishing its drain.
      if (e.type === 'deposed' && s.leading) return to('draining', ['abortTerm'], false);
      if (e.type === 'drained') return to('stopping', ['tearDown']);
      // No new term while stopping, and a second stop changes nothing.
      return stay(s);
    case 'stopping':
      if (e.type === 'closed') return to('stopped');
      return stay(s);
    case 'stopped':
      return stay(s);
  }
}
