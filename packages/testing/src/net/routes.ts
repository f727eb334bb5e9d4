import { readFileSync } from 'node:fs';

/**
 * kube-apiserver derives its advertise address from the default route and refuses to start
 * without one; on such hosts we must pass loopback and turn the endpoint reconciler off.
 */
export function hasDefaultRoute(): boolean {
  try {
    return readFileSync('/proc/net/route', 'utf8')
      .split('\n')
      .slice(1)
      .some((line) => line.split(/\s+/)[1] === '00000000');
  } catch {
    return true; // not Linux: let the apiserver decide
  }
}
