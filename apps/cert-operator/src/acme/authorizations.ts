import type { OrderState } from '../api/acme/v1/order.js';

/** One authorization as the CA answers it (RFC 8555 §7.1.4), as far as an Order's status records it. */
export interface CaAuthorization {
  url: string;
  status: string;
  identifier: { value: string };
  wildcard?: boolean;
  challenges?: readonly { url?: unknown; type?: unknown; token?: unknown }[];
}

/** An authorization as an Order's status holds it (both API groups' Order CRDs). */
export interface RecordedAuthorization {
  url: string;
  identifier: string;
  wildcard: boolean;
  initialState: OrderState;
  challenges: { url: string; token: string; type: string }[];
}

/**
 * What an Order records of the CA's authorization. Only challenges that carry a token, a type
 * and a URL are recorded: those are the kinds this operator can solve (HTTP-01, DNS-01), and
 * cert-manager's Order CRD requires all three of every challenge listed. A CA may offer others
 * without a token (dns-persist-01, whose proof is a standing DNS record bound to the account;
 * Pebble v2.10 offers it for every name): recorded, the CRD would refuse every status write of
 * every Order from that CA. A new order's authorizations are pending or valid (RFC 8555 §7.1.6),
 * both Order states.
 */
export function recordedAuthorization(a: CaAuthorization): RecordedAuthorization {
  const text = (v: unknown): v is string => typeof v === 'string' && v !== '';
  return {
    url: a.url,
    identifier: a.identifier.value,
    wildcard: !!a.wildcard,
    initialState: a.status as OrderState,
    challenges: (a.challenges ?? []).flatMap((c) => (text(c.url) && text(c.type) && text(c.token) ? [{ url: c.url, token: c.token, type: c.type }] : [])),
  };
}
