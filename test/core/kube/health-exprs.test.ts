import { describe, expect, it } from 'vitest';
import type { HealthCheckExpr } from '../../../functions/core/config/index.ts';
import { assessHealth } from '../../../functions/core/kube/health.ts';
import { compileHealthCheckExprs } from '../../../functions/core/kube/compile-health-exprs.ts';
import { assessByExprs } from '../../../functions/core/kube/health-exprs.ts';

const SYNCED_TRUE = "status.conditions.filter(e, e.type == 'Synced').all(e, e.status == 'True')";
const SYNCED_FALSE = "status.conditions.filter(e, e.type == 'Synced').all(e, e.status == 'False')";

const sealedSecretCheck: HealthCheckExpr = {
  apiVersion: 'bitnami.com/v1alpha1',
  kind: 'SealedSecret',
  failed: SYNCED_FALSE,
  current: SYNCED_TRUE,
};

function sealedSecret(fields: { status?: unknown; metadata?: Record<string, unknown> } = {}) {
  return {
    apiVersion: 'bitnami.com/v1alpha1',
    kind: 'SealedSecret',
    metadata: { name: 'creds', namespace: 'shop', generation: 1, ...fields.metadata },
    spec: { encryptedData: {} },
    ...(fields.status !== undefined && { status: fields.status }),
  };
}

const synced = (status: string) => ({ conditions: [{ type: 'Synced', status }] });

function assess(object: object, entries: HealthCheckExpr[] = [sealedSecretCheck]) {
  return assessByExprs(object, compileHealthCheckExprs(entries));
}

