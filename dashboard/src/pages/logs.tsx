// Logs explorer (/api/logs): a source, the lowest level, text to find; older pages by the API's
// cursor and a live tail, both keeping the lines shown one unbroken run, newest first.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, enc } from '../api';
import { Grid } from '../grid/grid';
import { cellText, ErrorBox, PageHeader, useLoad } from '../ui';
import { LoadState } from './notavailable';

interface Line {
  id: string;
  timestamp: string;
  level: string;
  eventMessage: string;
}
interface LogPage {
  logs: Line[];
  total: number;
  nextCursor: string | null;
}
interface Run {
  lines: Line[];
  /** The cursor of the page after the oldest line shown; null when it is the oldest. */
  cursor: string | null;
  total: number;
}

const LEVELS = ['debug', 'info', 'warn', 'error'];
const PAGE = 100;
/** Pages of new lines the live tail reads before it starts again from the newest. */
const TAIL_PAGES = 10;
/** Whether line id `a` is newer than `b` (ids are decimal bigints, as strings). */
const newer = (a: string, b: string) => (a.length !== b.length ? a.length > b.length : a > b);

/** The lines of one query: the newest page, `older()` appends the next page, `tail()` prepends new lines. */
function useLogRun(query: string) {
  const [run, setRun] = useState<Run | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const current = useRef(run);
  current.current = run;
  // Bumped whenever the run starts again: answers of an earlier run are dropped.
  const generation = useRef(0);
  const page = (cursor?: string | null) => api<LogPage>(`${query}${cursor ? `&cursor=${enc(cursor)}` : ''}`);
  const guarded = async (fn: (gen: number) => Promise<void>) => {
    const gen = generation.current;
    try {
      await fn(gen);
      if (gen === generation.current) setError(null);
    } catch (e) {
      if (gen === generation.current) setError(e);
    }
  };
  const restart = () => {
    const gen = ++generation.current;
    return guarded(async () => {
      const p = await page();
      if (gen === generation.current) setRun({ lines: p.logs, cursor: p.nextCursor, total: p.total });
    });
  };
  useEffect(() => {
    setRun(null);
    void restart();
  }, [query]);
  const older = async () => {
    setBusy(true);
    await guarded(async (gen) => {
      const p = await page(current.current?.cursor);
      if (gen !== generation.current) return;
      setRun(
        (r) =>
          r && {
            lines: [...r.lines, ...p.logs.filter((l) => !r.lines.length || newer(r.lines.at(-1)!.id, l.id))],
            cursor: p.nextCursor,
            total: p.total,
          },
      );
    });
    setBusy(false);
  };
  // New lines down to the newest shown, page by page; past TAIL_PAGES pages the run starts again.
  const tail = async () => {
    const head = current.current?.lines[0]?.id;
    if (head === undefined) return restart();
    await guarded(async (gen) => {
      const fresh: Line[] = [];
      let p = await page();
      for (let n = 1; ; n++) {
        fresh.push(...p.logs.filter((l) => newer(l.id, head)));
        const oldest = p.logs.at(-1);
        if (!oldest || !newer(oldest.id, head) || !p.nextCursor) break;
        if (n === TAIL_PAGES) return void restart();
        p = await page(p.nextCursor);
      }
      if (gen !== generation.current) return;
      setRun(
        (r) =>
          r && {
            ...r,
            lines: [...fresh.filter((l) => !r.lines.length || newer(l.id, r.lines[0]!.id)), ...r.lines],
            total: p.total,
          },
      );
    });
  };
  return { run, error, busy, older, tail };
}

export function Logs() {
  const sources = useLoad(() => api<{ sources: Array<{ name: string; count: number }> }>('/api/logs/sources'), []);
  const [source, setSource] = useState('api');
  const [level, setLevel] = useState('info');
  const [q, setQ] = useState('');
  const [live, setLive] = useState(false);
  const { run, error, busy, older, tail } = useLogRun(
    `/api/logs/${enc(source)}?limit=${PAGE}&level=${level}${q ? `&q=${enc(q)}` : ''}`,
  );
  const tailRef = useRef(tail);
  tailRef.current = tail;
  useEffect(() => {
    if (!live) return;
    const id = setInterval(() => document.visibilityState === 'visible' && void tailRef.current(), 3000);
    return () => clearInterval(id);
  }, [live]);
  const names = sources.data?.sources.map((x) => x.name) ?? ['api'];
  return (
    <section class="stack">
      <PageHeader
        title="Logs"
        description="What the server wrote: API requests, functions, jobs. Filter by source, level and text; follow new lines live."
      />
      <LoadState error={sources.error} what="The logs explorer" endpoint="GET /api/logs/sources">
        <form
          class="inline"
          role="search"
          onSubmit={(e) => (
            e.preventDefault(), setQ(String(new FormData(e.currentTarget as HTMLFormElement).get('q') ?? ''))
          )}
        >
          <label for="log-source">Source</label>
          <select id="log-source" value={source} onChange={(e) => setSource(e.currentTarget.value)}>
            {names.map((n) => (
              <option key={n}>{n}</option>
            ))}
          </select>
          <label for="log-level">Level</label>
          <select id="log-level" value={level} onChange={(e) => setLevel(e.currentTarget.value)}>
            {LEVELS.map((n) => (
              <option key={n}>{n}</option>
            ))}
          </select>
          <label for="log-q">Contains</label>
          <input id="log-q" name="q" type="search" />
          <button type="submit">Filter</button>
          <label class="check">
            <input type="checkbox" checked={live} onChange={(e) => setLive(e.currentTarget.checked)} /> Live tail
          </label>
        </form>
        <ErrorBox error={error} />
        {run !== null && (
          <>
            <Grid<Line>
              label="Log lines"
              rows={run.lines}
              rowKey={(r) => r.id}
              empty="No lines match."
              columns={[
                {
                  key: 'timestamp',
                  label: 'Time',
                  cell: (r) => new Date(r.timestamp).toLocaleString(),
                  cellClass: () => 'nowrap',
                },
                { key: 'level', label: 'Level', cell: (r) => r.level },
                { key: 'message', label: 'Message', cell: (r) => cellText(r.eventMessage), cellClass: () => 'json' },
              ]}
            />
            <div class="pager">
              <span aria-live="polite">{`${run.lines.length} of ${run.total} lines`}</span>
              {run.cursor && (
                <button type="button" disabled={busy} onClick={() => void older()}>
                  Load older
                </button>
              )}
            </div>
          </>
        )}
      </LoadState>
    </section>
  );
}
