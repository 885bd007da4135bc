import { z } from 'zod';
import corpusFile from './screen-corpus.json';

// The privacy screen's labelled corpus, parsed: what memory must refuse and what it must keep.

/** One labelled sentence: refused ones name the expected category and the detail a reason must not repeat. */
export const LabelledSentence = z.discriminatedUnion('label', [
  z.object({ set: z.enum(['dev', 'holdout', 'holdout2']), label: z.literal('refuse'), category: z.string().min(1), detail: z.string().min(1), text: z.string().min(1) }),
  z.object({ set: z.enum(['dev', 'holdout', 'holdout2']), label: z.literal('keep'), text: z.string().min(1) }),
]);
/** One labelled sentence of the corpus. */
export type LabelledSentence = z.infer<typeof LabelledSentence>;

/** Every sentence of src/dev/screen-corpus.json, validated. */
export function loadScreenCorpus(): LabelledSentence[] {
  return z.object({ sentences: z.array(LabelledSentence).min(60) }).parse(corpusFile).sentences;
}
