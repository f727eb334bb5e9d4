import type { AcmeSession } from './client.js';

/** Where a challenge is at the CA: its own URL, its authorization's, and its token. */
export interface ChallengeRef {
  url: string;
  authorizationURL: string;
  token: string;
}

export type ChallengeState = 'pending' | 'processing' | 'valid' | 'invalid';

/**
 * The challenge's state as the CA sees it, read from its authorization: a valid authorization
 * makes it valid (another challenge of the same authorization may have passed), an invalid one
 * invalid. `detail` is the CA's reason when it failed.
 */
export async function readChallenge(session: AcmeSession, ch: ChallengeRef): Promise<{ state: ChallengeState; detail?: string }> {
  const [authz] = await session.call((c) => c.getAuthorizations({ authorizations: [ch.authorizationURL] } as never));
  const challenge = authz?.challenges.find((c) => (c as { token?: string }).token === ch.token) as { status?: string; error?: { detail?: string } } | undefined;
  const detail = challenge?.error?.detail;
  if (authz?.status === 'valid' || challenge?.status === 'valid') return { state: 'valid' };
  if (authz?.status === 'invalid' || challenge?.status === 'invalid') return { state: 'invalid', ...(detail ? { detail } : {}) };
  return { state: challenge?.status === 'processing' ? 'processing' : 'pending' };
}

/**
 * Asks the CA to validate a challenge, once in effect however often it is called. The operator
 * records that it asked in a write of its own after the POST, and that write can be lost (the API
 * server fails its answer, the pod restarts), so the POST can be sent again. CAs differ on a
 * repeated one: Pebble refuses it once the challenge left pending ("only status pending"), others
 * answer with the challenge. So a refusal is judged by the challenge's own state: one that left
 * pending was asked already, and what it became is read on the next pass. A refusal of a
 * challenge still pending is a real one, and is thrown.
 */
export async function acceptChallenge(session: AcmeSession, ch: ChallengeRef): Promise<void> {
  try {
    await session.call((c) => c.completeChallenge({ url: ch.url } as never));
  } catch (err) {
    // A failure to read is thrown as itself (a transient one is retried); it says nothing of the POST.
    if ((await readChallenge(session, ch)).state === 'pending') throw err;
  }
}
