import type { Client } from '@temporalio/client';
import type { Worker } from '@temporalio/worker';
import type { Config } from '../../config';
import { migrate } from '../../db/migrate';
import { openDatabase, type Database } from '../../db/pool';
import { seedDemoData } from '../demo-data/seed';
import type { McpTools } from '../../commerce/mcp/client';
import type { Model } from '../../model/port';
import { selectModel } from '../../model/select';
import { startInProcessWorker } from '../../worker';
import { startDevServer, type DevServer } from './dev-server';

/** Everything a laptop run needs, started in-process: dev server, Postgres, a worker, a client. */
export interface LocalStack {
  config: Config;
  server: DevServer;
  db: Database;
  model: Model;
  client: Client;
  worker: Worker;
  stop(): Promise<void>;
}

/**
 * Starts (or reuses) the Temporal dev server, opens Postgres (DATABASE_URL, or an embedded one:
 * in memory, or in CASEWORK_DATA_DIR served on `dbPort`), migrates and seeds it, and runs a
 * worker in this process. For the demo, `casework dev` and the workflow part of the context
 * bench; production runs `casework worker` instead. `mcp`: MCP servers already connected, offered by the worker.
 */
export async function startLocalStack(config: Config, options: { model?: Model; inMemoryDb?: boolean; dbPort?: number; mcp?: McpTools } = {}): Promise<LocalStack> {
  const [host, portText] = config.TEMPORAL_ADDRESS.split(':');
  if (host !== '127.0.0.1' && host !== 'localhost') throw new Error(`the local stack runs its own dev server; TEMPORAL_ADDRESS ${config.TEMPORAL_ADDRESS} is not local`);
  const uiPort = Number(new URL(config.TEMPORAL_UI_URL).port || 8233);
  const server = await startDevServer({ port: Number(portText || 7233), uiPort });
  const stops: (() => Promise<unknown>)[] = [() => server.stop()];
  const stop = async () => {
    for (const s of stops.reverse()) await s().catch(() => undefined);
  };
  try {
    const db = await openDatabase(options.inMemoryDb ? { ...config, DATABASE_URL: undefined } : config, {
      ...(options.inMemoryDb ? { dataDir: 'memory://' } : {}),
      ...(options.dbPort !== undefined ? { embeddedPort: options.dbPort } : {}),
    });
    stops.push(() => db.close());
    await migrate(db.admin);
    await seedDemoData(db.admin);
    const model = options.model ?? selectModel(config);
    const { worker, client, stop: stopWorker } = await startInProcessWorker({ config, pool: db.app, model, ...(options.mcp ? { mcp: options.mcp } : {}) });
    stops.push(stopWorker);
    return { config, server, db, model, client, worker, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
