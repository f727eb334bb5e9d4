import { Client, CustomResourceDefinition, flag, flagHelp, FlagError, loadKubeConfig, parseFlags, Secret, Transport, type KubeObject } from '@opkit/runtime';
import { Certificate, CertificateRequest, RENEW_ANNOTATION, type Condition } from './api.js';
import { inspectSecret } from './commands/inspect-secret.js';
import { readStory, renderStory } from './commands/status.js';
import { fit, wrap } from './format.js';

export interface Io {
  out(line: string): void;
  err(line: string): void;
  now(): number;
  /** The terminal's width; lines are cut to it. */
  width: number;
}

const FLAGS = {
  kubeconfig: flag.optionalString({ metavar: '<path>', help: 'kubeconfig file', defaultText: 'KUBECONFIG, ~/.kube/config' }),
  context: flag.optionalString({ metavar: '<name>', help: 'kubeconfig context to use', defaultText: 'the current context' }),
  namespace: flag.optionalString({ short: 'n', metavar: '<ns>', help: 'namespace', defaultText: "the context's, else default" }),
  allNamespaces: flag.boolean({ short: 'A', help: 'renew: every namespace' }),
  selector: flag.optionalString({ short: 'l', metavar: '<labels>', help: 'renew: Certificates matching this label selector' }),
  all: flag.boolean({ help: 'renew: every Certificate in the namespace (or, with -A, the cluster)' }),
  reason: flag.optionalString({ metavar: '<Reason>', help: 'approve, deny: the condition reason', defaultText: 'OpkitCert' }),
  message: flag.optionalString({ metavar: '<text>', help: 'approve, deny: the condition message' }),
  wait: flag.duration({ default: 0, defaultText: '0 (check once)', help: 'check api: keep checking this long' }),
};

const USAGE = `opkit-cert: the cert operator's command line (cert.opkit.dev), as cmctl is cert-manager's.

Commands:
  status certificate <name>        where a Certificate is and why: its Secret, request, order, challenges, events
  renew <name>... | -l <sel> | --all   issue again now (sets the cert.opkit.dev/renew annotation)
  inspect secret <name>            the certificates in a TLS Secret, decoded
  approve <request>                approve a CertificateRequest (when auto-approval is off)
  deny <request>                   deny a CertificateRequest
  check api                        are the CRDs installed and the API serving and validating?

Flags:
${flagHelp(FLAGS)}`;

class UsageError extends Error {}

/** What was wrong with the command line, then how to use it: exit code 2. */
function usage(io: Io, problem: string): number {
  io.err(`opkit-cert: ${problem}`);
  io.err('');
  for (const line of USAGE.split('\n')) io.err(line);
  return 2;
}

