// Whether the AI gateway is configured, and if not what to set: the one place the dashboard asks
// (the AI usage and Settings pages read it from here). GET /api/ai/status answers 200 on every
// install (it never calls the upstream), so no page probes an AI route that answers 503.
import { api } from '../api';

export type AiStatus =
  | { configured: true; provider?: string; models: string[] | null; defaultModel: string | null }
  | { configured: false; message: string; nextActions: string };

export async function aiStatus(): Promise<AiStatus> {
  const s = await api<{ configured: boolean; provider?: string; models: string[] | null; defaultModel: string | null }>(
    '/api/ai/status',
  );
  if (s.configured) return { configured: true, provider: s.provider, models: s.models, defaultModel: s.defaultModel };
  return {
    configured: false,
    message: 'The AI gateway is not configured on this server.',
    nextActions:
      'Set AI_BASE_URL (e.g. https://api.openai.com/v1) and AI_API_KEY where the server runs, then restart Plinth; docs/ai.md shows settings for OpenAI, OpenRouter and local servers.',
  };
}
