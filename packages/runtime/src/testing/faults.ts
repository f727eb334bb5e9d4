// @opkit/runtime/testing/faults: an operator run behind fault-injecting API proxies (docs/testing.md).
// Its own entry point because it needs @opkit/testing (the proxy, the audit-log invariants, the
// replica an audited request came from), which @opkit/runtime/testing does not: a project with
// only @opkit/runtime installed can import that (package.int.test.ts installs it so).
export {
  runUnderFaults,
  assertFaultInvariants,
  describeFaultRun,
  faultSeeds,
  faultChurnMs,
  FAULT_TERMS,
  type FaultRunOptions,
  type FaultRunReport,
  type FaultScenario,
} from './fault-run.js';
export { writesOutsideShards, auditMicros, type ShardWriteCheck, type OutsideWrite } from './shard-writes.js';
