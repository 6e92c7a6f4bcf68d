// Moving through the grid with the keyboard: arrow keys go to the neighbouring cell's first
// control (or the cell itself); an editor in a cell handles its own keys (Tab, Enter, Escape).

/** The focusable thing of a cell. */
export const cellTarget = (td: HTMLElement) => td.querySelector<HTMLElement>('button, a, input') ?? td;

/** The cell `dr` rows and `dc` columns away from `td`, if there is one. */
export function neighbour(td: HTMLElement, dr: number, dc: number): HTMLElement | null {
  const r = Number(td.parentElement!.dataset.r) + dr;
  const c = Number(td.dataset.c) + dc;
  return td.closest('tbody')!.querySelector<HTMLElement>(`tr[data-r="${r}"] > td[data-c="${c}"]`);
}

/** The next cell in reading order (Tab) or the previous one (Shift+Tab). */
export function nextCell(td: HTMLElement, back: boolean): HTMLElement | null {
  const same = neighbour(td, 0, back ? -1 : 1);
  if (same) return same;
  const row = td
    .closest('tbody')!
    .querySelector(`tr[data-r="${Number(td.parentElement!.dataset.r) + (back ? -1 : 1)}"]`);
  const cells = row ? [...row.querySelectorAll<HTMLElement>('td[data-c]')] : [];
  return (back ? cells.at(-1) : cells[0]) ?? null;
}

export function onGridKey(e: KeyboardEvent) {
  const dir = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] }[e.key];
  const target = e.target as HTMLElement;
  const td = target.closest?.('td[data-c]') as HTMLElement | null;
  if (!dir || !td || target.matches('input, textarea, select') || target.closest('.cell-pop')) return;
  const next = neighbour(td, dir[0]!, dir[1]!);
  if (!next) return;
  e.preventDefault();
  cellTarget(next).focus();
}
