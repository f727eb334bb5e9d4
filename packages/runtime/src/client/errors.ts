/** The `Status` object the API server sends with every error. */
export interface Status {
  kind?: 'Status';
  status?: 'Failure' | 'Success';
  message?: string;
  reason?: string;
  code?: number;
  details?: { name?: string; group?: string; kind?: string; causes?: { reason?: string; message?: string; field?: string }[]; retryAfterSeconds?: number };
}

/**
 * An error answer from the API server, carrying its Status: `message` is the server's own words
 * (client-node hands back the raw body as text instead, with "Unknown API Status Code!").
 */
export class ApiError extends Error {
  readonly status: number;
  readonly reason: string;
  readonly details?: Status['details'];
  readonly retryAfterSeconds?: number;

  constructor(
    readonly method: string,
    readonly path: string,
    status: number,
    /** The answer's body: a Status, text, or nothing (a JSON `null` too). */
    body: Status | string | null | undefined,
    retryAfterHeader?: string,
  ) {
    const st: Status = typeof body === 'object' && body ? body : { message: body || undefined };
    const message = st.message || httpReason(status);
    super(`${method} ${path}: ${message}`);
    this.name = 'ApiError';
    this.status = status;
    this.reason = st.reason ?? reasonForCode(status);
    this.details = st.details;
    const retryAfter = Number(retryAfterHeader ?? st.details?.retryAfterSeconds);
    this.retryAfterSeconds = Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined;
    this.serverMessage = message;
  }

  /** The API server's message without the request prefix. */
  readonly serverMessage: string;
}

/** The API server could not be reached at all (refused, reset, timed out). */
export class ConnectionError extends Error {
  constructor(
    readonly method: string,
    readonly path: string,
    cause: unknown,
  ) {
    super(`${method} ${path}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'ConnectionError';
  }
}

function reasonForCode(code: number): string {
  return (
    (
      {
        400: 'BadRequest',
        401: 'Unauthorized',
        403: 'Forbidden',
        404: 'NotFound',
        405: 'MethodNotAllowed',
        406: 'NotAcceptable',
        409: 'Conflict',
        410: 'Gone',
        415: 'UnsupportedMediaType',
        422: 'Invalid',
        429: 'TooManyRequests',
        500: 'InternalError',
        503: 'ServiceUnavailable',
        504: 'Timeout',
      } as Record<number, string>
    )[code] ?? 'Unknown'
  );
}

function httpReason(code: number): string {
  return `the server responded with status ${code} (${reasonForCode(code)})`;
}

const is =
  (reason: string, code: number) =>
  (err: unknown): err is ApiError =>
    err instanceof ApiError && (err.reason === reason || (err.status === code && err.reason === reasonForCode(code)));

export const isNotFound = is('NotFound', 404);
export const isAlreadyExists = is('AlreadyExists', 409);
/** 409 from a stale resourceVersion (optimistic concurrency). */
export const isConflict = is('Conflict', 409);
export const isGone = (err: unknown): err is ApiError => err instanceof ApiError && (err.status === 410 || err.reason === 'Expired' || err.reason === 'Gone');
export const isTooManyRequests = is('TooManyRequests', 429);
export const isInvalid = is('Invalid', 422);
export const isForbidden = is('Forbidden', 403);
export const isUnauthorized = is('Unauthorized', 401);

/** Errors worth retrying as they are: the server or the network, not the request. */
export const isTransient = (err: unknown): boolean => err instanceof ConnectionError || (err instanceof ApiError && (err.status === 429 || err.status >= 500));
