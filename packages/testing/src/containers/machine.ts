import { readFileSync, statfsSync } from 'node:fs';

/**
 * What this machine lets containers do, read from /proc and /sys. Kept apart from the decisions
 * made on it (machineQuirks), so those are pure and table-tested.
 */
export interface MachineFacts {
  /** CapBnd of this process: the capabilities any process here can ever hold. */
  capBnd: bigint;
  /** The highest capability number the kernel knows (/proc/sys/kernel/cap_last_cap). */
  capLastCap: number;
  /** cgroup v2 (unified) or v1 (a tmpfs of controllers at /sys/fs/cgroup). */
  cgroup: 'v1' | 'v2';
}

// Linux capability numbers (include/uapi/linux/capability.h) → the names OCI specs use.
const CAPABILITY_NAMES = [
  'CHOWN',
  'DAC_OVERRIDE',
  'DAC_READ_SEARCH',
  'FOWNER',
  'FSETID',
  'KILL',
  'SETGID',
  'SETUID',
  'SETPCAP',
  'LINUX_IMMUTABLE',
  'NET_BIND_SERVICE',
  'NET_BROADCAST',
  'NET_ADMIN',
  'NET_RAW',
  'IPC_LOCK',
  'IPC_OWNER',
  'SYS_MODULE',
  'SYS_RAWIO',
  'SYS_CHROOT',
  'SYS_PTRACE',
  'SYS_PACCT',
  'SYS_ADMIN',
  'SYS_BOOT',
  'SYS_NICE',
  'SYS_RESOURCE',
  'SYS_TIME',
  'SYS_TTY_CONFIG',
  'MKNOD',
  'LEASE',
  'AUDIT_WRITE',
  'AUDIT_CONTROL',
  'SETFCAP',
  'MAC_OVERRIDE',
  'MAC_ADMIN',
  'SYSLOG',
  'WAKE_ALARM',
  'BLOCK_SUSPEND',
  'AUDIT_READ',
  'PERFMON',
  'BPF',
  'CHECKPOINT_RESTORE',
];

export function readMachineFacts(): MachineFacts {
  const status = readFileSync('/proc/self/status', 'utf8');
  const capBnd = BigInt(`0x${/^CapBnd:\s*([0-9a-f]+)$/m.exec(status)?.[1] ?? '0'}`);
  const capLastCap = Number(readFileSync('/proc/sys/kernel/cap_last_cap', 'utf8').trim());
  // cgroup2 is a filesystem of its own (magic 0x63677270); v1 mounts a tmpfs of controller dirs.
  const cgroup = statfsSync('/sys/fs/cgroup').type === 0x63677270 ? 'v2' : 'v1';
  return { capBnd, capLastCap, cgroup };
}

/** The workarounds a machine needs before privileged containers (kind nodes) and kubelets run. */
export interface MachineQuirks {
  /**
   * Capabilities the kernel knows but this machine withholds (`CAP_…` names). dockerd gives a
   * privileged container all of them and runc then fails to apply them: a runtime shim removes
   * these from every container's spec. Inside a kind node, containerd cannot lower OOM scores
   * without CAP_SYS_RESOURCE either (restrict_oom_score_adj).
   */
  withheldCapabilities: string[];
  /** kubelet >= 1.35 refuses cgroup v1 unless told otherwise (failCgroupV1: false). */
  cgroupV1: boolean;
}

export function machineQuirks(facts: MachineFacts): MachineQuirks {
  const withheld: string[] = [];
  for (let bit = 0; bit <= facts.capLastCap; bit++) {
    if ((facts.capBnd & (1n << BigInt(bit))) === 0n) withheld.push(`CAP_${CAPABILITY_NAMES[bit] ?? `#${bit}`}`);
  }
  return { withheldCapabilities: withheld, cgroupV1: facts.cgroup === 'v1' };
}

/** One line for logs: what was detected and what will be done about it. */
export function describeQuirks(q: MachineQuirks): string {
  const parts = [];
  if (q.withheldCapabilities.length) parts.push(`capabilities withheld by this machine: ${q.withheldCapabilities.join(', ')} (removed from container specs)`);
  if (q.cgroupV1) parts.push('cgroup v1 (kubelet told to accept it)');
  return parts.length ? parts.join('; ') : 'no workarounds needed';
}
