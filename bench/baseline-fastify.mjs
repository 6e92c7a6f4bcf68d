// Baseline for the health benchmark: bare Fastify (no hooks, no logger) answering the same JSON
// through a response schema, as Plinth's health route does: what the framework alone costs.
import Fastify from 'fastify';

const app = Fastify({ logger: false });
const schema = {
  response: {
    200: {
      type: 'object',
      properties: {
        status: { type: 'string' },
        service: { type: 'string' },
        version: { type: 'string' },
        plinthVersion: { type: 'string' },
        timestamp: { type: 'string', format: 'date-time' },
      },
    },
  },
};
const base = { service: 'plinth', version: '1.5.1', plinthVersion: '0.1.0' };
app.get('/api/health', { schema }, (_request, reply) => {
  reply.send({ status: 'ok', ...base, timestamp: new Date().toISOString() });
});
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
