import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client as PgClient, Pool } from 'pg';
import { migrate } from '../src/db/migrate';
import { startDevServer } from '../src/dev/env/dev-server';
import { findTestServer } from '../src/dev/env/temporal-cli';
import { installEmbeddingModel } from '../src/memory/model-files';
import { writeWorkflowBundle } from '../src/worker';

// `npm test`: one Temporal dev server (gRPC 7243, web UI 8243) and, when DATABASE_URL is set,
// one fresh database for the whole suite; the workflow bundle built once; then node's test
// runner over test/*.test.ts. Its last lines ("# pass N", "# fail N") are what CI reads.

const ROOT = resolve(__dirname, '..');
const TEMPORAL_PORT = Number(process.env.CASEWORK_TEST_TEMPORAL_PORT ?? 7243);
const UI_PORT = Number(process.env.CASEWORK_TEST_UI_PORT ?? 8243);

async function freshDatabase(baseUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `casework_test_${process.pid}`;
  const admin = new PgClient({ connectionString: baseUrl, connectionTimeoutMillis: 8_000 });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  // Creates the cluster-wide application role once, before test files migrate databases of their own in parallel.
  const pool = new Pool({ connectionString: url.toString(), max: 1 });
  await migrate(pool);
  await pool.end();
  return {
    url: url.toString(),
    async drop() {
      const again = new PgClient({ connectionString: baseUrl });
      await again.connect();
      await again.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await again.end();
    },
  };
}

async function main(): Promise<number> {
  const only = process.argv.slice(2);
  const files = only.length
    ? only
    : readdirSync(join(ROOT, 'test'))
        .filter((f) => f.endsWith('.test.ts'))
        .sort()
        .map((f) => join('test', f));

  const started = Date.now();
  // The local embedding model's files, once, before test files load it in parallel.
  installEmbeddingModel();
  const server = await startDevServer({
    port: TEMPORAL_PORT,
    uiPort: UI_PORT,
    // Low enough that the 200-step test continues as new on the server's own suggestion.
    dynamicConfig: { 'limit.historyCount.suggestContinueAsNew': 1000 },
  });
  const db = process.env.DATABASE_URL ? await freshDatabase(process.env.DATABASE_URL) : undefined;
  const work = mkdtempSync(join(tmpdir(), 'casework-test-'));
  try {
    const bundlePath = join(work, 'workflow-bundle.js');
    await writeWorkflowBundle(bundlePath);
    console.log(
      `test setup: Temporal ${server.address} (UI ${server.uiUrl}), Postgres ${db ? db.url.replace(/\/\/[^@]*@/, '//') : 'embedded per file'}, ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    const env = {
      ...process.env,
      TEMPORAL_ADDRESS: server.address,
      TEMPORAL_UI_URL: server.uiUrl,
      CASEWORK_WORKFLOW_BUNDLE: bundlePath,
      TEMPORAL_TEST_SERVER: process.env.TEMPORAL_TEST_SERVER ?? findTestServer(),
      ...(db ? { DATABASE_URL: db.url } : {}),
      CASEWORK_LOG_LEVEL: process.env.CASEWORK_LOG_LEVEL ?? 'warn',
    };
    const child = spawn(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-reporter=spec', ...files], {
      cwd: ROOT,
      env,
      stdio: 'inherit',
    });
    return await new Promise<number>((resolvePromise) => child.on('exit', (code) => resolvePromise(code ?? 1)));
  } finally {
    rmSync(work, { recursive: true, force: true });
    await db?.drop().catch(() => undefined);
    await server.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (error: Error) => {
    console.error(`npm test could not set up: ${error.message}`);
    process.exit(1);
  },
);
