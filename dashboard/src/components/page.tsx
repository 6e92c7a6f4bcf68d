// The parts every page is made of: its header (crumbs, title, what it is for, main actions),
// cards, badges and link tabs (the URL holds the tab).
import type { ComponentChildren } from 'preact';
import { link } from '../router';
import { ChevronRight, Icon, type IconNode } from './icons';

export function PageHeader(props: {
  title: ComponentChildren;
  description?: ComponentChildren;
  actions?: ComponentChildren;
  crumbs?: Array<[string, string]>;
  /** Beside the title (badges). */
  extra?: ComponentChildren;
}) {
  return (
    <header class="page-head">
      <div class="titles">
        {props.crumbs && (
          <p class="crumbs">
            {props.crumbs.map(([label, href]) => (
              <span key={href} class="row">
                <a {...link(href)}>{label}</a>
                <Icon icon={ChevronRight} />
              </span>
            ))}
          </p>
        )}
        <div class="title-row">
          <h1>{props.title}</h1>
          {props.extra}
        </div>
        {props.description && <p>{props.description}</p>}
      </div>
      {props.actions && <div class="actions">{props.actions}</div>}
    </header>
  );
}

export type Tone = 'neutral' | 'success' | 'danger' | 'warning' | 'accent';

/** A short state in a pill: on/off, ready/failed, public/private. */
export function Badge({
  tone = 'neutral',
  children,
  plain,
}: {
  tone?: Tone;
  children: ComponentChildren;
  plain?: boolean;
}) {
  return <span class={`badge ${tone === 'neutral' ? '' : tone}${plain ? ' plain' : ''}`.trim()}>{children}</span>;
}

export function Card(props: {
  title?: ComponentChildren;
  actions?: ComponentChildren;
  children: ComponentChildren;
  class?: string;
  label?: string;
}) {
  return (
    <section class={props.class ? `card ${props.class}` : 'card'} aria-label={props.label}>
      {(props.title || props.actions) && (
        <header>
          {props.title && <h2>{props.title}</h2>}
          {props.actions}
        </header>
      )}
      {props.children}
    </section>
  );
}

/** Tabs that are links: each tab is a URL, the current one marked. */
export function LinkTabs(props: {
  label: string;
  tabs: Array<{ href: string; label: string; icon?: IconNode }>;
  current: string;
}) {
  return (
    <nav class="tabs" aria-label={props.label}>
      {props.tabs.map((t) => (
        <a key={t.href} {...link(t.href)} aria-current={t.href === props.current ? 'page' : undefined}>
          {t.icon && <Icon icon={t.icon} />}
          {t.label}
        </a>
      ))}
    </nav>
  );
}
