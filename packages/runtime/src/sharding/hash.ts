/**
 * The hash the API server shards by (KEP-5866, `ShardedListAndWatch`): 64-bit FNV-1a over the
 * UTF-8 bytes of the field (an object's uid or namespace), as k8s.io/apimachinery's
 * `sharding.HashField`. Replicas filtering on the client side must place every object exactly
 * where a server-side shard selector would, so this is that function, checked against Go's.
 */
const OFFSET = 0xcbf29ce484222325n;
const PRIME = 0x100000001b3n;
const MASK = (1n << 64n) - 1n;
const encoder = new TextEncoder();

export function shardHash(value: string): bigint {
  let h = OFFSET;
  for (const byte of encoder.encode(value)) h = ((h ^ BigInt(byte)) * PRIME) & MASK;
  return h;
}

/** The API's spelling of a point of the hash space: `0x` and 16 lowercase hex digits (2^64: 17). */
export function hashLiteral(h: bigint): string {
  return `0x${h.toString(16).padStart(16, '0')}`;
}
