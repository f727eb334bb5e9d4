import { update } from './client.js';
import { CLASS, txtData, TYPE } from './message.js';
import type { TsigKey } from './tsig.js';

/** The RFC 2136 provider of DNS-01: TXT records added to and removed from a zone by DNS UPDATE. */
export interface Rfc2136 {
  nameserver: string;
  tsig?: TsigKey;
}

const txt = (name: string, value: string, ttl = 60) => ({ name, type: TYPE.TXT, class: CLASS.IN, ttl, data: txtData(value) });

/** Adds the record (adding one that exists changes nothing, so a retry is safe). */
export const presentTxt = (p: Rfc2136, zone: string, name: string, value: string) => update(p.nameserver, zone, { add: [txt(name, value)] }, p.tsig);

/** Removes just this value: other challenges' records for the same name stay. */
export const cleanupTxt = (p: Rfc2136, zone: string, name: string, value: string) => update(p.nameserver, zone, { remove: [txt(name, value)] }, p.tsig);
