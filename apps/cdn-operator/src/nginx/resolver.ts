import { readFileSync } from 'node:fs';

/**
 * The DNS server for nginx's `resolver`: the first `nameserver` of a resolv.conf. In a pod (the
 * operator's, with the default dnsPolicy) that is the cluster's DNS Service, the same server the
 * nginx pods' own resolv.conf names.
 */
export function firstNameserver(resolvConf: string): string | undefined {
  const m = /^\s*nameserver\s+(\S+)/m.exec(resolvConf);
  if (!m) return undefined;
  const addr = m[1]!.replace(/%.*$/, ''); // an IPv6 zone index means nothing to nginx
  return addr.includes(':') ? `[${addr}]` : addr;
}

/** This process's DNS server, from /etc/resolv.conf, or undefined when it names none. */
export function systemNameserver(path = '/etc/resolv.conf'): string | undefined {
  try {
    return firstNameserver(readFileSync(path, 'utf8'));
  } catch {
    return undefined;
  }
}
