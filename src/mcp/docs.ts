import { AppError } from '../errors/index.js';
import type { DocBundle, DocEntry } from './docs-bundle.js';
import { searchSections, sectionsOf, type DocSection, type SectionHit } from './docs-search.js';

/** The base URL the docs use in their examples; replaced by the instance's own when served. */
const DOC_BASE = /http:\/\/localhost:7130/g;

/** InsForge's doc types (its MCP server's fetch-docs) → Plinth's pages. */
const DOC_TYPES: Record<string, string> = {
  instructions: 'agents-instructions',
  'auth-sdk': 'auth',
  'db-sdk': 'database',
  'storage-sdk': 'agents-storage-sdk',
  'functions-sdk': 'functions',
  'ai-integration-sdk': 'ai',
  'real-time': 'realtime',
  deployment: 'agents-deployment',
};
/** InsForge's SDK features (fetch-sdk-docs) → Plinth's pages and OpenAPI tags. */
const FEATURES: Record<string, { page: string; tag: string }> = {
  db: { page: 'database', tag: 'database' },
  storage: { page: 'storage', tag: 'storage' },
  functions: { page: 'functions', tag: 'functions' },
  auth: { page: 'auth', tag: 'auth' },
  ai: { page: 'ai', tag: 'ai' },
  realtime: { page: 'realtime', tag: 'realtime' },
};

export type OpenApi = {
  paths?: Record<string, Record<string, { summary?: string; tags?: string[]; security?: unknown }>>;
};

/**
 * The docs for agents: Markdown pages from docs/ (bundled at build time) and the REST reference
 * from the OpenAPI document of the running app, handed in by the route (so neither can drift from the code).
 */
export class AgentDocs {
  private indexed: { byName: Map<string, DocEntry>; sections: DocSection[] } | null = null;

  /** `load` reads the bundle (every page's text): on the first question, not at start. */
  constructor(private readonly load: () => DocBundle) {}

  private get byName(): Map<string, DocEntry> {
    return this.index().byName;
  }

  private get sections(): DocSection[] {
    return this.index().sections;
  }

  private index() {
    if (!this.indexed) {
      const { docs } = this.load();
      this.indexed = { byName: new Map(docs.map((d) => [d.name, d])), sections: docs.flatMap(sectionsOf) };
    }
    return this.indexed;
  }

  /** The sections (cut at headings) of every page that match `query`, best first, with the instance's base URL. */
  search(query: string, limit: number, baseUrl: string): SectionHit[] {
    return searchSections(this.sections, query, limit).map((s) => ({ ...s, text: s.text.replace(DOC_BASE, baseUrl) }));
  }

  /** Every page: name, title and size. */
  list(): Array<{ name: string; title: string; chars: number }> {
    const pages = [...this.byName.values()].map((d) => ({ name: d.name, title: d.title, chars: d.content.length }));
    const aliases = Object.entries(DOC_TYPES)
      .filter(([, page]) => this.byName.has(page))
      .map(([alias, page]) => ({
        name: alias,
        title: `${this.byName.get(page)!.title} (InsForge name)`,
        chars: this.byName.get(page)!.content.length,
      }));
    return [...pages, ...aliases];
  }

  /** A page by its name or InsForge doc type, with the instance's base URL in the examples. */
  page(name: string, baseUrl: string): string {
    const doc = this.byName.get(DOC_TYPES[name] ?? name);
    if (!doc) throw new AppError('DOC_NOT_FOUND', { message: `No document "${name}".` });
    return doc.content.replace(DOC_BASE, baseUrl);
  }

  /** `/api/docs/{feature}/{language}`: TypeScript = the area page; rest-api = its endpoints from the OpenAPI document. */
  sdk(feature: string, language: string, baseUrl: string, openapi: () => OpenApi): string {
    const f = FEATURES[feature];
    if (!f)
      throw new AppError('DOC_NOT_FOUND', {
        message: `No feature "${feature}"; features: ${Object.keys(FEATURES).join(', ')}.`,
      });
    if (language === 'typescript') return this.page(f.page, baseUrl);
    if (language === 'rest-api') return this.restReference(f.tag, baseUrl, openapi());
    throw new AppError('DOC_NOT_FOUND', {
      message: `No ${language} docs: Plinth documents TypeScript (the InsForge SDK, postgrest-js) and the REST API (language rest-api).`,
    });
  }

  /** The endpoints of one OpenAPI tag as a Markdown list. */
  restReference(tag: string, baseUrl: string, openapi: OpenApi): string {
    const lines = [
      `# ${tag}: REST endpoints`,
      '',
      `Base URL: ${baseUrl}. Full schemas: GET ${baseUrl}/api/openapi.json.`,
      '',
    ];
    for (const [p, ops] of Object.entries(openapi.paths ?? {})) {
      for (const [method, op] of Object.entries(ops)) {
        if (op.tags?.includes(tag)) lines.push(`- \`${method.toUpperCase()} ${p}\`: ${op.summary ?? ''}`);
      }
    }
    return lines.join('\n');
  }

  /** llms.txt: what this instance is and a link per page (llmstxt.org). */
  llmsTxt(baseUrl: string): string {
    const intro =
      this.byName.get('agents-instructions')?.content.split('\n\n')[1] ?? 'A self-hostable backend platform.';
    const links = [...this.byName.values()].map(
      (d) => `- [${d.title}](${baseUrl}/api/docs/${d.name}): ${d.content.length} characters`,
    );
    return [
      `# Plinth`,
      '',
      `> ${intro.replace(/\n/g, ' ')}`,
      '',
      `MCP server: ${baseUrl}/api/mcp (admin key as Bearer). OpenAPI: ${baseUrl}/api/openapi.json.`,
      '',
      '## Docs',
      '',
      ...links,
      '',
    ].join('\n');
  }

  /** llms-full.txt: every page in one text. */
  llmsFullTxt(baseUrl: string): string {
    return [...this.byName.values()].map((d) => d.content.replace(DOC_BASE, baseUrl)).join('\n\n---\n\n');
  }
}
