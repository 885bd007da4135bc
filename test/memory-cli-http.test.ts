import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createMemoryActivities } from '../src/activities/memory';
import { runMemoryCommand } from '../src/main/commands/memory';
import type { Client } from '@temporalio/client';
import { loadConfig } from '../src/config';
import { createApp } from '../src/server/app';
import type { Database } from '../src/db/pool';
import { showMemory } from '../src/memory/control';
import { openTestDatabase, unique } from './support/db';
import { recordWrongBuildingCase } from './support/memory-seed';

describe('memory from the command line and over HTTP', () => {
  let db: Database;
  let server: Server;
  let base: string;

  const seed = async (customerId: string) => {
    const memory = createMemoryActivities({ pool: db.app });
    await recordWrongBuildingCase(memory, customerId);
    await memory.remember({
      name: 'remember',
      input: { fact: 'Deliveries must go to Block B, not the main gate' },
      context: { customerId, ticketId: 'T1', workflowId: 'investigation-T1', toolUseId: 't' },
    });
    return (await showMemory(db.app, customerId)).notes[0]?.note_id;
  };
  const cli = async (...args: string[]) => {
    const lines: string[] = [];
    const code = await runMemoryCommand(args, { pool: db.app, out: (line) => lines.push(line) });
    return { code, text: lines.join('\n') };
  };
  const http = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(base + path, {
      method,
      headers: { 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };

  before(async () => {
    db = await openTestDatabase();
    // The memory routes use no Temporal client; open local mode trusts the caller and relays its actor.
    const app = createApp({ client: {} as Client, pool: db.app, config: loadConfig({ CASEWORK_HTTP_OPEN: 'true' }), log: () => undefined });
    server = createServer((req, res) => void app.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await new Promise((resolve) => server.close(resolve));
    await db.close();
  });

  it('show prints the profile, notes and cases; --json prints the same as data', async () => {
    const customer = unique('cust');
    const noteId = await seed(customer);
    const shown = await cli('show', '--customer', customer);
    assert.equal(shown.code, 0);
    assert.match(shown.text, new RegExp(`Memory for customer ${customer}`));
    assert.match(shown.text, /delivery instructions: Deliveries must go to Block B, not the main gate/);
    assert.match(shown.text, new RegExp(`note ${noteId} .*preference, current: Deliveries must go to Block B`));
    assert.match(shown.text, /2026-10-14 {2}order 4471: Wrong building; resolution: refunded/);
    const json = JSON.parse((await cli('show', '--customer', customer, '--json')).text);
    assert.equal(json.notes[0].note_id, noteId);
  });

  it('show for a customer with no memory prints an empty memory and succeeds', async () => {
    const shown = await cli('show', '--customer', unique('cust_new'));
    assert.equal(shown.code, 0);
    assert.match(shown.text, /Profile: \(empty\)\nNotes: \(none\)\nCases: \(none\)/);
  });

  it('correct and forget change the memory and say what they did', async () => {
    const customer = unique('cust');
    const noteId = await seed(customer);
    const corrected = await cli('correct', '--customer', customer, '--note', String(noteId), '--text', 'Deliveries must go to Block C');
    assert.deepEqual(corrected, { code: 0, text: `Corrected note ${noteId} for customer ${customer}: Deliveries must go to Block C` });
    assert.deepEqual(await cli('forget', '--customer', customer, '--note', String(noteId)), { code: 0, text: `Forgot note ${noteId} for customer ${customer}.` });
    assert.deepEqual(await cli('forget', '--customer', customer), { code: 0, text: `Forgot all memory of customer ${customer}: 0 notes, 1 cases, 0 profile fields.` });
  });

  it("a note of another customer is 'no note N for customer X', exit code 2, and nothing changes", async () => {
    const owner = unique('cust');
    const intruder = unique('cust');
    const noteId = await seed(owner);
    assert.deepEqual(await cli('forget', '--customer', intruder, '--note', String(noteId)), { code: 2, text: `error: no note ${noteId} for customer ${intruder}` });
    assert.deepEqual(await cli('correct', '--customer', intruder, '--note', String(noteId), '--text', 'x y'), {
      code: 2,
      text: `error: no note ${noteId} for customer ${intruder}`,
    });
    assert.equal((await showMemory(db.app, owner)).notes[0]?.text, 'Deliveries must go to Block B, not the main gate');
  });

  it('usage mistakes exit with code 2 and a clear message', async () => {
    assert.match((await cli('show')).text, /^error: --customer is required\nusage:/);
    assert.equal((await cli('show')).code, 2);
    assert.deepEqual(await cli('show', '--customer', ''), { code: 2, text: 'error: a customer id is required' });
    assert.match((await cli('correct', '--customer', 'c', '--note', '1')).text, /--text is required/);
    assert.match((await cli('erase', '--customer', 'c')).text, /unknown memory command "erase"/);
    assert.match((await cli('show', '--customer', 'c', '--bogus')).text, /error: Unknown option '--bogus'/);
  });

  it('GET shows the memory as JSON and records who asked', async () => {
    const customer = unique('cust');
    await seed(customer);
    const res = await http('GET', `/customers/${encodeURIComponent(customer)}/memory`, undefined, { actor: 'console-sam' });
    assert.equal(res.status, 200);
    assert.equal(res.body.profile.delivery_instructions.value, 'Deliveries must go to Block B, not the main gate');
    assert.equal(res.body.audit[0].actor, 'console-sam via open-local-mode');
  });

  it('PATCH corrects a note; bad bodies and other customers get 400 and 404 with clear messages', async () => {
    const customer = unique('cust');
    const noteId = await seed(customer);
    const ok = await http('PATCH', `/customers/${customer}/memory/notes/${noteId}`, { text: 'Deliveries must go to Block C' });
    assert.equal(ok.status, 200);
    assert.equal(ok.body.note.text, 'Deliveries must go to Block C');
    assert.deepEqual(await http('PATCH', `/customers/${customer}/memory/notes/${noteId}`, 'not json'), {
      status: 400,
      body: { error: 'request body is not valid JSON; send {"text": "..."}' },
    });
    assert.deepEqual(await http('PATCH', `/customers/${customer}/memory/notes/${noteId}`, { words: 'x' }), {
      status: 400,
      body: { error: 'request body must be JSON with a "text" string' },
    });
    assert.equal((await http('PATCH', `/customers/${customer}/memory/notes/${noteId}`, { text: 'password is hunter2' })).status, 400);
    assert.deepEqual(await http('PATCH', `/customers/someone-else/memory/notes/${noteId}`, { text: 'x y' }), {
      status: 404,
      body: { error: `no note ${noteId} for customer someone-else` },
    });
  });

  it('DELETE forgets one note or everything; other paths and methods are answered clearly', async () => {
    const customer = unique('cust');
    const noteId = await seed(customer);
    assert.equal((await http('DELETE', `/customers/${customer}/memory/notes/${noteId}`)).body.deleted.notes, 1);
    assert.deepEqual((await http('DELETE', `/customers/${customer}/memory`)).body.deleted, { notes: 0, cases: 1, profile_fields: 0, note_ids: [] });
    assert.equal((await http('DELETE', '/customers//memory')).status, 404);
    assert.deepEqual(await http('DELETE', '/customers/%20/memory'), { status: 400, body: { error: 'the customer id is empty' } });
    const wrongMethod = await http('POST', `/customers/${customer}/memory`, {});
    assert.equal(wrongMethod.status, 405);
    assert.match((await http('GET', '/orders/4471')).body.error, /no route GET \/orders\/4471/);
  });
});
