import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import { chromium, type Browser } from 'playwright-core';
import { loadConfig } from '../src/config';
import type { Database } from '../src/db/pool';
import { startCodecServer } from '../src/server/codec-server';
import { dataConverterFor, FAILURE_CONVERTER_PATH } from '../src/temporal/data-converter';
import { openTestDatabase, unique } from './support/db';
import type { ProbeActivities } from './fixtures/codec-probe-workflow';

// An operator with the codec server configured in the web UI reads a tool result decoded in
// the event history; the same page without it shows only ciphertext. Drives Debian's headless
// Chromium with playwright-core; screenshots go to test-artifacts/ (git-ignored).

const ARTIFACTS = resolve(__dirname, '../test-artifacts');
const UI_URL = process.env.TEMPORAL_UI_URL ?? 'http://127.0.0.1:8233';
const CHROMIUM =
  [process.env.CASEWORK_CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => p && existsSync(p)) ??
  (spawnSync('sh', ['-c', 'command -v chromium'], { encoding: 'utf8' }).stdout.trim() || undefined);
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const skip = !process.env.TEMPORAL_ADDRESS
  ? 'needs the dev server npm test starts (TEMPORAL_ADDRESS)'
  : !CHROMIUM && process.env.CI !== 'true'
    ? 'headless Chromium is not installed: run `sudo bash scripts/install-chromium.sh` or set CASEWORK_CHROMIUM'
    : false;

