// @opkit/runtime/testing/faults: an operator run behind fault-injecting API proxies (docs/testing.md).
// Its own entry point because it needs @opkit/testing (the proxy, the audit-log invariants), which
// @opkit/runtime/testing does not: a project with only @opkit/runtime installed can import that.
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
