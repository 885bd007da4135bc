import { findSensitive, type SensitiveFinding } from '../memory/sensitive';
import { loadScreenCorpus, type LabelledSentence } from './screen-corpus';

// How well the privacy screen separates what memory must refuse from what it must keep,
// over the labelled corpus. Refusal is the positive class: precision is the share of refusals
// that were right (low precision = over-refusing), recall the share of must-refuse sentences
// refused (low recall = leaking). "dev" sentences were written before the screen was rebuilt (plus pairs found probing it);
// "holdout" ones after, so the holdout row is the fairer estimate.

/** Confusion counts and scores for one slice of the corpus. */
export interface ScreenScore {
  slice: string;
  sentences: number;
  must_refuse: number;
  must_keep: number;
  refused_right: number;
  refused_wrongly: number;
  leaked: number;
  kept_right: number;
  precision: number;
  recall: number;
  /** Refused, but under another category than the label says. */
  wrong_category: number;
}

/** One sentence the screen got wrong. */
export interface ScreenMiss {
  set: LabelledSentence['set'];
  label: LabelledSentence['label'];
  expected: string;
  got: SensitiveFinding['category'] | 'keep';
  text: string;
}

function score(slice: string, sentences: LabelledSentence[]): { row: ScreenScore; misses: ScreenMiss[] } {
  const row: ScreenScore = {
    slice,
    sentences: sentences.length,
    must_refuse: 0,
    must_keep: 0,
    refused_right: 0,
    refused_wrongly: 0,
    leaked: 0,
    kept_right: 0,
    precision: 0,
    recall: 0,
    wrong_category: 0,
  };
  const misses: ScreenMiss[] = [];
  for (const s of sentences) {
    const finding = findSensitive(s.text);
    const expected = s.label === 'refuse' ? s.category : 'keep';
    const got = finding?.category ?? 'keep';
    if (s.label === 'refuse') {
      row.must_refuse++;
      if (finding) row.refused_right++;
      else row.leaked++;
      if (finding && finding.category !== s.category) row.wrong_category++;
    } else {
      row.must_keep++;
      if (finding) row.refused_wrongly++;
      else row.kept_right++;
    }
    if (got !== expected) misses.push({ set: s.set, label: s.label, expected, got, text: s.text });
  }
  const refused = row.refused_right + row.refused_wrongly;
  row.precision = refused ? row.refused_right / refused : 1;
  row.recall = row.must_refuse ? row.refused_right / row.must_refuse : 1;
  return { row, misses };
}

/** Scores the screen over the corpus: one row per set, one per expected category, and the total. */
export function scoreScreen(corpus: LabelledSentence[] = loadScreenCorpus()): { rows: ScreenScore[]; byCategory: ScreenScore[]; misses: ScreenMiss[] } {
  const sets = [...new Set(corpus.map((s) => s.set))];
  const rows = [
    ...sets.map((set) =>
      score(
        set,
        corpus.filter((s) => s.set === set),
      ),
    ),
    score('all', corpus),
  ];
  const categories = [...new Set(corpus.flatMap((s) => (s.label === 'refuse' ? [s.category] : [])))];
  // Per category: its must-refuse sentences, and the must-keep sentences refused under that category.
  const byCategory = categories.map((c) => {
    const { row } = score(
      c,
      corpus.filter((s) => s.label === 'refuse' && s.category === c),
    );
    const wrongly = corpus.filter((s) => s.label === 'keep' && findSensitive(s.text)?.category === c).length;
    const refused = row.refused_right + wrongly;
    return { ...row, refused_wrongly: wrongly, precision: refused ? row.refused_right / refused : 1 };
  });
  return { rows: rows.map((r) => r.row), byCategory, misses: rows.at(-1)?.misses ?? [] };
}

const pct = (n: number) => `${(n * 100).toFixed(1)}%`;

function table(rows: ScreenScore[], first: string): string[] {
  const perSet = first === 'set';
  const header = [first, 'sentences', 'refuse', 'keep', 'TP', 'FP', 'FN', 'TN', 'precision', 'recall', 'wrong category'].filter((_, i) => perSet || ![1, 3, 7].includes(i));
  const body = rows.map((r) =>
    [r.slice, r.sentences, r.must_refuse, r.must_keep, r.refused_right, r.refused_wrongly, r.leaked, r.kept_right, pct(r.precision), pct(r.recall), r.wrong_category]
      .filter((_, i) => perSet || ![1, 3, 7].includes(i))
      .map(String),
  );
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((cells) => (cells[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)];
}

/** Prints precision and recall of the privacy screen (refusal = positive) as tables, or as JSON. */
export function runScreenBench(options: { json?: boolean; out: (line: string) => void }): ReturnType<typeof scoreScreen> {
  const result = scoreScreen();
  if (options.json) {
    options.out(JSON.stringify(result, null, 2));
    return result;
  }
  options.out('Privacy screen over src/dev/screen-corpus.json (refusal = positive)');
  options.out('');
  for (const line of table(result.rows, 'set')) options.out(line);
  options.out('');
  options.out('By category (FP: must-keep sentences refused under that category):');
  for (const line of table(result.byCategory, 'category')) options.out(line);
  options.out('');
  options.out(result.misses.length ? 'Wrong:' : 'Wrong: none');
  for (const m of result.misses) options.out(`  [${m.set}] expected ${m.expected}, got ${m.got}: ${m.text}`);
  return result;
}

if (require.main === module) {
  runScreenBench({ json: process.argv.includes('--json'), out: (line) => console.log(line) });
}
