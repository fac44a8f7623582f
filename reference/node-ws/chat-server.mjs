// The chat room of soak bench -side server on Node's ws package: the
// reference row beside the Go servers (internal/chat), with the same room
// protocol (Bun's chat bench), the same bounded per-connection queue and the
// same /_stats answer, so that the same load client and truth check apply.
//
//   node chat-server.mjs -n 32 [-queue 4096] [-addr 127.0.0.1:0]
//
// Prints the address it listens on as its first line; ends on SIGTERM/SIGINT.
import http from 'node:http';
import fs from 'node:fs';
import { WebSocketServer } from 'ws';

const args = { n: 32, queue: 4096, addr: '127.0.0.1:0', readLimit: 1 << 20 };
for (let i = 2; i < process.argv.length; i += 2) {
  const k = process.argv[i].replace(/^-+/, ''), v = process.argv[i + 1];
  if (!(k in args) || v === undefined) {
    console.error(`chat-server: unknown flag or missing value: ${process.argv[i]}`);
    process.exit(2);
  }
  args[k] = k === 'addr' ? v : Number(v);
}
if (!(args.n >= 1) || !(args.queue >= 1)) {
  console.error('chat-server: -n and -queue want 1 or more');
  process.exit(2);
}

const CLOSE_TOO_SLOW = 1008;
const room = { members: [], ready: false, closed: false, dropped: [] };
const c = { deliveries: 0, broadcasts: 0, inflight: 0, joined: 0, left: 0, rejected: 0, drops: 0 };
const READY = Buffer.from('ready');

function send(m, buf, counted) {
  m.pending++;
  c.inflight++;
  m.ws.send(buf, { binary: false }, (err) => {
    m.pending--;
    c.inflight--;
    if (!err && counted) c.deliveries++;
  });
}

function remove(m) {
  const i = room.members.indexOf(m);
  if (i < 0) return false;
  room.members.splice(i, 1);
  if (room.members.length === 0) room.ready = false;
  return true;
}

function drop(m) {
  if (m.dead) return;
  m.dead = true;
  c.drops++;
  remove(m);
  if (room.dropped.length < 100) room.dropped.push(m.name);
  m.ws.close(CLOSE_TOO_SLOW, 'too slow: queue full');
  setTimeout(() => m.ws.terminate(), 1000).unref();
}

function join(ws, name) {
  if (room.closed || room.members.length >= args.n) {
    c.rejected++;
    ws.close(1013, 'room full');
    return;
  }
  const m = { ws, name, pending: 0, dead: false };
  room.members.push(m);
  c.joined++;
  if (room.ready) send(m, READY, false);
  else if (room.members.length === args.n) {
    room.ready = true;
    for (const x of room.members) send(x, READY, false);
  }
  ws.on('message', (data, isBinary) => {
    if (isBinary) return;
    c.broadcasts++;
    const out = Buffer.concat([Buffer.from(name + ': '), data]); // once, shared by every send
    for (const x of room.members.slice()) {
      if (x.pending >= args.queue) drop(x);
      else send(x, out, true);
    }
  });
  ws.on('close', () => {
    if (!m.dead) {
      m.dead = true;
      if (remove(m)) c.left++;
    }
  });
  ws.on('error', () => {});
}

function procWrites() {
  try {
    const io = fs.readFileSync('/proc/self/io', 'utf8');
    const get = (k) => Number((io.match(new RegExp(`^${k}: (\\d+)`, 'm')) || [])[1] || 0);
    return [get('syscw'), get('wchar')];
  } catch {
    return [0, 0];
  }
}

function stats(settled) {
  const cpu = process.cpuUsage(), ru = process.resourceUsage();
  const [syscw, wchar] = procWrites();
  return {
    lib: 'node-ws', n: args.n, queue: args.queue, deliveries: c.deliveries, broadcasts: c.broadcasts,
    inflight: c.inflight, conns: room.members.length, ready: room.ready, joined: c.joined, left: c.left,
    rejected: c.rejected, drops: c.drops, dropped: room.dropped.slice(), settled,
    user_ns: cpu.user * 1000, sys_ns: cpu.system * 1000, max_rss_kib: ru.maxRSS, syscw, wchar, goroutines: 0,
  };
}

const server = http.createServer((req, res) => {
  const u = new URL(req.url, 'http://x');
  if (req.method !== 'GET' || u.pathname !== '/_stats') {
    res.writeHead(404).end('not found\n');
    return;
  }
  let settle = 0;
  if (u.searchParams.get('settle')) { // absent or empty: no wait, as the Go servers
    const m = /^(\d+(?:\.\d+)?)(ms|s)$/.exec(u.searchParams.get('settle'));
    if (!m) {
      res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"settle: want a duration such as 2s"}\n');
      return;
    }
    settle = Number(m[1]) * (m[2] === 's' ? 1000 : 1);
  }
  const deadline = Date.now() + Math.min(settle, 60000);
  const answer = () => {
    if (c.inflight !== 0 && Date.now() < deadline) {
      setTimeout(answer, 1);
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(stats(c.inflight === 0)) + '\n');
  };
  answer();
});

const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: args.readLimit });
server.on('upgrade', (req, socket, head) => {
  const u = new URL(req.url, 'http://x');
  const name = u.searchParams.get('name');
  if (u.pathname !== '/' || !name || name.length > 256) {
    socket.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
    return;
  }
  wss.handleUpgrade(req, socket, head, (ws) => join(ws, name));
});

const i = args.addr.lastIndexOf(':');
const host = args.addr.slice(0, i), port = Number(args.addr.slice(i + 1));
if (host !== '127.0.0.1' && host !== 'localhost' && host !== '::1' && host !== '[::1]') {
  console.error(`chat-server: -addr ${args.addr}: loopback only`);
  process.exit(2);
}
server.listen(port, host, () => {
  const a = server.address();
  console.log(`${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}`);
});
for (const sig of ['SIGTERM', 'SIGINT']) {
  process.on(sig, () => {
    room.closed = true;
    for (const m of room.members) m.ws.terminate();
    server.close();
    process.exit(0);
  });
}
