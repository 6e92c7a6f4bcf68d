// Buttons of the design system: one look (base.css), variants by class. `Button` adds an icon and,
// for an icon-only button, the label screen readers and the tooltip use.
import type { ButtonHTMLAttributes, ComponentChildren } from 'preact';
import { Icon, type IconNode } from './icons';

export type Variant = 'primary' | 'secondary' | 'ghost' | 'danger' | 'ghost danger' | 'link';

type Props = Omit<ButtonHTMLAttributes<HTMLButtonElement>, 'icon' | 'size'> & {
  variant?: Variant;
  size?: 'sm' | 'md';
  icon?: IconNode;
  /** Icon only: the label is the accessible name and the title. */
  iconOnly?: boolean;
  children?: ComponentChildren;
};

export function classes(
  variant: Variant = 'secondary',
  size: 'sm' | 'md' = 'md',
  iconOnly = false,
  extra?: unknown,
): string {
  return [variant === 'secondary' ? '' : variant, size === 'sm' ? 'sm' : '', iconOnly ? 'icon-only' : '', extra ?? '']
    .filter(Boolean)
    .join(' ');
}

export function Button({ variant, size, icon, iconOnly, children, class: cls, type, ...rest }: Props) {
  const label = iconOnly && typeof children === 'string' ? children : undefined;
  return (
    <button
      {...rest}
      type={type ?? 'button'}
      class={classes(variant, size, iconOnly, cls)}
      aria-label={label ?? rest['aria-label']}
      title={label ?? rest.title}
    >
      {icon && <Icon icon={icon} />}
      {!iconOnly && children}
    </button>
  );
}
