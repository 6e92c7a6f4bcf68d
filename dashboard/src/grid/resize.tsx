// Resizable grid columns: a handle on each header's right edge, dragged with the pointer or moved
// with the arrow keys. Widths are kept per grid (by its label) for as long as the tab lives.
import { useLayoutEffect, useRef, useState } from 'preact/hooks';

const MIN = 64;
const MAX = 1200;
const kept = new Map<string, Record<string, number>>();

export function useWidths(grid: string): [Record<string, number>, (key: string, w: number) => void] {
  const [widths, setWidths] = useState<Record<string, number>>(() => kept.get(grid) ?? {});
  const set = (key: string, w: number) => {
    const next = { ...(kept.get(grid) ?? {}), [key]: Math.round(Math.min(MAX, Math.max(MIN, w))) };
    kept.set(grid, next);
    setWidths(next);
  };
  return [widths, set];
}

export function ResizeHandle({
  label,
  width,
  onWidth,
}: {
  label: string;
  width?: number;
  onWidth: (w: number) => void;
}) {
  const ref = useRef<HTMLDivElement>(null);
  // The width the column has before anyone resizes it, for the separator's value.
  const [laid, setLaid] = useState(0);
  useLayoutEffect(() => setLaid(Math.round(ref.current?.parentElement?.getBoundingClientRect().width ?? 0)), []);
  const current = (el: HTMLElement) => width ?? el.parentElement!.getBoundingClientRect().width;
  const onPointerDown = (e: PointerEvent) => {
    const el = e.currentTarget as HTMLElement;
    const start = e.clientX;
    const w0 = current(el);
    el.setPointerCapture(e.pointerId);
    const move = (ev: PointerEvent) => onWidth(w0 + ev.clientX - start);
    const up = () => {
      el.removeEventListener('pointermove', move);
      el.removeEventListener('pointerup', up);
    };
    el.addEventListener('pointermove', move);
    el.addEventListener('pointerup', up);
    e.preventDefault();
  };
  const onKeyDown = (e: KeyboardEvent) => {
    const step = { ArrowLeft: -16, ArrowRight: 16 }[e.key];
    if (!step) return;
    e.preventDefault();
    e.stopPropagation();
    onWidth(current(e.currentTarget as HTMLElement) + step);
  };
  return (
    <div
      ref={ref}
      class="resize"
      role="separator"
      aria-orientation="vertical"
      aria-label={`Resize column ${label}`}
      aria-valuemin={MIN}
      aria-valuemax={MAX}
      aria-valuenow={Math.round(width ?? laid)}
      tabIndex={0}
      onPointerDown={onPointerDown}
      onKeyDown={onKeyDown}
    />
  );
}
