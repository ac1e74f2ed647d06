import { isMap, isPair, isScalar, isSeq, YAMLParseError, type Document } from 'yaml';

/**
 * yaml's own duplicate-key check compares each key with every key before it: a single map of
 * 200,000 keys (a 10 MiB file) took 16 minutes, all of it synchronous. The composer runs with
 * `uniqueKeys: false` and this linear check puts the same errors back: 'Map keys must be unique'
 * at the repeated key, for scalar keys of equal value (`1` and `0x1` too), as yaml reports them.
 */
export function checkUniqueKeys(doc: Document.Parsed): void {
  const found: YAMLParseError[] = [];
  const pending: unknown[] = [doc.contents];
  while (pending.length > 0) {
    const node = pending.pop();
    if (isMap(node)) {
      const seen = new Set<unknown>();
      for (const pair of node.items) {
        const key = pair.key;
        if (isScalar(key) && key.range) {
          if (seen.has(key.value) && !Number.isNaN(key.value)) {
            found.push(
              new YAMLParseError(
                [key.range[0], key.range[0] + 1],
                'DUPLICATE_KEY',
                'Map keys must be unique',
              ),
            );
          }
          seen.add(key.value);
        }
        pending.push(pair.key, pair.value);
      }
    } else if (isSeq(node)) {
      pending.push(...node.items);
    } else if (isPair(node)) {
      pending.push(node.key, node.value);
    }
    // Aliases are not followed: the node they name is walked where it is defined.
  }
  if (found.length === 0) return;
  // yaml reports errors as it meets them, in source order.
  doc.errors = [...doc.errors, ...found].sort((a, b) => a.pos[0] - b.pos[0]);
}
