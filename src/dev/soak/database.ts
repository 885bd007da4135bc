import { Pool } from 'pg';

// A soak's database of its own on the Postgres server it is given: created fresh, dropped after.

/** Creates database `name` on the server at `serverUrl`; answers its URL. */
export async function createDatabase(serverUrl: string, name: string): Promise<string> {
  const admin = new Pool({ connectionString: serverUrl, max: 1 });
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Drops database `name`, closing whatever is still connected to it. */
export async function dropDatabase(serverUrl: string, name: string): Promise<void> {
  const admin = new Pool({ connectionString: serverUrl, max: 1 });
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}

/** `url` with its host and port replaced by a local proxy's. */
export function viaProxy(url: string, port: number): string {
  const u = new URL(url);
  u.hostname = '127.0.0.1';
  u.port = String(port);
  return u.toString();
}
