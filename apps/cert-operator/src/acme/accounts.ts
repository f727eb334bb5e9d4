import { Secret, type ReconcileContext } from '@opkit/runtime';
import { createHash, generateKeyPairSync } from 'node:crypto';
import type { CertApi } from '../api/index.js';
import type { IssuerObject } from '../api/v1/issuer.js';
import { secretData, SecretReader } from '../secrets/secret-reader.js';
import { AcmeSession, type RequestObserver } from './client.js';

type ACMEIssuerSpec = NonNullable<IssuerObject['spec']['acme']>;

export class AccountNotReadyError extends Error {
  override name = 'AccountNotReadyError';
}

export interface AccountSession {
  session: AcmeSession;
  /** The account is known to the server (recorded on the issuer for this key and server). */
  registered: boolean;
  keyHash: string;
}

/** The account URL a session signs with, once it has one. */
const accountUrlOf = (s: AcmeSession): string | undefined => {
  try {
    return s.client.getAccountUrl();
  } catch {
    return undefined; // acme-client throws until an account is created or given
  }
};

const sha = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 32);

/**
 * ACME accounts, one per issuer: the account key (generated and stored when missing), the account
 * URL recorded on the issuer once registered (so it is registered once and reused, not re-verified
 * on every sync), and one long-lived session per account (its nonces and connections reused).
 */
export class AcmeAccounts {
  private readonly sessions = new Map<string, { id: string; session: AcmeSession }>();
  /** By session id (server, key, trust): the origin the server's directory makes accounts on. */
  private readonly accountOrigins = new Map<string, string>();

  constructor(
    private readonly api: CertApi,
    private readonly observe?: RequestObserver,
  ) {}

  async session(issuer: IssuerObject, resourceNamespace: string, ctx: ReconcileContext): Promise<AccountSession> {
    const spec = issuer.spec.acme as ACMEIssuerSpec;
    const reader = new SecretReader(ctx.cache, ctx.client, this.api.labelled);
    const keyRef = spec.privateKeySecretRef;
    const keyName = keyRef.key ?? 'tls.key';
    let keyPem = secretData(await reader.read({ namespace: resourceNamespace, name: keyRef.name }), keyName);
    if (!keyPem) {
      if (spec.disableAccountKeyGeneration)
        throw new AccountNotReadyError(
          `account key Secret "${keyRef.name}" (key ${keyName}) not found in ${resourceNamespace}, and disableAccountKeyGeneration is set`,
        );
      keyPem = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
      await ctx.create(Secret, {
        metadata: { name: keyRef.name, namespace: resourceNamespace, labels: { [this.api.L.fao]: 'true' } },
        type: 'Opaque',
        data: { [keyName]: Buffer.from(keyPem).toString('base64') },
      });
      ctx.recorder.normal(issuer, 'AccountKeyGenerated', `Generated a new ACME account key in Secret "${keyRef.name}"`);
    }
    let eab: { kid: string; hmacKey: string } | undefined;
    if (spec.externalAccountBinding) {
      const ref = spec.externalAccountBinding.keySecretRef;
      const hmacKey = secretData(await reader.read({ namespace: resourceNamespace, name: ref.name }), ref.key ?? 'secret');
      if (!hmacKey) throw new AccountNotReadyError(`external account binding key Secret "${ref.name}" not found in ${resourceNamespace}`);
      eab = { kid: spec.externalAccountBinding.keyID, hmacKey: hmacKey.trim() };
    }
    const keyHash = sha(keyPem);
    const recorded = issuer.status?.acme;
    const caPem = spec.caBundle ? Buffer.from(spec.caBundle, 'base64').toString('utf8') : undefined;
    const id = [spec.server, keyHash, sha(caPem ?? ''), !!spec.skipTLSVerify].join('|');
    // The recorded account is this server's when its URL is where the server makes accounts: the
    // directory's origin (cert-manager's test), or, for a directory served from another origin
    // than its resources, the origin of its newAccount (asked once per server and key).
    let registered = !!recorded?.uri && recorded.lastPrivateKeyHash === keyHash;
    if (registered && !recorded!.uri!.startsWith(new URL(spec.server).origin)) {
      let origin = this.accountOrigins.get(id);
      if (origin === undefined) {
        const probe = new AcmeSession({ directoryUrl: spec.server, accountKeyPem: keyPem, caPem, skipTLSVerify: spec.skipTLSVerify, observe: this.observe });
        const { newAccount } = await probe.directory();
        origin = newAccount ? new URL(newAccount).origin : '';
        this.accountOrigins.set(id, origin);
      }
      registered = origin !== '' && recorded!.uri!.startsWith(`${origin}/`);
    }
    // One session per issuer: replaced when anything it was made from changes. The session that
    // registered the account keeps serving it (its directory and nonces stay warm); it is replaced
    // only when the recorded account is not the one it knows.
    const uid = issuer.metadata.uid!;
    let entry = this.sessions.get(uid);
    if (entry?.id !== id || (registered && accountUrlOf(entry.session) !== recorded!.uri)) {
      entry = {
        id,
        session: new AcmeSession({
          directoryUrl: spec.server,
          accountKeyPem: keyPem,
          accountUrl: registered ? recorded!.uri : undefined,
          caPem,
          skipTLSVerify: spec.skipTLSVerify,
          externalAccountBinding: eab,
          observe: this.observe,
        }),
      };
      this.sessions.set(uid, entry);
    }
    return { session: entry.session, registered, keyHash };
  }

  /** The session of an issuer that must already be registered (Orders, Challenges). */
  async registered(issuer: IssuerObject, resourceNamespace: string, ctx: ReconcileContext): Promise<AcmeSession> {
    const s = await this.session(issuer, resourceNamespace, ctx);
    if (!s.registered) throw new AccountNotReadyError("the issuer's ACME account is not registered yet");
    return s.session;
  }

  /**
   * The server no longer knows the account (a test CA restarted, an account deactivated): forget
   * it on the issuer, whose reconcile registers it again.
   */
  async forget(issuer: IssuerObject, ctx: ReconcileContext): Promise<void> {
    this.sessions.delete(issuer.metadata.uid!);
    const { Issuer, ClusterIssuer } = this.api;
    const kind = issuer.metadata.namespace ? Issuer.kind : ClusterIssuer.kind;
    await ctx
      .patch(kind as typeof Issuer.kind, { namespace: issuer.metadata.namespace, name: issuer.metadata.name }, { status: { acme: null } }, 'merge', {
        subresource: 'status',
      })
      .catch(() => undefined);
    ctx.recorder.warning(issuer, 'ACMEAccountLost', 'The ACME server does not know this account any more; registering it again');
  }
}
