// Baseline for the health benchmark: a bare node:http server returning the same JSON as Plinth's
// liveness (same fields, same length) with the same keep-alive timeout as Fastify's (72 s).
import http from 'node:http';

const port = Number(process.env.PORT);
const base = { service: 'plinth', version: '1.5.1', plinthVersion: '0.1.0' };
const server = http.createServer((_req, res) => {
  const body = JSON.stringify({ status: 'ok', ...base, timestamp: new Date().toISOString() });
  res.writeHead(200, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
});
server.keepAliveTimeout = 72_000;
server.listen(port, '127.0.0.1');
