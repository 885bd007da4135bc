import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, ElementHandle, Locator, Page } from 'playwright-core';
import { PREVIEW_CUT } from '../src/context/references';
import { SYSTEM_PROMPT_SHOWN } from '../src/context/display-expansion';
import { STUB } from '../src/context/wire';
import { DisplayExpander } from '../src/server/codec-expansion';
import { startCodecServer, type CodecRefusal, type RunningCodecServer } from '../src/server/codec-server';
import { customerKeysOf, openTranscriptLog } from '../src/temporal/codec/body-codec';
import { codecFor, dataConverterFor } from '../src/temporal/data-converter';
import { ARTIFACTS, launchChromium, skipWithoutChromium } from './support/chromium';
import { send, settingsWith, ticket } from './support/investigate';
import { seededWorker } from './support/temporal';

// The whole case in the Temporal web UI, as an operator reads it: the dev server's real UI in
// Chromium, the real codec server (token required, the browser signed in with the cookie the
// docs and docker-compose use), and a real investigation by reference whose history holds
// previews and step plans. Read-only tools and model calls run as local activities (the
// default), so each leaves one Local Activity marker row (MarkerRecorded; its activity type is
// in the clear, its summary and result are not) and the UI shows the marker's details decoded:
// a tool's result whole, and a model step's reply with the plan it was sent (a local call's input
// is not recorded) expanded into the messages it sent. Screenshots go to test-artifacts/ (git-ignored):
//   ui-case-signed-out.png   token mode before signing in: ciphertext, every call refused
//   ui-case-tool-result.png  a get_tracking_events result, whole, in its Local Activity marker
//   ui-case-model-step.png   the last model step's marker details: sent_to_the_model, the system prompt by name
//   ui-case-model-step-cleared.png  the same details further down: the lean tail with cleared stubs
//   ui-case-signed-in.png    token mode after signing in at the codec server: decoded

const TOKEN = 'codec-case-token-0123456789abcdef';
/** The model activity's type, which a model step's Local Activity marker row shows. */
const MODEL_STEP = 'callModelOnPlan';
/** The summary the UI shows on the drill's tracking reads' marker rows, decoded. */
const TOOL_SUMMARY = /^get_tracking_events: order 5102, page \d$/;
const DRILL_STEPS = 15;
const ctx = seededWorker();
let browser: Browser;
let codecServer: RunningCodecServer;
let historyUrl: string;
let wholeResult: string;
const refusals: CodecRefusal[] = [];

/** The dev server's web UI (scripts/test.ts sets it) on the codec server, with "Include cross-origin credentials" on, as compose configures it. */
async function uiContext(viewport = { width: 1400, height: 1400 }): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport });
  await context.addInitScript(
    `localStorage.setItem('endpoint', ${JSON.stringify(JSON.stringify(codecServer.url))}); localStorage.setItem('overrideRemoteCodecConfiguration', 'true'); localStorage.setItem('includeCredentials', 'true');`,
  );
  return context;
}

/** Signs this browser in at the codec server's own page, with its token. */
async function signIn(page: Page): Promise<void> {
  await page.goto(`${codecServer.url}/sign-in`);
  await page.fill('#token', TOKEN);
  await page.click('button[type=submit]');
  await page
    .getByText(/Signed in/)
    .first()
    .waitFor();
}

/** Opens the case's event history and waits until its rows show decoded: a tool call's summary (user metadata) is never in ciphertext. */
async function openDecoded(page: Page): Promise<void> {
  await page.goto(historyUrl);
  await page.getByText(TOOL_SUMMARY).first().waitFor();
}

/** The history's rows for model steps, newest first: each step's Local Activity marker, which names the activity type in the clear. */
const modelStepRows = (page: Page): Locator => page.locator('tr[data-testid="event-summary-row"]', { hasText: 'Local Activity' }).filter({ hasText: MODEL_STEP });

/** The read-only code block labelled `label` ("Input", "Details") that holds `text`: the expanded event's, not the workflow's own input above. */
const codeBlock = (page: Page, label: string, text: string): Locator => page.locator(`.cm-content[aria-label="${label}"]`, { hasText: text }).first();

/**
 * The whole text of a code block (the UI's CodeMirror editor, which renders only the lines in
 * view of its 384-pixel box), scrolled so that `scrollTo`, when given, is at the top of the box.
 */
