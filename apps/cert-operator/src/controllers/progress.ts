/**
 * How long an issuance in flight runs before its steps are written on the CertificateRequest
 * (Ready, Pending) and the Certificate (Issuing): until then each keeps what its start said
 * (settleMessage in @opkit/runtime). A renewal whose authorizations are still valid completes in
 * about a second, and every step written twice (the request's own message, mirrored on the
 * Certificate) was most of its API writes (bench/cert/short-lived.bench.ts); an issuance that is
 * stuck says why ten seconds in, and a failure is written at once.
 */
export const PROGRESS_QUIET_MS = 10_000;
