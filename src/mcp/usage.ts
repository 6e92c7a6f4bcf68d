import type { Queryable } from '../db/types.js';

export interface ToolUsage {
  tool: string;
  calls: number;
  failures: number;
  source: 'plinth' | 'client';
}

/** Tool calls counted per tool (mcp.tool_calls): Plinth's own MCP server and InsForge's reporting in. */
export class McpUsage {
  private readonly pending = new Set<Promise<unknown>>();

  constructor(
    private readonly db: Queryable,
    private readonly onError: (err: unknown) => void = () => {},
  ) {}

  /** Records one call without making the caller wait (a failed write is only logged). */
  record(tool: string, success: boolean, source: 'plinth' | 'client'): void {
    const p = this.db
      .query('insert into mcp.tool_calls (tool, success, source) values ($1, $2, $3)', [
        tool.slice(0, 100),
        success,
        source,
      ])
      .catch(this.onError)
      .finally(() => this.pending.delete(p));
    this.pending.add(p);
  }

  /** Calls per tool since `since` (default: the last 30 days), most used first. */
  async summary(since: Date = new Date(Date.now() - 30 * 86_400_000)): Promise<ToolUsage[]> {
    await this.flush();
    const { rows } = await this.db.query<{
      tool: string;
      calls: string;
      failures: string;
      source: 'plinth' | 'client';
    }>(
      `select tool, source, count(*) as calls, count(*) filter (where not success) as failures
         from mcp.tool_calls where created_at >= $1 group by tool, source order by count(*) desc limit 200`,
      [since],
    );
    return rows.map((r) => ({ tool: r.tool, source: r.source, calls: Number(r.calls), failures: Number(r.failures) }));
  }

  /** Waits for the writes in flight (tests, shutdown). */
  async flush(): Promise<void> {
    await Promise.allSettled([...this.pending]);
  }
}
