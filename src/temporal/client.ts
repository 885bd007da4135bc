import { Client, Connection } from '@temporalio/client';
import type { Config } from '../config';
import { connectionOptions, withConnectTimeout } from './connection';

/** A connected Temporal client; `close()` releases the connection. */
export interface TemporalClient {
  client: Client;
  close(): Promise<void>;
}

/** Connects a client to TEMPORAL_ADDRESS, failing within seconds when nothing answers there. */
export async function connectClient(config: Config): Promise<TemporalClient> {
  const connection = await withConnectTimeout(config.TEMPORAL_ADDRESS, async () => {
    const conn = await Connection.connect({ ...connectionOptions(config), connectTimeout: '4 seconds' });
    // connect() is lazy about some failures: a cheap call proves the server answers.
    await conn.workflowService.getSystemInfo({});
    return conn;
  });
  return { client: new Client({ connection, namespace: config.TEMPORAL_NAMESPACE }), close: () => connection.close() };
}
