import { Session } from 'node:inspector/promises';

/**
 * A DevTools protocol session with this process, for the length of `use`: what the CPU profile
 * route and the idle compaction ask V8 for, without `--inspect` or `--expose-gc`.
 */
export async function withInspectorSession<T>(use: (session: Session) => Promise<T>): Promise<T> {
  const session = new Session();
  session.connect();
  try {
    return await use(session);
  } finally {
    session.disconnect();
  }
}
