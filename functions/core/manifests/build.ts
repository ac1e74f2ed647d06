import type { Delivery } from '../config/index.ts';
import { loadManifests } from './load.ts';
import type { Manifest } from './objects.ts';
import { applyDeliveryTransforms } from './transform.ts';
import { checkRequiredFields } from './validate.ts';

/** Step 6 of a reconcile: the artifact's files under the delivery's path, built and transformed. */
export function buildManifests(
  files: ReadonlyMap<string, Buffer>,
  delivery: Delivery,
  revision: string,
): Manifest[] {
  const loaded = loadManifests(files, delivery.path, revision);
  checkRequiredFields(loaded);
  return applyDeliveryTransforms(loaded, delivery);
}
