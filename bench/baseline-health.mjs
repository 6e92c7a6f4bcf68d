// Baseline for the health benchmark: a bare node:http server returning the same JSON.
import http from 'node:http';

const port = Number(process.env.PORT);
http
  .createServer((_req, res) => {
    const body = JSON.stringify({
      status: 'ok',
      service: 'plinth',
      version: '0.1.0',
      timestamp: new Date().toISOString(),
    });
    res.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
    });
    res.end(body);
  })
  .listen(port, '127.0.0.1');
