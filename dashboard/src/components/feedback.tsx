// Loading and emptiness: skeletons in the shape of what loads (never "Loading…"), and the empty
// state that says what to do next with one button.
import type { ComponentChildren } from 'preact';
import { Icon, type IconNode } from './icons';

/** One grey bar; `width` as CSS (e.g. "60%"). */
export function Skeleton({ width, class: cls }: { width?: string; class?: string }) {
  return <span class={cls ? `skeleton ${cls}` : 'skeleton'} style={width ? { width } : undefined} aria-hidden="true" />;
}

/** Lines of text loading. */
export function SkeletonLines({ lines = 3, label = 'Loading' }: { lines?: number; label?: string }) {
  return (
    <div class="skeletons" role="status" aria-label={label}>
      {Array.from({ length: lines }, (_, i) => (
        <Skeleton key={i} width={`${90 - ((i * 17) % 40)}%`} />
      ))}
    </div>
  );
}

/** A whole page loading: a title, a line, and a block. */
export function PageSkeleton() {
  return (
    <div class="skeletons" role="status" aria-label="Loading the page">
      <Skeleton class="title" />
      <Skeleton width="40%" />
      <Skeleton class="block" />
      <Skeleton width="85%" />
      <Skeleton width="70%" />
    </div>
  );
}

/** Nothing here yet: an icon, what this is, what to do next, and (usually) one button. */
export function EmptyState(props: {
  icon: IconNode;
  title: string;
  children?: ComponentChildren;
  action?: ComponentChildren;
}) {
  return (
    <div class="empty-state">
      <span class="glyph">
        <Icon icon={props.icon} />
      </span>
      <h3>{props.title}</h3>
      {props.children && <p>{props.children}</p>}
      {props.action && <div class="actions">{props.action}</div>}
    </div>
  );
}
