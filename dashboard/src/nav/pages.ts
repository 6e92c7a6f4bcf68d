// Every page of the dashboard, grouped by what people do: the sidebar, the command palette and
// the router read this one list. A page is a lazy chunk, loaded when first visited.
import type { FunctionComponent } from 'preact';
import {
  Bot,
  CalendarClock,
  DatabaseBackup,
  GitBranch,
  HeartPulse,
  HardDrive,
  type IconNode,
  LayoutDashboard,
  Lock,
  LogIn,
  Mail,
  Plug,
  ScrollText,
  Settings,
  Sparkles,
  SquareFunction,
  SquareTerminal,
  Stethoscope,
  Table2,
  Users,
  Webhook,
} from '../components/icons';

export type Page = FunctionComponent<{ params: string[] }>;
export type Loader = () => Promise<Page>;

export interface NavItem {
  path: string;
  label: string;
  icon: IconNode;
  load: Loader;
  /** Words the command palette also matches. */
  keywords?: string;
}

export const GROUPS: Array<{ label: string; items: NavItem[] }> = [
  {
    label: 'Database',
    items: [
      {
        path: '/tables',
        label: 'Tables',
        icon: Table2,
        load: () => import('../pages/tables').then((m) => m.Tables),
        keywords: 'rows grid schema',
      },
      {
        path: '/sql',
        label: 'SQL',
        icon: SquareTerminal,
        load: () => import('../pages/sql').then((m) => m.Sql),
        keywords: 'query editor',
      },
      {
        path: '/migrations',
        label: 'Migrations',
        icon: GitBranch,
        load: () => import('../pages/ops').then((m) => m.Migrations),
      },
      {
        path: '/advisor',
        label: 'Advisor',
        icon: Stethoscope,
        load: () => import('../pages/ops').then((m) => m.Advisor),
        keywords: 'lint security performance',
      },
    ],
  },
  {
    label: 'Auth',
    items: [
      {
        path: '/users',
        label: 'Users',
        icon: Users,
        load: () => import('../pages/users').then((m) => m.Users),
        keywords: 'accounts people',
      },
      {
        path: '/sign-in',
        label: 'Sign-in methods',
        icon: LogIn,
        load: () => import('../pages/signin-methods').then((m) => m.SignInMethods),
        keywords: 'oauth providers email password mfa anonymous',
      },
    ],
  },
  {
    label: 'Storage',
    items: [
      {
        path: '/storage',
        label: 'Buckets',
        icon: HardDrive,
        load: () => import('../pages/storage').then((m) => m.Storage),
        keywords: 'files storage upload',
      },
    ],
  },
  {
    label: 'Functions',
    items: [
      {
        path: '/functions',
        label: 'Functions',
        icon: SquareFunction,
        load: () => import('../pages/functions').then((m) => m.Functions),
        keywords: 'edge deno code',
      },
      {
        path: '/secrets',
        label: 'Secrets',
        icon: Lock,
        load: () => import('../pages/secrets').then((m) => m.Secrets),
        keywords: 'environment variables',
      },
      {
        path: '/schedules',
        label: 'Schedules',
        icon: CalendarClock,
        load: () => import('../pages/schedules').then((m) => m.Schedules),
        keywords: 'cron jobs',
      },
      {
        path: '/webhooks',
        label: 'Webhooks',
        icon: Webhook,
        load: () => import('../pages/webhooks').then((m) => m.Webhooks),
        keywords: 'hooks deliveries',
      },
    ],
  },
  {
    label: 'Observe',
    items: [
      {
        path: '/overview',
        label: 'Overview',
        icon: LayoutDashboard,
        load: () => import('../pages/overview').then((m) => m.Overview),
        keywords: 'home usage charts',
      },
      { path: '/logs', label: 'Logs', icon: ScrollText, load: () => import('../pages/logs').then((m) => m.Logs) },
      {
        path: '/email',
        label: 'Email',
        icon: Mail,
        load: () => import('../pages/email').then((m) => m.Email),
        keywords: 'mail smtp failed resend templates',
      },
      {
        path: '/ai',
        label: 'AI usage',
        icon: Sparkles,
        load: () => import('../pages/ai').then((m) => m.Ai),
        keywords: 'tokens models',
      },
      {
        path: '/health',
        label: 'Health',
        icon: HeartPulse,
        load: () => import('../pages/health').then((m) => m.Health),
        keywords: 'status checks',
      },
    ],
  },
  {
    label: 'Project',
    items: [
      {
        path: '/settings',
        label: 'Settings',
        icon: Settings,
        load: () => import('../pages/settings').then((m) => m.Settings),
        keywords: 'configuration environment',
      },
      {
        path: '/connect',
        label: 'API keys & connect',
        icon: Plug,
        load: () => import('../pages/connect').then((m) => m.Connect),
        keywords: 'anon key sdk snippets curl mcp url',
      },
      {
        path: '/backups',
        label: 'Backups',
        icon: DatabaseBackup,
        load: () => import('../pages/backups').then((m) => m.Backups),
        keywords: 'restore export',
      },
      {
        path: '/agents',
        label: 'Agents',
        icon: Bot,
        load: () => import('../pages/agents').then((m) => m.Agents),
        keywords: 'mcp claude cursor codex ai',
      },
    ],
  },
];

export const NAV: NavItem[] = GROUPS.flatMap((g) => g.items);

/** The item and group of an app path's first segment ("/tables/notes" → Tables, Database). */
export function sectionOf(path: string): { item: NavItem | undefined; group: string | undefined } {
  const section = `/${path.split('/')[1] ?? ''}`;
  for (const g of GROUPS) {
    const item = g.items.find((i) => i.path === section);
    if (item) return { item, group: g.label };
  }
  return { item: undefined, group: undefined };
}
