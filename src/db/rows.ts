import { z } from 'zod';

// Parsers for column types pg returns in shapes that are not JSON-safe: every row a query
// returns is parsed by a zod schema built from these, so payloads carry ISO strings and numbers.

/** A timestamptz column as pg returns it (a Date), parsed to an ISO string. */
export const isoTimestamp = z.date().transform((d) => d.toISOString());

/** A nullable timestamptz column, parsed to an ISO string or null. */
export const isoTimestampOrNull = z
  .date()
  .nullable()
  .transform((d) => (d ? d.toISOString() : null));

/** The row a query must return (a count, a RETURNING write); none means the query is wrong, named by `what`. */
export function firstRow<T>(rows: readonly T[], what: string): T {
  const [row] = rows;
  if (row === undefined) throw new Error(`${what}: the query returned no row`);
  return row;
}

/** A numeric/bigint column pg returns as a string, parsed to a number. */
export const numberFromText = z.union([z.number(), z.string()]).transform(Number);
