/**
 * Why one request to an ACME server failed, in words a tenant can act on, from what axios (under
 * acme-client) and the socket reported. A pure decision, table-tested: an ACME server is anyone's,
 * and "the connection failed" for a server that answered 1 GiB or redirected in circles sends the
 * tenant looking in the wrong place.
 */
export interface RequestFailure {
  /** unavailable: the server did not answer usably (retried with backoff); protocol: it answered something that is not ACME. */
  kind: 'unavailable' | 'protocol';
  cause: string;
}

export interface Limits {
  timeoutMs: number;
  maxBytes: number;
  maxRedirects: number;
}

/**
 * What the request itself saw, whatever error reached us: acme-client's error interceptor replaces
 * any error without a response (a limit hit, a redirect loop) by a TypeError of its own, so the
 * facts are counted on the way (bytes received, redirects followed, whether the deadline passed).
 */
export interface Observed {
  timedOut: boolean;
  bytes: number;
  redirects: number;
}

export function requestFailure(
  err: { code?: string; message?: string; name?: string },
  socketError: (Error & { code?: string }) | undefined,
  observed: Observed,
  limits: Limits,
): RequestFailure {
  const code = err.code ?? '';
  const message = err.message ?? '';
  // Either may carry the cause: the error thrown, or the one the socket (or stream) saw.
  const codes = [code, socketError?.code ?? ''];
  const said = `${message} ${socketError?.message ?? ''}`;
  // Our own limits first: hitting one also aborts the socket, whose error would hide the reason.
  if (
    observed.timedOut ||
    codes.includes('ECONNABORTED') ||
    codes.includes('ETIMEDOUT') ||
    err.name === 'TimeoutError' ||
    /timeout of \d+ms exceeded/.test(said)
  ) {
    return { kind: 'unavailable', cause: `no complete answer within ${limits.timeoutMs / 1000} s` };
  }
  if (observed.bytes > limits.maxBytes || /maxContentLength|maxBodyLength|content length exceeded/i.test(said)) {
    return { kind: 'unavailable', cause: `the answer is larger than ${limits.maxBytes / (1 << 20)} MiB` };
  }
  if (observed.redirects >= limits.maxRedirects || codes.includes('ERR_FR_TOO_MANY_REDIRECTS') || /redirects exceeded/i.test(said)) {
    return { kind: 'unavailable', cause: `more than ${limits.maxRedirects} redirects` };
  }
  if (codes.includes('ERR_INVALID_URL') || /invalid url/i.test(said)) {
    return { kind: 'protocol', cause: `it named a URL that is not one (${message})` };
  }
  if (socketError) return { kind: 'unavailable', cause: `${socketError.code ?? ''} ${socketError.message}`.trim() };
  return { kind: 'unavailable', cause: message ? `${code ? `${code} ` : ''}${message}` : 'the connection failed without a response' };
}
