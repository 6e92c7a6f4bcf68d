import type { GetPromptResult, Prompt } from '@modelcontextprotocol/sdk/types.js';

/** The prompt that starts an app on this backend: the steps an agent should take, with the tools to use. */
export const startAppPrompt = {
  definition: {
    name: 'start-app',
    title: 'Start an app on Plinth',
    description:
      'Plan and build the backend of a new app: tables, RLS policies tried as two users, storage, functions, typed client.',
    arguments: [{ name: 'idea', description: 'What the app does, in a sentence or two', required: true }],
  } satisfies Prompt,

  render(args: Record<string, string>, baseUrl: string, readOnly: boolean): GetPromptResult {
    const steps = [
      `Build the backend of this app on the Plinth instance at ${baseUrl}: ${args.idea ?? '(no idea given)'}`,
      '',
      '1. fetch-docs {"docType":"instructions"}, then the pages you need (database, auth, storage, functions).',
      '2. get-backend-metadata to see what exists, then create the tables by a migration: dry-run-migration, then apply-migration (a new, higher version for each change); uuid primary keys, an owner column `owner uuid default auth.uid() references auth.users(id)` where rows belong to users.',
      '3. grant select, insert, update, delete on each table to anon, authenticated; enable row level security on every table and write policies with run-raw-sql (e.g. `create policy own on notes using (owner = (select auth.uid()))`).',
      "4. Try the policies: create-user twice, write-records as user A, select-records as user B (expect nothing of A's), as anon.",
      '5. Buckets for files (create-bucket, private when files are personal); functions for server logic (create-function, invoke-function, get-function-logs), secrets with set-secret; create-schedule for recurring work, create-webhook to react to table changes.',
      '6. generate-typescript-types and save the result as src/database.types.ts in the app; get-anon-key for the client (@insforge/sdk or @supabase/postgrest-js).',
      '7. Check your work: get-table-schema for each table (RLS on, policies present); run-advisor-scan and fix each finding with its SQL (as a migration), then scan again; search-logs {"level":"error"} for failures.',
    ];
    if (readOnly) steps.push('', 'Note: this connection is read-only; reconnect without ?readonly=1 to make changes.');
    return {
      description: 'Start an app on Plinth',
      messages: [{ role: 'user', content: { type: 'text', text: steps.join('\n') } }],
    };
  },
};
