/** A DNS exchange failed: no answer, a refusal (its rcode), or an answer that could not be read. */
export class DnsError extends Error {
  constructor(
    message: string,
    readonly rcode?: string,
  ) {
    super(message);
    this.name = 'DnsError';
  }
}

/** Bytes that are not a DNS message: what a server sent, or what is on the path, broken or hostile. */
export class DnsFormatError extends DnsError {
  constructor(message: string) {
    super(`malformed DNS message: ${message}`, 'FORMERR');
    this.name = 'DnsFormatError';
  }
}
