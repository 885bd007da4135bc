import type { z } from 'zod';

/**
 * A zod error as "field: problem" strings a person can act on. `whole` names the value itself
 * when a problem belongs to no one field ("input", "(event)"). Pure: the workflow uses it too.
 */
export function issueList(error: z.ZodError, whole = 'input'): string[] {
  return error.issues.map((issue) => `${issue.path.length ? issue.path.join('.') : whole}: ${issue.message}`);
}

/** The same problems as one line, "a: …; b: …". */
export function describeIssues(error: z.ZodError, whole = 'input'): string {
  return issueList(error, whole).join('; ');
}
