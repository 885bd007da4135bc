import type { Connection } from '@temporalio/client';
import { SearchAttributeType } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { SA } from '../schemas/search-attributes';

/** The search attribute types casework uses, and how the operator service names each. */
const INDEXED: Record<(typeof SA)[keyof typeof SA]['type'], temporal.api.enums.v1.IndexedValueType> = {
  [SearchAttributeType.KEYWORD]: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  [SearchAttributeType.INT]: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_INT,
};

/**
 * Registers casework's search attributes in `namespace` through the operator service, for
 * servers started without them (the time-skipping test server; a self-hosted cluster).
 * Attributes already there are left alone.
 */
export async function registerSearchAttributes(connection: Connection, namespace: string): Promise<void> {
  // The time-skipping test server can add attributes but not list them.
  const existing = await connection.operatorService.listSearchAttributes({ namespace }).catch(() => undefined);
  const known = new Set(Object.keys(existing?.customAttributes ?? {}));
  const missing = Object.values(SA).filter((key) => !known.has(key.name));
  if (!missing.length) return;
  await connection.operatorService.addSearchAttributes({
    namespace,
    searchAttributes: Object.fromEntries(missing.map((key) => [key.name, INDEXED[key.type]])),
  });
}
