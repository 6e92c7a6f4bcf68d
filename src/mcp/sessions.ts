import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { AppError } from '../errors/index.js';
import { ToolSet } from './registry.js';
import { createMcpServer } from './server.js';
import { ALL_TOOLS } from './tools/index.js';
import type { McpServices, McpTool } from './types.js';

export interface SessionOptions {
  services: McpServices;
  version: string;
  /** Open sessions at most (each holds a server object and its transport, a few kB). */
  maxSessions?: number;
  /** A session unused this long is closed. */
  idleMs?: number;
  tools?: readonly McpTool[];
  onToolError?: (tool: string, err: unknown) => void;
}

interface Session {
  transport: StreamableHTTPServerTransport;
  server: Server;
  readOnly: boolean;
  lastSeen: number;
}

/** Something that answers one HTTP request of the MCP endpoint. */
export type McpHandler = (req: IncomingMessage, res: ServerResponse, body: unknown) => Promise<void>;

/**
 * The sessions of the Streamable HTTP endpoint: an initialize request opens one (its id in the
 * Mcp-Session-Id header), later requests name it, DELETE or idleness closes it. Read-only is
 * chosen when the session opens and kept for its life.
 */
export class McpSessions {
  private readonly sessions = new Map<string, Session>();
  private readonly toolSets: Record<'all' | 'readOnly', ToolSet>;
  private readonly maxSessions: number;
  private readonly idleMs: number;
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly o: SessionOptions) {
    const tools = o.tools ?? ALL_TOOLS;
    this.toolSets = { all: new ToolSet(tools, false), readOnly: new ToolSet(tools, true) };
    this.maxSessions = o.maxSessions ?? 1000;
    this.idleMs = o.idleMs ?? 30 * 60_000;
    // In-memory housekeeping only: closing sessions nobody uses.
    this.sweeper = setInterval(() => this.sweep(), Math.min(60_000, this.idleMs)).unref();
  }

  get size(): number {
    return this.sessions.size;
  }

  /** The tools a connection of this mode is offered. */
  tools(readOnly: boolean): ToolSet {
    return readOnly ? this.toolSets.readOnly : this.toolSets.all;
  }

  /**
   * Finds (or, for an initialize request, opens) the session of a request and returns what
   * answers it. Throws AppError before anything is written: the route answers it as usual.
   */
  async handlerFor(
    sessionId: string | undefined,
    body: unknown,
    mode: { readOnly: boolean; baseUrl: string },
  ): Promise<McpHandler> {
    if (sessionId !== undefined) {
      const s = this.sessions.get(sessionId);
      if (!s) throw new AppError('MCP_SESSION_NOT_FOUND');
      s.lastSeen = Date.now();
      return (req, res, b) => s.transport.handleRequest(req, res, b);
    }
    if (!isInitializeRequest(body)) {
      throw new AppError('INVALID_INPUT', {
        message: 'No Mcp-Session-Id header, and the request is not an initialize request.',
        nextActions:
          'Send initialize first (POST /api/mcp) and then the Mcp-Session-Id header it answers with on every request.',
      });
    }
    this.sweep();
    if (this.sessions.size >= this.maxSessions) throw new AppError('MCP_TOO_MANY_SESSIONS');
    const session = await this.open(mode);
    return (req, res, b) => session.transport.handleRequest(req, res, b);
  }

  private async open(mode: { readOnly: boolean; baseUrl: string }): Promise<Session> {
    const server = createMcpServer({
      services: this.o.services,
      tools: this.tools(mode.readOnly),
      baseUrl: mode.baseUrl,
      version: this.o.version,
      readOnly: mode.readOnly,
      onToolError: this.o.onToolError,
    });
    let session: Session;
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      // Plain JSON answers to POSTs (one round trip, no stream to hold); server-to-client messages use GET's stream.
      enableJsonResponse: true,
      onsessioninitialized: (id) => void this.sessions.set(id, session),
    });
    transport.onclose = () => {
      if (transport.sessionId) this.sessions.delete(transport.sessionId);
    };
    session = { transport, server, readOnly: mode.readOnly, lastSeen: Date.now() };
    await server.connect(transport);
    return session;
  }

  private sweep(): void {
    const before = Date.now() - this.idleMs;
    for (const [id, s] of this.sessions) {
      if (s.lastSeen < before) {
        this.sessions.delete(id);
        void s.server.close().catch(() => {});
      }
    }
  }

  /** Closes every session (shutdown). */
  async close(): Promise<void> {
    clearInterval(this.sweeper);
    const all = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.allSettled(all.map((s) => s.server.close()));
  }
}
