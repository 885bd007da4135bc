import { Client, Connection } from '@temporalio/client';
import type { Pool } from 'pg';
import type { Config } from '../config';
import { CONNECT_ATTEMPTS, connectionOptions, withConnectTimeout } from './connection';
import { dataConverterFor } from './data-converter';
import { currentTracing } from '../observability/tracing';
import { tracingClientInterceptors } from '../observability/worker-tracing';

/** A connected Temporal client; `close()` releases the connection. */
export interface TemporalClient {
  client: Client;
  close(): Promise<void>;
}

/** What a client is built with besides configuration. */
export interface ClientOptions {
  /** The database whose payload_blobs hold stored payloads; unset, payloads stay inline and references cannot be read. */
  pool?: Pool;
}

/** Connects a client to TEMPORAL_ADDRESS, failing within seconds when nothing answers there. */
export async function connectClient(config: Config, options: ClientOptions = {}): Promise<TemporalClient> {
  // Keys are read (or refused, in production mode) before any connection is made.
  const dataConverter = dataConverterFor(config, options.pool);
  const timeoutMs = config.CASEWORK_CONNECT_TIMEOUT_MS;
  // gRPC's own deadlines are a little later than ours, so the error that fires names the setting.
  const grpcMs = timeoutMs + 1_000;
  const connection = await withConnectTimeout(
    config.TEMPORAL_ADDRESS,
    async () => {
      const conn = await Connection.connect({ ...connectionOptions(config), connectTimeout: grpcMs });
      // connect() is lazy about some failures: a cheap call proves the server answers.
      try {
        await conn.withDeadline(Date.now() + grpcMs, () => conn.workflowService.getSystemInfo({}));
      } catch (error) {
        await conn.close().catch(() => undefined);
        throw error;
      }
      return conn;
    },
    { timeoutMs, attempts: CONNECT_ATTEMPTS },
  );
  // When this process traces (started by its command), signal-with-start and signals carry the trace context.
  const interceptors = tracingClientInterceptors(currentTracing());
  return { client: new Client({ connection, namespace: config.TEMPORAL_NAMESPACE, dataConverter, interceptors }), close: () => connection.close() };
}
