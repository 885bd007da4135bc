import { after, before } from 'node:test';
import type { Client } from '@temporalio/client';
import type { Worker } from '@temporalio/worker';
import type { Pool } from 'pg';
import { loadConfig, type Config } from '../../src/config';
import { createOfflineModel } from '../../src/model/offline';
import type { Model } from '../../src/model/port';
import type { ModelReply, ModelRequest } from '../../src/schemas/model';
import { startInProcessWorker } from '../../src/worker';
import type { Database } from '../../src/db/pool';
import { openTestDatabase, unique } from './db';
import type { McpTools } from '../../src/commerce/mcp/client';

/** A worker on its own task queue against the suite's dev server, and a client for it. */
export interface TestWorker {
  config: Config;
  client: Client;
  worker: Worker;
  model: Model;
  taskQueue: string;
  /** The pool the worker uses; the gate's tables (db/tickets.ts) are read through it too. */
  pool: Pool;
  stop(): Promise<void>;
}

/**
 * Starts a worker for one test file on the dev server scripts/test.ts started
 * (TEMPORAL_ADDRESS), with the prebuilt workflow bundle (CASEWORK_WORKFLOW_BUNDLE) when set.
 */
export async function startTestWorker(options: { pool: Pool; model?: Model; env?: Record<string, string>; mcp?: McpTools }): Promise<TestWorker> {
  const taskQueue = unique('casework-test');
  const config = loadConfig({ ...process.env, ...options.env, TEMPORAL_TASK_QUEUE: taskQueue });
  const model = options.model ?? createOfflineModel();
  const started = await startInProcessWorker({ config, pool: options.pool, model, workflowBundlePath: process.env.CASEWORK_WORKFLOW_BUNDLE, mcp: options.mcp });
  return { ...started, config, model, taskQueue, pool: options.pool };
}

/** A model port that records every request it is sent and every reply, in front of another one. */
export function recordingModel(inner: Model = createOfflineModel()): Model & { requests: ModelRequest[]; replies: ModelReply[] } {
  const requests: ModelRequest[] = [];
  const replies: ModelReply[] = [];
  return {
    label: inner.label,
    offline: inner.offline,
    requests,
    replies,
    async create(request) {
      requests.push(structuredClone(request));
      const reply = await inner.create(request);
      replies.push(reply);
      return reply;
    },
  };
}

/** A seeded database of its own and a worker on it, for the tests of one file. */
export interface SeededWorker {
  db: Database;
  tw: TestWorker;
}

/**
 * Registers before/after hooks that open a seeded test database and start a worker on it,
 * and stop both when the file's tests are done. Read `db` and `tw` inside tests.
 */
export function seededWorker(options: { model?: Model } = {}): SeededWorker {
  const context = {} as SeededWorker;
  before(async () => {
    context.db = await openTestDatabase({ seed: true });
    context.tw = await startTestWorker({ pool: context.db.app, model: options.model });
  });
  after(async () => {
    await context.tw?.stop();
    await context.db?.close();
  });
  return context;
}
