/** A revision an approval can be pinned to: `<tag>@sha256:<64 hex>` or `sha256:<64 hex>`. */
export const PINNABLE_REVISION = /^(?:[A-Za-z0-9_][A-Za-z0-9._-]{0,127}@)?sha256:[a-f0-9]{64}$/;
