import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { webcrypto } from 'node:crypto';

// @peculiar/x509 signs and encodes over WebCrypto; Node's own implementation backs it.
x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

export { x509, webcrypto };
export type CryptoKey = webcrypto.CryptoKey;