describe('decoded payloads in the Temporal web UI', { skip }, () => {
  const message = 'Dana Whitfield says parcel NL-88231 never arrived';
  const toolResult = `order A-99317 for Dana Whitfield\n${'shipment scan: Tilburg hub, bag 44; '.repeat(40)}`;
  let db: Database;
  let connection: NativeConnection;
  let worker: Worker;
  let running: Promise<void>;
  let browser: Browser;
  let codecServer: Awaited<ReturnType<typeof startCodecServer>>;
  let historyUrl: string;
  const codecKeys = `ui-test:${randomBytes(32).toString('base64')}`;

  before(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    db = await openTestDatabase();
    // Loopback and outside production mode, the codec server may run without a token: the dev
    // server's UI has no sign-in whose access token it could pass on.
    const config = loadConfig({ ...process.env, CASEWORK_CODEC_KEYS: codecKeys, CASEWORK_PAYLOAD_STORE_THRESHOLD_BYTES: '1024' });
    const dataConverter = dataConverterFor(config, db.app);
    codecServer = await startCodecServer(
      { ...config, CASEWORK_CODEC_SERVER_TOKEN: undefined },
      { codecs: dataConverter.payloadCodecs!, externalStorage: dataConverter.externalStorage, port: 0 },
    );
    const { code } = await bundleWorkflowCode({
      workflowsPath: require.resolve('./fixtures/codec-probe-workflow'),
      failureConverterPath: FAILURE_CONVERTER_PATH,
      logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error: console.error },
    });
    const activities: ProbeActivities = {
      lookUpOrder: async () => ({ tool_result: toolResult }),
      lookUpRefund: async () => {
        throw ApplicationFailure.nonRetryable('no refund on file', 'NoRefund');
      },
    };
    const taskQueue = unique('codec-ui');
    connection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS });
    worker = await Worker.create({ connection, taskQueue, workflowBundle: { code }, activities, dataConverter });
    running = worker.run();
    const clientConnection = await Connection.connect({ address: config.TEMPORAL_ADDRESS });
    const client = new Client({ connection: clientConnection, dataConverter });
    const workflowId = unique('codec-ui-probe');
    const handle = await client.workflow.start('codecProbe', { taskQueue, workflowId, args: [{ message, resultChars: toolResult.length }] });
    await handle.result();
    await clientConnection.close();
    historyUrl = `${UI_URL}/namespaces/default/workflows/${workflowId}/${handle.firstExecutionRunId}/history`;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
  });
  after(async () => {
    await browser?.close();
    worker?.shutdown();
    await running?.catch(() => undefined);
    await connection?.close();
    await codecServer?.close();
    await db?.close();
  });

  test('with the codec server set, the event history shows the tool result decoded', async () => {
    const context = await browser.newContext({ viewport: { width: 1400, height: 1200 } });
    // What the UI's Codec Server dialog saves in localStorage: this browser's endpoint, overriding the server's setting.
    await context.addInitScript(
      `localStorage.setItem('endpoint', ${JSON.stringify(JSON.stringify(codecServer.url))}); localStorage.setItem('overrideRemoteCodecConfiguration', 'true');`,
    );
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    await page.goto(historyUrl);
    await page
      .getByText(/Activity Task Completed|ActivityTaskCompleted/)
      .first()
      .click();
    const decoded = await page
      .getByText(/shipment scan: Tilburg hub/)
      .first()
      .waitFor()
      .then(
        () => true,
        () => false,
      );
    await page.screenshot({ path: join(ARTIFACTS, 'ui-codec-decoded.png'), fullPage: true });
    assert.ok(decoded, 'the decoded tool result shows (see test-artifacts/ui-codec-decoded.png)');
    const shown = await page.locator('main').innerText();
    assert.match(shown, /Dana Whitfield says parcel NL-88231/, 'the workflow input is decoded');
    assert.match(shown, /"tool_result":"order A-99317 for Dana Whitfield/, 'the tool result, stored by reference, is fetched and decoded');
    await context.close();
  });

  test('with a token, the UI decodes once the operator has signed in at the codec server: its calls carry the sign-in cookie', async () => {
    const token = 'codec-ui-token-0123456789abcdef';
    const refusals: string[] = [];
    const config = loadConfig({ ...process.env, CASEWORK_CODEC_KEYS: codecKeys, CASEWORK_PAYLOAD_STORE_THRESHOLD_BYTES: '1024', CASEWORK_CODEC_SERVER_TOKEN: token });
    const dataConverter = dataConverterFor(config, db.app);
    const guarded = await startCodecServer(config, {
      codecs: dataConverter.payloadCodecs!,
      externalStorage: dataConverter.externalStorage,
      port: 0,
      onRefused: (event) => refusals.push(event.reason),
    });
    const context = await browser.newContext({ viewport: { width: 1400, height: 1200 } });
    try {
      // The UI's Codec Server setting with "Include cross-origin credentials" on, as its dialog saves it.
      await context.addInitScript(
        `localStorage.setItem('endpoint', ${JSON.stringify(JSON.stringify(guarded.url))}); localStorage.setItem('overrideRemoteCodecConfiguration', 'true'); localStorage.setItem('includeCredentials', 'true');`,
      );
      const page = await context.newPage();
      page.setDefaultTimeout(20_000);
      // Not signed in yet: every call is refused, and says why.
      await page.goto(historyUrl);
      await page
        .getByText(/Activity Task Completed|ActivityTaskCompleted/)
        .first()
        .click();
      // The UI's calls reach the codec server and are refused (the log says why).
      for (let waited = 0; refusals.length === 0 && waited < 20_000; waited += 200) await new Promise((r) => setTimeout(r, 200));
      assert.doesNotMatch(await page.locator('main').innerText(), /Whitfield|Tilburg/);
      assert.ok(refusals.length > 0 && refusals.every((r) => r === 'credential_missing'), refusals.join(', '));

      await page.goto(`${guarded.url}/sign-in`);
      await page.fill('#token', token);
      await page.click('button[type=submit]');
      await page
        .getByText(/Signed in/)
        .first()
        .waitFor();

      await page.goto(historyUrl);
      await page
        .getByText(/Activity Task Completed|ActivityTaskCompleted/)
        .first()
        .click();
      const decoded = await page
        .getByText(/shipment scan: Tilburg hub/)
        .first()
        .waitFor()
        .then(
          () => true,
          () => false,
        );
      await page.screenshot({ path: join(ARTIFACTS, 'ui-codec-signed-in.png'), fullPage: true });
      assert.ok(decoded, 'signed in, the tool result shows decoded (see test-artifacts/ui-codec-signed-in.png)');
      assert.match(await page.locator('main').innerText(), /Dana Whitfield says parcel NL-88231/);
    } finally {
      await context.close();
      await guarded.close();
    }
  });

  test('without it, the same page shows only ciphertext', async () => {
    const context = await browser.newContext({ viewport: { width: 1400, height: 1200 } });
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    await page.goto(historyUrl);
    await page
      .getByText(/Activity Task Completed|ActivityTaskCompleted/)
      .first()
      .click();
    await page
      .getByText(/binary\/encrypted|ExternalStorageReference|casework-postgres/)
      .first()
      .waitFor();
    await page.screenshot({ path: join(ARTIFACTS, 'ui-codec-ciphertext.png'), fullPage: true });
    const shown = await page.locator('main').innerText();
    assert.doesNotMatch(shown, /Whitfield|Tilburg|NL-88231/);
    await context.close();
  });
});
