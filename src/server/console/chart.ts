import { totalInputTokens } from '../../context/accounting';
import type { StepRecord } from '../../schemas/investigation';
import { count } from './format';
import { escapeHtml } from './html';

// The chart of tokens sent per step, as inline SVG built from numbers: one point per step, a
// dashed line where a clearing batch ran and a dotted one where a compaction did. Pure, so a
// test can count its points and marks without a browser.

/** What a step's context event says happened before it. */
export interface StepMarks {
  clearing: boolean;
  compaction: boolean;
}

/**
 * Reads a step's context event ("cleared 12 old results (…)", "compacted 8 messages into case
 * notes", or both). A batch that found nothing old enough to clear ("cleared 0 …") changed
 * nothing sent, so it is not marked.
 */
export function marksOf(step: StepRecord): StepMarks {
  const event = step.context_event ?? '';
  return { clearing: /\bcleared [1-9]\d*/.test(event), compaction: /\bcompacted [1-9]\d*/.test(event) };
}

const WIDTH = 760;
const HEIGHT = 260;
const PAD = { left: 64, right: 16, top: 16, bottom: 36 };

/** The SVG markup of the chart; empty steps give a chart that says so. */
export function tokensChart(steps: readonly StepRecord[]): string {
  const title = `Tokens sent per step, ${steps.length} step${steps.length === 1 ? '' : 's'}`;
  const open = `<svg class="chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="${escapeHtml(title)}" data-steps="${steps.length}"><title>${escapeHtml(title)}</title>`;
  if (!steps.length) return `${open}<text x="${WIDTH / 2}" y="${HEIGHT / 2}" text-anchor="middle">No model calls yet</text></svg>`;
  const values = steps.map((s) => totalInputTokens(s.usage));
  const max = Math.max(1, ...values);
  const plotW = WIDTH - PAD.left - PAD.right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const x = (i: number) => PAD.left + (steps.length === 1 ? plotW / 2 : (i * plotW) / (steps.length - 1));
  const y = (v: number) => PAD.top + plotH - (v / max) * plotH;
  const parts: string[] = [open];
  // Axes and three gridline labels.
  parts.push(`<line class="axis" x1="${PAD.left}" y1="${PAD.top + plotH}" x2="${PAD.left + plotW}" y2="${PAD.top + plotH}"/>`);
  parts.push(`<line class="axis" x1="${PAD.left}" y1="${PAD.top}" x2="${PAD.left}" y2="${PAD.top + plotH}"/>`);
  for (const f of [0, 0.5, 1]) {
    parts.push(`<text x="${PAD.left - 6}" y="${(y(max * f) + 4).toFixed(1)}" text-anchor="end">${count(max * f)}</text>`);
  }
  parts.push(`<text x="${PAD.left + plotW / 2}" y="${HEIGHT - 6}" text-anchor="middle">step</text>`);
  steps.forEach((step, i) => {
    const marks = marksOf(step);
    // A mark sits just before the step it shaped: the drop it causes is visible at that step.
    const mx = (steps.length === 1 ? x(i) : x(i) - plotW / (steps.length - 1) / 2).toFixed(1);
    if (marks.clearing) {
      parts.push(
        `<line class="clearing" data-mark="clearing" data-step="${step.step}" x1="${mx}" y1="${PAD.top}" x2="${mx}" y2="${PAD.top + plotH}"><title>step ${step.step}: ${escapeHtml(step.context_event ?? '')}</title></line>`,
      );
    }
    if (marks.compaction) {
      parts.push(
        `<line class="compaction" data-mark="compaction" data-step="${step.step}" x1="${mx}" y1="${PAD.top}" x2="${mx}" y2="${PAD.top + plotH}"><title>step ${step.step}: ${escapeHtml(step.context_event ?? '')}</title></line>`,
      );
    }
  });
  const path = values.map((v, i) => `${i ? 'L' : 'M'}${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
  parts.push(`<path class="line" d="${path}"/>`);
  values.forEach((v, i) => {
    const step = steps[i]?.step ?? i + 1;
    parts.push(
      `<circle class="point" data-point data-step="${step}" cx="${x(i).toFixed(1)}" cy="${y(v).toFixed(1)}" r="3.5"><title>step ${step}: ${count(v)} tokens sent</title></circle>`,
    );
  });
  // Step numbers under the axis, thinned so they do not overlap.
  const every = Math.max(1, Math.ceil(steps.length / 20));
  steps.forEach((step, i) => {
    if (i % every === 0 || i === steps.length - 1) parts.push(`<text x="${x(i).toFixed(1)}" y="${PAD.top + plotH + 14}" text-anchor="middle">${step.step}</text>`);
  });
  parts.push('</svg>');
  return parts.join('');
}
