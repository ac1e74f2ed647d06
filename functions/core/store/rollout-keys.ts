// The partitions of a rollout's items: its own (spec, generation, actions, tallies, ordered members)
// and each member's lookup (the rollout it is in, its place).
export const rolloutKey = (name: string) => `rollout#${name}`;
/** The partition naming the rollout a delivery is in (the rollout as sort key) and its places. */
export const rolloutMemberKey = (delivery: string) => `lookup#rollout-member#${delivery}`;