describe('assessByExprs', () => {
  it("decides by the expressions for the object's group and kind, where kstatus would say Current", () => {
    const unsynced = sealedSecret({ status: synced('Unknown') });
    // No Ready condition: kstatus has nothing to wait for.
    expect(assessHealth(unsynced).status).toBe('Current');
    expect(assess(unsynced)).toEqual({
      status: 'InProgress',
      message: `SealedSecret/shop/creds: waiting for the current expression to be true: ${SYNCED_TRUE}`,
    });
    expect(assess(sealedSecret({ status: synced('True') }))).toEqual({
      status: 'Current',
      message: `SealedSecret/shop/creds: the current expression is true: ${SYNCED_TRUE}`,
    });
    expect(assess(sealedSecret({ status: synced('False') }))).toEqual({
      status: 'Failed',
      message: `SealedSecret/shop/creds: the failed expression is true: ${SYNCED_FALSE}`,
    });
  });

  it('leaves other kinds to kstatus, and matches any version of the group and kind', () => {
    const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'shop' } };
    expect(assess(configMap)).toBeUndefined();
    const otherGroup = { ...sealedSecret(), apiVersion: 'example.com/v1alpha1' };
    expect(assess(otherGroup)).toBeUndefined();
    const otherVersion = { ...sealedSecret({ status: synced('True') }), apiVersion: 'bitnami.com/v1' };
    expect(assess(otherVersion)?.status).toBe('Current');
  });

  it('takes the place of kstatus for a built-in kind too, as Flux puts custom readers first', () => {
    const deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'shop', generation: 1 },
      spec: { replicas: 3 },
      status: { observedGeneration: 1, replicas: 3, readyReplicas: 2 },
    };
    expect(assessHealth(deployment).status).toBe('InProgress');
    const atLeastTwo = { apiVersion: 'apps/v1', kind: 'Deployment', current: 'status.readyReplicas >= 2' };
    expect(assess(deployment, [atLeastTwo])?.status).toBe('Current');
  });

  describe("in Flux's order: inProgress, failed, current; none true is in progress", () => {
    const flags = { apiVersion: 'example.com/v1', kind: 'Flags' };
    const check: HealthCheckExpr = {
      ...flags,
      inProgress: 'status.inProgress',
      failed: 'status.failed',
      current: 'status.current',
    };
    const cases: [string, Record<string, boolean>, string][] = [
      ['all true', { inProgress: true, failed: true, current: true }, 'InProgress'],
      ['failed and current true', { inProgress: false, failed: true, current: true }, 'Failed'],
      ['only current true', { inProgress: false, failed: false, current: true }, 'Current'],
      ['none true', { inProgress: false, failed: false, current: false }, 'InProgress'],
    ];
    it.each(cases)('%s', (_, status, expected) => {
      const object = { ...flags, metadata: { name: 'f', namespace: 'shop' }, status };
      expect(assess(object, [check])?.status).toBe(expected);
    });
  });

  it('reads .all() of an empty list as true, as CEL does: an empty conditions list matches failed first', () => {
    expect(assess(sealedSecret({ status: { conditions: [] } }))?.status).toBe('Failed');
  });

  it('keeps waiting on an expression that cannot be evaluated, naming the object, the expression and why', () => {
    expect(assess(sealedSecret())).toEqual({
      status: 'InProgress',
      message: `SealedSecret/shop/creds: the failed expression cannot be evaluated (the object has no "status" field): ${SYNCED_FALSE}`,
    });
    expect(assess(sealedSecret({ status: {} }))).toEqual({
      status: 'InProgress',
      message: `SealedSecret/shop/creds: the failed expression cannot be evaluated (field not found: conditions): ${SYNCED_FALSE}`,
    });
    // As Flux: the first error decides, the later expressions are not evaluated.
    const guarded = { ...sealedSecretCheck, inProgress: 'status.observedGeneration < metadata.generation' };
    expect(assess(sealedSecret({ status: synced('True') }), [guarded])?.message).toBe(
      'SealedSecret/shop/creds: the inProgress expression cannot be evaluated (field not found: observedGeneration): status.observedGeneration < metadata.generation',
    );
  });

  it('keeps waiting when an expression gives something other than a bool', () => {
    const phase = { ...sealedSecretCheck, failed: undefined, current: 'status.phase' };
    expect(assess(sealedSecret({ status: { phase: 'Synced' } }), [phase])).toEqual({
      status: 'InProgress',
      message:
        'SealedSecret/shop/creds: the current expression cannot be evaluated (evaluates to string, not a bool): status.phase',
    });
  });

  it('waits for a generation not yet observed whatever the expressions say; skips a non-integer one', () => {
    const stale = sealedSecret({
      metadata: { generation: 2 },
      status: { ...synced('True'), observedGeneration: 1 },
    });
    expect(assess(stale)).toEqual({
      status: 'InProgress',
      message: 'SealedSecret/shop/creds: generation 2 not yet observed (observed 1)',
    });
    const text = sealedSecret({
      metadata: { generation: 2 },
      status: { ...synced('True'), observedGeneration: '1' },
    });
    expect(assess(text)?.status).toBe('Current');
  });

  it("does not read kstatus's Stalled and Reconciling conditions, as Flux does not", () => {
    const stalled = { conditions: [...synced('True').conditions, { type: 'Stalled', status: 'True' }] };
    expect(assess(sealedSecret({ status: stalled }))?.status).toBe('Current');
  });

  it('calls an object being deleted Terminating, unlike Flux: it will not stay', () => {
    const deleting = sealedSecret({
      metadata: { deletionTimestamp: '2026-01-01T00:00:00Z' },
      status: synced('True'),
    });
    expect(assess(deleting)).toEqual({
      status: 'Terminating',
      message: 'SealedSecret/shop/creds: being deleted',
    });
  });

  it('sees whole numbers as CEL ints, as in objects decoded by Go', () => {
    const check = {
      apiVersion: 'example.com/v1',
      kind: 'Pool',
      current: 'status.ready + 1 == spec.size && status.ratio > 0.5 && metadata.generation == 3',
    };
    const pool = {
      apiVersion: 'example.com/v1',
      kind: 'Pool',
      metadata: { name: 'p', generation: 3 },
      spec: { size: 4 },
      status: { ready: 3, ratio: 0.75 },
    };
    expect(assess(pool, [check])).toEqual({
      status: 'Current',
      message: `Pool/p: the current expression is true: ${check.current}`,
    });
  });
});

describe('compileHealthCheckExprs', () => {
  it('names the entry and the field of an expression that does not compile', () => {
    expect(() =>
      compileHealthCheckExprs([sealedSecretCheck, { ...sealedSecretCheck, failed: 'x(' }]),
    ).toThrow(/^healthCheckExprs\[1\]\.failed: "x\(" is not valid CEL \(line 1, column \d+: /);
  });
});
