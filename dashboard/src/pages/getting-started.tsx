// The overview's first steps: create a table, add a user, make a bucket, deploy a function,
// connect an app. Each step is checked from the project itself; the card goes once all are done.
import { api } from '../api';
import { Check, Icon } from '../components/icons';
import { link } from '../router';
import { Card, useLoad } from '../ui';

interface Counts {
  tables: number;
  users: number;
}

export function GettingStarted({ counts }: { counts: Counts }) {
  const more = useLoad(async () => {
    const [buckets, functions] = await Promise.all([
      api<{ buckets: string[] }>('/api/storage/buckets'),
      api<unknown[]>('/api/functions'),
    ]);
    return { buckets: buckets.buckets.length, functions: functions.length };
  }, []);
  if (!more.data) return null;
  const steps = [
    {
      done: counts.tables > 0,
      href: '/tables?new=1',
      label: 'Create a table',
      text: 'Columns, types and row-level security, or start from a CSV file.',
    },
    {
      done: counts.users > 0,
      href: '/users?new=1',
      label: 'Add a user',
      text: 'Create one here, or let people sign up from your app.',
    },
    {
      done: more.data.buckets > 0,
      href: '/storage?new=1',
      label: 'Make a bucket',
      text: 'Upload files, images get previews and renditions.',
    },
    {
      done: more.data.functions > 0,
      href: '/functions',
      label: 'Deploy a function',
      text: 'TypeScript on Deno, from a template.',
    },
    {
      done: false,
      href: '/connect',
      label: 'Connect your app',
      text: 'The URL, the anon key and code to paste for the SDK, curl or an AI agent.',
    },
  ];
  if (steps.slice(0, 4).every((s) => s.done)) return null;
  return (
    <Card title="Get started" label="Get started">
      <ol class="checklist">
        {steps.map((s, i) => (
          <li key={s.href} class={s.done ? 'done' : undefined}>
            <span class="mark" aria-hidden="true">
              {s.done ? <Icon icon={Check} /> : i + 1}
            </span>
            <div>
              <a {...link(s.href)}>{s.label}</a>
              {s.done && <span class="sr-only"> (done)</span>}
              <p>{s.text}</p>
            </div>
          </li>
        ))}
      </ol>
    </Card>
  );
}
