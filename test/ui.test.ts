import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { Database } from '../src/db/pool';
import type { InvestigationStatus } from '../src/schemas/investigation';
import { startCodecServer } from '../src/server/codec-server';
import { dataConverterFor } from '../src/temporal/data-converter';
import { ARTIFACTS, launchChromium, skipWithoutChromium } from './support/chromium';
import { openTestDatabase } from './support/db';
import { example, send } from './support/investigate';
import { startTestWorker, type TestWorker } from './support/temporal';

// An operator's view: the demo investigation, paused for a refund approval, found in the dev
// server's web UI by a search-attribute filter, with its status, summary and search attributes
// showing. Drives Debian's headless Chromium with playwright-core; screenshots go to
// test-artifacts/ (git-ignored). scripts/install-chromium.sh installs the browser.

const UI_URL = process.env.TEMPORAL_UI_URL ?? 'http://127.0.0.1:8233';
const NAMESPACE = process.env.TEMPORAL_NAMESPACE ?? 'default';

let db: Database;
let tw: TestWorker;
let browser: Browser;
let page: Page;
let paused: InvestigationStatus;
let codecServer: Awaited<ReturnType<typeof startCodecServer>>;
let ticketId: string;

describe('the investigation in the Temporal web UI', { skip: skipWithoutChromium }, () => {
  before(async () => {
    db = await openTestDatabase({ seed: true });
    tw = await startTestWorker({ pool: db.app });
    const event = example('dana-5102');
    ticketId = event.ticketId;
    paused = await send(tw, event);
    assert.equal(paused.status, 'awaiting_approval', 'the dana example pauses at its refund request');
    // Payloads are encrypted: the operator's UI decodes them through the codec server (loopback,
    // outside production mode, so without a token), set as the UI's Codec Server dialog saves it.
    const converter = dataConverterFor(tw.config, db.app);
    codecServer = await startCodecServer(
      { ...tw.config, CASEWORK_CODEC_SERVER_TOKEN: undefined },
      { codecs: converter.payloadCodecs ?? [], externalStorage: converter.externalStorage, port: 0 },
    );
    browser = await launchChromium();
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    await context.addInitScript(
      `localStorage.setItem('endpoint', ${JSON.stringify(JSON.stringify(codecServer.url))}); localStorage.setItem('overrideRemoteCodecConfiguration', 'true');`,
    );
    page = await context.newPage();
    page.setDefaultTimeout(20_000);
  });
  after(async () => {
    await browser?.close();
    await codecServer?.close();
    await tw?.stop();
    await db?.close();
  });

  test('the workflow list filtered by CaseworkStatus and CaseworkTicketId shows the paused investigation', async () => {
    const query = `CaseworkStatus="awaiting_approval" AND CaseworkTicketId="${ticketId}"`;
    const url = `${UI_URL}/namespaces/${NAMESPACE}/workflows?query=${encodeURIComponent(query)}`;
    const link = page.getByRole('link', { name: paused.workflowId, exact: true });
    // Visibility is eventually consistent: the status upsert can take a moment to be listed.
    const deadline = Date.now() + 30_000;
    for (;;) {
      await page.goto(url);
      const shown = await link
        .first()
        .waitFor({ timeout: 5_000 })
        .then(
          () => true,
          () => false,
        );
      if (shown) break;
      if (Date.now() > deadline) {
        await page.screenshot({ path: join(ARTIFACTS, 'ui-list-missing.png') });
        assert.fail(`${paused.workflowId} did not appear in the UI list for ${query} within 30 s (see test-artifacts/ui-list-missing.png)`);
      }
    }
    const row = page.getByRole('row').filter({ has: link });
    assert.match(await row.innerText(), /running/i, 'the list shows the run as running');
    assert.equal(await page.getByRole('row').filter({ hasText: 'investigation-' }).count(), 1, 'the filter narrows the list to this one ticket');
    await page.screenshot({ path: join(ARTIFACTS, 'ui-awaiting-approval-list.png') });
  });

  test('opening it shows its status, its summary and the search attributes the workflow upserted', async () => {
    await page.getByRole('link', { name: paused.workflowId, exact: true }).first().click();
    await page.getByRole('heading', { name: paused.workflowId }).waitFor();
    assert.match(await page.locator('main').innerText(), /RUNNING/, 'the header shows the execution status');

    await page.getByText('Search Attributes', { exact: true }).first().click();
    await page.getByText('"CaseworkStatus": "awaiting_approval"').waitFor();
    const attributes = await page.locator('main').innerText();
    assert.match(attributes, new RegExp(`"CaseworkTicketId": "${ticketId}"`));
    assert.match(attributes, new RegExp(`"CaseworkCustomerId": "${paused.customerId}"`));
    assert.match(attributes, new RegExp(`"CaseworkStep": ${paused.step}\\b`));

    // The summary is rendered as markdown inside a frame of its own.
    await page.getByText('User Metadata', { exact: true }).first().click();
    const summary = page.locator('iframe[src*="render"]').first().contentFrame().getByText(`Ticket ${ticketId} from ${paused.customerId}`);
    await summary.waitFor();
    await page.screenshot({ path: join(ARTIFACTS, 'ui-investigation-summary.png') });

    await page.getByText('Memo', { exact: true }).first().click();
    await page
      .getByText(/awaiting.approval/)
      .first()
      .waitFor();
    assert.match(await page.locator('main').innerText(), new RegExp(`Ticket ${ticketId}`), 'the memo carries the one-line summary');
    await page.screenshot({ path: join(ARTIFACTS, 'ui-investigation.png') });
  });

  test('the Queries tab runs the status query and shows the pending refund', async () => {
    await page.getByText('Queries', { exact: true }).first().click();
    await page.getByRole('button', { name: 'Run Query' }).waitFor();
    await page.getByRole('button', { name: 'Run Query' }).click();
    await page.getByText('"status": "awaiting_approval"').first().waitFor();
    const answer = await page.locator('main').innerText();
    assert.match(answer, new RegExp(`"request_id": "${paused.pendingApproval!.request_id}"`), 'the answer names the pending request');
    assert.match(answer, /"order_id": "5102"/);
    await page.screenshot({ path: join(ARTIFACTS, 'ui-status-query.png') });
  });
});
