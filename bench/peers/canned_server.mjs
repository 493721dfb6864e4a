// A canned MCP stdio server for the "client ceiling" of mcp_bench.mjs: it
// answers every tools/call with the same recorded bytes (weft's own response to
// the call being measured, minus its id), so a client driving it measures what
// the SDK client alone can do with those results: a server that costs nothing.
//   node canned_server.mjs <file holding the response after `{"id":<id>,`>
// Answers initialize and ping too; other requests get "method not found".
// Reads newline-delimited JSON-RPC on stdin; writes each response with one
// write, as weft does.
import fs from 'node:fs';

const rest = fs.readFileSync(process.argv[2]);  // `"jsonrpc":"2.0","result":{...}}`
const head = Buffer.from('{"id":');
const comma = Buffer.from(',');
const newline = Buffer.from('\n');

function reply(id, restBytes) {
  const out = Buffer.concat([head, Buffer.from(JSON.stringify(id)), comma, restBytes, newline]);
  for (let done = 0; done < out.length;) {
    try {
      done += fs.writeSync(1, out, done);
    } catch (e) {
      if (e.code !== 'EAGAIN') throw e;  // a non-blocking pipe that is full: retry
    }
  }
}

function handle(line) {
  const msg = JSON.parse(line);
  if (msg.id === undefined || msg.method === undefined) return;  // notifications, responses
  if (msg.method === 'tools/call') return reply(msg.id, rest);
  let result;
  if (msg.method === 'initialize') {
    result = {
      protocolVersion: msg.params.protocolVersion,
      capabilities: { tools: {} },
      serverInfo: { name: 'weft-canned', version: '1.0.0' },
    };
  } else if (msg.method === 'ping') {
    result = {};
  } else {
    const error = { code: -32601, message: `method not found: ${msg.method}` };
    return reply(msg.id, Buffer.from(`"jsonrpc":"2.0","error":${JSON.stringify(error)}}`));
  }
  reply(msg.id, Buffer.from(`"jsonrpc":"2.0","result":${JSON.stringify(result)}}`));
}

let pending = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  pending += chunk;
  let nl;
  while ((nl = pending.indexOf('\n')) >= 0) {
    const line = pending.slice(0, nl);
    pending = pending.slice(nl + 1);
    if (line.trim()) handle(line);
  }
});
process.stdin.on('end', () => process.exit(0));
