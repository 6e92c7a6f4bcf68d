// Starting points for a new function, offered on the Functions page and in "New function". Add a
// template here: { id, name, description, code }.

export interface FunctionTemplate {
  id: string;
  name: string;
  description: string;
  code: string;
}

export const TEMPLATES: FunctionTemplate[] = [
  {
    id: 'hello',
    name: 'Hello',
    description: 'Answers JSON with a name from the query string, and logs the call.',
    code: `export default async function (req: Request): Promise<Response> {
  const name = new URL(req.url).searchParams.get('name') ?? 'world';
  console.log('hello called for', name);
  return Response.json({ hello: name });
}
`,
  },
  {
    id: 'records',
    name: 'Read a table as the caller',
    description: "Reads the notes table with the InsForge SDK and the caller's token, so row-level security applies.",
    code: `import { createClient } from 'npm:@insforge/sdk';

// Call from your app with the SDK: await client.functions.invoke('my-notes')
// (or: curl -H "Authorization: Bearer $USER_TOKEN" <this server>/functions/my-notes).
export default async function (req: Request): Promise<Response> {
  const client = createClient({
    baseUrl: Deno.env.get('INSFORGE_BASE_URL'),
    // The caller's token: the function reads as the caller (anon without one).
    edgeFunctionToken: req.headers.get('Authorization')?.replace('Bearer ', '') || Deno.env.get('ANON_KEY'),
  });
  const { data, error, status } = await client.database.from('notes').select('*').limit(20);
  return Response.json(error ?? data, { status });
}
`,
  },
  {
    id: 'webhook',
    name: 'Receive a webhook',
    description: "Reads a JSON body, checks a token against one of the function's secrets, and answers 204.",
    code: `// Add the secret WEBHOOK_TOKEN on the Secrets page, then POST here with ?token=...
export default async function (req: Request): Promise<Response> {
  const token = new URL(req.url).searchParams.get('token');
  if (token !== Deno.env.get('WEBHOOK_TOKEN')) return new Response('forbidden', { status: 403 });
  const event = await req.json().catch(() => null);
  console.log('received', JSON.stringify(event));
  return new Response(null, { status: 204 });
}
`,
  },
];
