-- AI gateway: embeddings calls (POST /api/ai/embeddings) are metered like chat and images.
alter table ai.usage drop constraint if exists usage_endpoint_check;
alter table ai.usage add constraint usage_endpoint_check check (endpoint in ('chat', 'images', 'embeddings'));
