import { parseArgs } from 'node:util';
import type { Pool } from 'pg';
import type { Embedder } from '../../memory/embedder';
import { reindexMemory } from '../../memory/reindex';

/** `casework memory reindex` usage, shown on a usage error. */
export const REINDEX_USAGE = 'usage: casework memory reindex [--customer <id>] [--json]';

/**
 * Runs `casework memory reindex`: embeds every note and case stored without a vector of the
 * configured embedder (before embeddings existed, while the embedder was down, or with another
 * model), customer by customer. Returns the exit code: 0 done, 1 failed, 2 usage.
 */
export async function runReindexCommand(args: string[], deps: { admin: Pool; app: Pool; embedder: Embedder | undefined; out: (line: string) => void }): Promise<number> {
  let values: { customer?: string; json?: boolean };
  try {
    ({ values } = parseArgs({ args, strict: true, options: { customer: { type: 'string' }, json: { type: 'boolean' } } }));
  } catch (error) {
    deps.out(`${(error as Error).message}\n${REINDEX_USAGE}`);
    return 2;
  }
  if (!deps.embedder) {
    deps.out('CASEWORK_EMBEDDINGS=off: there is no embedder to reindex with; unset it (local model) or name a hosted one');
    return 2;
  }
  try {
    const report = await reindexMemory({ admin: deps.admin, app: deps.app, embedder: deps.embedder, customerId: values.customer, log: values.json ? undefined : deps.out });
    if (values.json) deps.out(JSON.stringify(report, null, 2));
    else {
      deps.out(
        `reindexed with ${deps.embedder.label} (${report.model}): ${report.notes} notes and ${report.cases} cases of ` +
          `${report.customers} customers in ${report.seconds} s (${report.per_second} a second)`,
      );
    }
    return 0;
  } catch (error) {
    deps.out(`casework memory reindex: ${(error as Error).message}`);
    return 1;
  }
}
