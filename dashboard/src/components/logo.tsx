// Plinth's mark: a pedestal (three stacked blocks) on an indigo tile.
import { useId } from 'preact/hooks';

export function Logo() {
  // Each mark has its own gradient: one inside a hidden element would leave the others blank.
  const id = `plinth-tile-${useId()}`;
  return (
    <svg class="logo" viewBox="0 0 32 32" aria-hidden="true">
      <defs>
        <linearGradient id={id} x1="0" y1="0" x2="1" y2="1">
          <stop offset="0" stop-color="#6366f1" />
          <stop offset="1" stop-color="#4338ca" />
        </linearGradient>
      </defs>
      <rect width="32" height="32" rx="8" fill={`url(#${id})`} />
      <rect x="12" y="8" width="8" height="4" rx="1.2" fill="#ffffff" opacity="0.75" />
      <rect x="9.5" y="14" width="13" height="4" rx="1.2" fill="#ffffff" opacity="0.88" />
      <rect x="7" y="20" width="18" height="4.5" rx="1.2" fill="#ffffff" />
    </svg>
  );
}
