import { Client, Connection } from '@temporalio/client';
import type { Config } from '../config';
import { CONNECT_ATTEMPTS, connectionOptions, withConnectTimeout } from './connection';

/** A connected Temporal client; `close()` releases the connection. */
export interface TemporalClient {
  client: Client;
  close(): Promise<void>;
}

/** Connects a client to TEMPORAL_ADDRESS, failing within seconds when nothing answers there. */
export async function connectClient(config: Config): Promise<TemporalClient> {
  const timeoutMs = config.CASEWORK_CONNECT_TIMEOUT_MS;
  const connection = await withConnectTimeout(
    config.TEMPORAL_ADDRESS,
    async () => {
      const conn = await Connection.connect({ ...connectionOptions(config), connectTimeout: timeoutMs });
      // connect() is lazy about some failures: a cheap call proves the server answers.
      try {
        await conn.withDeadline(Date.now() + timeoutMs, () => conn.workflowService.getSystemInfo({}));
      } catch (error) {
        await conn.close().catch(() => undefined);
        throw error;
      }
      return conn;
    },
    { timeoutMs, attempts: CONNECT_ATTEMPTS },
  );
  return { client: new Client({ connection, namespace: config.TEMPORAL_NAMESPACE }), close: () => connection.close() };
}