async function editorText(page: Page, block: ElementHandle, scrollTo?: string): Promise<string> {
  const text = await block.evaluate((el, find) => {
    type View = { state: { doc: { toString(): string } }; dispatch(spec: unknown): void; constructor: { scrollIntoView(pos: number, options: unknown): unknown } };
    type Tile = { view?: View; root?: { view?: View }; rootView?: { view?: View } };
    const tile = (el as unknown as { cmTile?: Tile; cmView?: Tile }).cmTile ?? (el as unknown as { cmView?: Tile }).cmView;
    const view = tile?.view ?? tile?.root?.view ?? tile?.rootView?.view;
    if (!view) throw new Error('no CodeMirror view on the code block');
    const all = view.state.doc.toString();
    const at = find === null ? -1 : all.indexOf(find);
    if (at >= 0) view.dispatch({ effects: view.constructor.scrollIntoView(at, { y: 'start' }) });
    return all;
  }, scrollTo ?? null);
  // The editor draws the scrolled lines on its next frame.
  await page.waitForTimeout(300);
  return text;
}

describe('the whole case in the Temporal web UI, through the codec server', { skip: skipWithoutChromium }, () => {
  before(async () => {
    const { tw, db } = ctx;
    const event = ticket('cust_dana', `Scripted long investigation of order 5102. #drill:${DRILL_STEPS}`);
    // A clearing batch every 5 steps, so the last step sends cleared results as their stubs.
    await send(tw, event, settingsWith({ CASEWORK_CLEAR_EVERY: '5' }));
    const workflowId = `investigation-${event.ticketId}`;
    const { runId } = await tw.client.workflow.getHandle(workflowId).describe();
    historyUrl = `${tw.config.TEMPORAL_UI_URL}/namespaces/${tw.config.TEMPORAL_NAMESPACE}/workflows/${workflowId}/${runId}/history`;

    // What `casework codec-server` starts (src/main/commands/codec-server.ts), with a token.
    const codec = codecFor(tw.config);
    const converter = dataConverterFor(tw.config, db.app, { codec });
    codecServer = await startCodecServer(
      { ...tw.config, CASEWORK_CODEC_SERVER_TOKEN: TOKEN },
      {
        codecs: converter.payloadCodecs!,
        externalStorage: converter.externalStorage,
        customerKeys: customerKeysOf(db.app, codec),
        expander: new DisplayExpander(openTranscriptLog(db.app, codec)),
        port: 0,
        pool: db.app,
        onRefused: (refusal) => refusals.push(refusal),
      },
    );

    // The last tracking page the drill read (the first marker on the page, newest first), whole, as the transcript log holds it: longer than the history's preview.
    const log = openTranscriptLog(db.app, codec);
    const blocks = (await log.all(workflowId, ['message'])).map((e) => e.body as { type: string; id?: string; name?: string; tool_use_id?: string; content?: unknown });
    const lastRead = blocks.filter((b) => b.type === 'tool_use' && b.name === 'get_tracking_events').at(-1)!;
    const last = blocks.find((b) => b.type === 'tool_result' && b.tool_use_id === lastRead.id)!.content;
    wholeResult = typeof last === 'string' ? last : JSON.stringify(last);
    assert.ok(wholeResult.length > 200, `the result is longer than its preview (${wholeResult.length} characters)`);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await codecServer?.close();
  });

  test('token mode: before signing in every call is refused, saying why, and nothing decodes; signed in at the codec server, the page decodes', async () => {
    const context = await uiContext();
    try {
      const page = await context.newPage();
      page.setDefaultTimeout(60_000);
      await page.goto(historyUrl);
      // The rows are there (a marker's name and activity type are in the clear); their summaries and results are not.
      await modelStepRows(page).first().waitFor();
      for (let waited = 0; refusals.length === 0 && waited < 30_000; waited += 200) await new Promise((r) => setTimeout(r, 200));
      await page.screenshot({ path: join(ARTIFACTS, 'ui-case-signed-out.png') });
      assert.ok(refusals.length > 0, 'the UI called the codec server');
      assert.deepEqual([...new Set(refusals.map((r) => `${r.reason} ${r.status}`))], ['credential_missing 401']);
      assert.match(refusals[0]!.detail, /sign in at this server's \/sign-in page/);
      assert.doesNotMatch(await page.locator('main').innerText(), /msg_off_|cust_dana|drill|order 5102/);

      await signIn(page);
      await openDecoded(page);
      await page.screenshot({ path: join(ARTIFACTS, 'ui-case-signed-in.png') });
      assert.match(await page.locator('main').innerText(), /"customerId": "cust_dana"/, 'the workflow input shows decoded');
    } finally {
      await context.close();
    }
  });

  test("a read-only tool's result shows whole in its Local Activity marker, as the transcript log holds it", async () => {
    const context = await uiContext();
    try {
      const page = await context.newPage();
      page.setDefaultTimeout(60_000);
      await signIn(page);
      await openDecoded(page);
      // Newest first: the first marker on the page is the drill's last tracking read.
      await page.getByText(TOOL_SUMMARY).first().click();
      const details = codeBlock(page, 'Details', '"activity_type": "get_tracking_events"');
      // Handles, not locators: once scrolled, the text a locator is found by may be out of view.
      const block = await details.elementHandle();
      const editor = await page.locator('.cm-editor', { has: details }).elementHandle();
      const shown = await editorText(page, block, '"result"');
      await editor.screenshot({ path: join(ARTIFACTS, 'ui-case-tool-result.png') });
      // The UI shows the content as a JSON string: the log's text, escaped once more.
      assert.ok(shown.includes(JSON.stringify(wholeResult).slice(1, -1)), 'the whole result is shown, not its preview');
      assert.ok(!shown.includes(PREVIEW_CUT.trim()), 'no preview marker');
      assert.match(shown, /"logged": \{\s*"seq": \d+/, 'beside the entry of the log it came from');
    } finally {
      await context.close();
    }
  });

  test('a model step shows the messages it sent: the system prompt by name, the memory block, the notes, and the lean tail with cleared stubs', async () => {
    const context = await uiContext();
    try {
      const page = await context.newPage();
      page.setDefaultTimeout(60_000);
      await signIn(page);
      await openDecoded(page);
      // Newest first: the last model step's marker, after the clearing batches and the drill's notes.
      await modelStepRows(page).first().click();
      const details = codeBlock(page, 'Details', `"activity_type": "${MODEL_STEP}"`);
      // Handles, not locators: once scrolled, the text a locator is found by may be out of view.
      const block = await details.elementHandle();
      const editor = await page.locator('.cm-editor', { has: details }).elementHandle();
      const shown = await editorText(page, block, '"sent_to_the_model"');
      writeFileSync(join(ARTIFACTS, 'ui-case-model-step.json'), shown);
      await editor.screenshot({ path: join(ARTIFACTS, 'ui-case-model-step.png') });
      await editorText(page, block, STUB);
      await editor.screenshot({ path: join(ARTIFACTS, 'ui-case-model-step-cleared.png') });
      // A local call's input is not in its marker: its reply names the plan it was sent, which the codec server expands.
      type Sent = { sent_to_the_model: { system: { text: string }[]; messages: { role: string; content: { type: string; text?: string; content?: unknown }[] }[] } };
      const marker = JSON.parse(shown) as { data: { payloads: { activity_type: string }[] }; result: { payloads: { sent: Sent }[] } };
      assert.equal(marker.data.payloads[0]!.activity_type, MODEL_STEP);
      const sent = marker.result.payloads[0]!.sent.sent_to_the_model;
      assert.equal(sent.system[0]!.text, SYSTEM_PROMPT_SHOWN, 'the system prompt by name');
      const first = sent.messages[0]!.content.map((b) => b.text ?? '').join('\n');
      assert.match(first, /^<customer_memory>/, 'the memory block leads the first message');
      const results = sent.messages.flatMap((m) => m.content).filter((b) => b.type === 'tool_result');
      assert.ok(
        results.some((r) => r.content === STUB),
        'cleared results as their stubs',
      );
      assert.ok(results.at(-1)!.content !== STUB, 'the latest result whole');
      assert.match(first, /<agent_notes>[\s\S]*drill step 10 of 15[\s\S]*<\/agent_notes>/, "the agent's notes follow it");
      assert.match(shown, /"plan": \{/, 'beside the plan the history holds');
    } finally {
      await context.close();
    }
  });
});
