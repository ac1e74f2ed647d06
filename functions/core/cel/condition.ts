/** A CEL expression that should evaluate to a bool, compiled once and evaluated against objects. */
export interface CelCondition {
  readonly source: string;
  /**
   * The expression's value with each top-level field of `object` bound as a variable (`status`,
   * `metadata`, …), as Flux binds a custom resource. Throws CelEvaluationError when it cannot be
   * evaluated (a missing field, a value that is not a bool).
   */
  evaluate(object: object): boolean;
}

export class CelEvaluationError extends Error {
  override readonly name = 'CelEvaluationError';
}