/** Runs one command line; returns the exit code (0 ok, 1 failed, 2 usage). */
export async function runCli(argv: string[], io: Io): Promise<number> {
  let parsed;
  try {
    parsed = parseFlags(FLAGS, argv, { positionals: true });
  } catch (err) {
    if (err instanceof FlagError) return usage(io, err.message);
    throw err;
  }
  const { values: v, positionals: args } = parsed;
  if (parsed.help || !args.length) return (io.out(USAGE), parsed.help ? 0 : 2);
  const kc = loadKubeConfig(v.kubeconfig);
  if (v.context) kc.setCurrentContext(v.context);
  const client = new Client(new Transport(kc), { fieldManager: 'opkit-cert' });
  const namespace = v.namespace ?? kc.getContextObject(kc.getCurrentContext())?.namespace ?? 'default';
  // Detail lines are cut to the terminal; the explanation (`Why:`) is wrapped, never cut.
  const print = (lines: string[]) => lines.forEach((l) => (l.startsWith('Why: ') ? wrap(l, io.width) : [fit(l, io.width)]).forEach((x) => io.out(x)));
  /** The name at args[at], which the command needs. */
  const nameAt = (at: number, what: string): string => {
    const name = args[at];
    if (name === undefined) throw new UsageError(`${args.slice(0, at).join(' ')}: name ${what}`);
    return name;
  };
  try {
    switch (args[0]) {
      case 'status': {
        if (args[1] !== 'certificate' && args[1] !== 'cert') throw new UsageError('status certificate <name>');
        print(renderStory(await readStory(client, namespace, nameAt(2, 'the Certificate')), io.now()));
        return 0;
      }
      case 'renew': {
        const targets = await renewTargets(client, args.slice(1), namespace, v);
        if (!targets.length) throw new UsageError('renew: name Certificates, or give -l <selector> or --all');
        const stamp = new Date(io.now()).toISOString();
        for (const c of targets) {
          await client.patch(
            Certificate,
            { namespace: c.metadata.namespace, name: c.metadata.name! },
            { metadata: { annotations: { [RENEW_ANNOTATION]: stamp } } },
            'merge',
          );
          io.out(`Manually triggered issuance of Certificate ${c.metadata.namespace}/${c.metadata.name}`);
        }
        return 0;
      }
      case 'inspect': {
        if (args[1] !== 'secret') throw new UsageError('inspect secret <name>');
        print(inspectSecret(await client.get(Secret, { namespace, name: nameAt(2, 'the Secret') }), io.now()));
        return 0;
      }
      case 'approve':
      case 'deny': {
        const name = nameAt(1, 'the CertificateRequest');
        const verdict = args[0] === 'approve' ? 'Approved' : 'Denied';
        const cr = await client.get(CertificateRequest, { namespace, name });
        const decided = cr.status?.conditions?.find((c) => (c.type === 'Approved' || c.type === 'Denied') && c.status === 'True');
        if (decided) return (io.err(`opkit-cert: CertificateRequest ${namespace}/${name} is already ${decided.type.toLowerCase()}`), 1);
        const condition: Condition = {
          type: verdict,
          status: 'True',
          reason: v.reason ?? 'OpkitCert',
          message: v.message ?? `manually ${verdict.toLowerCase()} by opkit-cert`,
          lastTransitionTime: new Date(io.now()).toISOString().replace(/\.\d+Z$/, 'Z'),
        };
        await client.updateStatus(CertificateRequest, { ...cr, status: { ...cr.status, conditions: [...(cr.status?.conditions ?? []), condition] } });
        io.out(`${verdict} CertificateRequest ${namespace}/${name}`);
        return 0;
      }
      case 'check': {
        if (args[1] !== 'api') throw new UsageError('check api');
        const deadline = io.now() + v.wait;
        for (;;) {
          const problem = await apiProblem(client, namespace);
          if (!problem) return (io.out('The cert operator API is ready'), 0);
          if (io.now() >= deadline) return (io.err(`opkit-cert: the cert operator API is not ready: ${problem}`), 1);
          await new Promise((r) => setTimeout(r, 2_000));
        }
      }
      default:
        throw new UsageError(`unknown command "${args[0]}"`);
    }
  } catch (err) {
    if (err instanceof UsageError) return usage(io, err.message);
    io.err(`opkit-cert: ${(err as Error).message}`);
    return 1;
  }
}

async function renewTargets(
  client: Client,
  names: string[],
  namespace: string,
  v: { allNamespaces: boolean; selector?: string; all: boolean },
): Promise<KubeObject[]> {
  if (names.length) return Promise.all(names.map((name) => client.get(Certificate, { namespace, name })));
  if (!v.selector && !v.all) return [];
  return client.listAll(Certificate, { namespace: v.allNamespaces ? undefined : namespace, labelSelector: v.selector });
}

const CRDS = ['certificates.cert.opkit.dev', 'certificaterequests.cert.opkit.dev', 'issuers.cert.opkit.dev', 'clusterissuers.cert.opkit.dev'];

/** What stops the API from working, or nothing: the CRDs established, and a Certificate accepted by a server-side dry run. */
async function apiProblem(client: Client, namespace: string): Promise<string | undefined> {
  for (const name of CRDS) {
    const crd = await client.find(CustomResourceDefinition, { name }).catch((e: Error) => e);
    if (crd instanceof Error) return crd.message;
    if (!crd) return `the CRD ${name} is not installed (helm install the cert-operator chart)`;
    if (!crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) return `the CRD ${name} is not established yet`;
  }
  try {
    await client.create(
      Certificate,
      {
        metadata: { generateName: 'opkit-cert-check-', namespace },
        spec: { secretName: 'opkit-cert-check', dnsNames: ['check.example.com'], issuerRef: { name: 'check' } },
      } as never,
      { dryRun: true },
    );
  } catch (err) {
    return `a dry-run Certificate was refused: ${(err as Error).message}`;
  }
  return undefined;
}
