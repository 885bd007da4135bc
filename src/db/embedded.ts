import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** A running embedded Postgres (PGlite behind its socket server) and how to reach it. */
export interface EmbeddedPostgres {
  url: string;
  stop(): Promise<void>;
}

/**
 * Starts PGlite behind a Postgres wire-protocol socket so `pg` can talk to it like any server.
 * Used only when DATABASE_URL is unset, so a newcomer needs no database server.
 * `maxConnections` must exceed the pool size, or pool clients queue behind each other forever.
 */
export async function startEmbeddedPostgres(options: { dataDir: string; maxConnections: number; port?: number }): Promise<EmbeddedPostgres> {
  const { PGlite } = await import('@electric-sql/pglite');
  const { pg_trgm } = await import('@electric-sql/pglite/contrib/pg_trgm');
  const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket');
  const dir = options.dataDir === 'memory://' ? 'memory://' : resolve(options.dataDir, 'pglite');
  if (dir !== 'memory://') mkdirSync(join(dir, '..'), { recursive: true });
  const db = await PGlite.create(dir, { extensions: { pg_trgm } });
  const server = new PGLiteSocketServer({
    db,
    host: '127.0.0.1',
    port: options.port ?? 0,
    maxConnections: options.maxConnections,
  });
  await server.start();
  const address = (server as unknown as { server?: { address(): { port: number } } }).server?.address();
  const port = address?.port ?? options.port;
  if (!port) throw new Error('embedded Postgres started but reported no port');
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async stop() {
      await server.stop();
      await db.close();
    },
  };
}
