import { randomBytes } from 'node:crypto';
import { instanceName, operatorEnvironment, type OperatorEnvironment } from './environment.js';

/**
 * This replica's name in the Lease. In a pod, POD_NAME and POD_UID (the chart sets both): stable
 * across container restarts in the same pod, so a restarted operator takes its own lease back at
 * once instead of waiting out a lease it held itself; unique across pods. Elsewhere the host name
 * and a random suffix.
 */
export function leaderIdentity(env: OperatorEnvironment = operatorEnvironment()): string {
  if (env.podName && env.podUid) return `${env.podName}_${env.podUid}`;
  return `${instanceName(env)}_${randomBytes(4).toString('hex')}`;
}
