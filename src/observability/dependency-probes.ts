import type { Client } from '@temporalio/client';
import type { Pool } from 'pg';
import type { DependencyProbe } from './metrics';

// The probes behind casework_dependency_up: one cheap round trip each, bounded, so a scrape
// during an outage answers within its timeout with a 0 instead of hanging.

function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/** Postgres answers `SELECT 1` on `pool`. */
export function postgresProbe(pool: Pool, timeoutMs = 2_000): DependencyProbe {
  return async () => {
    await within(timeoutMs, pool.query('SELECT 1'));
    return true;
  };
}

/** Temporal's frontend answers GetSystemInfo through `client`'s connection. */
export function temporalProbe(client: Client, timeoutMs = 2_000): DependencyProbe {
  return async () => {
    await within(timeoutMs, client.workflowService.getSystemInfo({}));
    return true;
  };
}
