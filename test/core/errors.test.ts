import { describe, expect, it } from 'vitest';
import { HoldError, SluiceError } from '../../functions/core/errors.ts';
import { RegistryError } from '../../functions/core/oci/errors.ts';
import { ClusterBusy } from '../../functions/core/reconcile/cluster-limit.ts';
import { PruneLimitHold } from '../../functions/core/reconcile/prune-limit.ts';
import { LeaseHeldError } from '../../functions/core/store/lease.ts';

describe('hold errors', () => {
  it('share one base, apart from SluiceError, and each names itself', () => {
    const holds = [
      new LeaseHeldError('web'),
      new ClusterBusy('cluster prod is busy'),
      new PruneLimitHold('would prune 9 of 10 objects'),
    ];
    expect(holds.map((hold) => hold instanceof HoldError)).toEqual([true, true, true]);
    expect(holds.map((hold) => hold instanceof SluiceError)).toEqual([false, false, false]);
    expect(holds.map((hold) => hold.name)).toEqual(['LeaseHeldError', 'ClusterBusy', 'PruneLimitHold']);
    expect(new PruneLimitHold('x').reason).toBe('PruneLimitExceeded');
  });

  it('a registry error is a SluiceError that names itself', () => {
    const error = new RegistryError('manifest unknown', 404, ['MANIFEST_UNKNOWN']);
    expect(error).toBeInstanceOf(SluiceError);
    expect(error.name).toBe('RegistryError');
    expect(error.reason).toBe('ArtifactFailed');
  });
});
