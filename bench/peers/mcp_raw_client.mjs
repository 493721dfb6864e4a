// A minimal MCP stdio client: newline-delimited JSON-RPC written to a server's
// stdin and read from its stdout, with nothing between the bytes and
// JSON.parse. The benches use it where the per-call cost of the official
// SDK client (schema validation of every result, its framing) would be what
// is measured instead of the server: one SDK call costs the client about as
// much CPU as the server spends on a block_append.
import { spawn } from 'node:child_process';

export class RawMcpClient {
  static async connect(command, args, { name = 'weft-bench-raw' } = {}) {
    const client = new RawMcpClient(command, args);
    await client.request('initialize', {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name, version: '1.0.0' },
    });
    client.notify('notifications/initialized', {});
    return client;
  }

  constructor(command, args) {
    this.child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    this.serverPid = this.child.pid;
    this.stderrText = '';
    this.nextId = 1;
    this.waiting = new Map();  // id -> { resolve, reject }
    this.buffered = '';
    this.child.stderr.on('data', (d) => { this.stderrText += d.toString(); });
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (chunk) => this.onData(chunk));
    this.child.on('exit', (code, signal) => {
      const error = new Error(`the MCP server exited (${signal ?? code}): ${this.stderrText.slice(-500)}`);
      for (const { reject } of this.waiting.values()) reject(error);
      this.waiting.clear();
    });
  }

  onData(chunk) {
    this.buffered += chunk;
    let newline;
    while ((newline = this.buffered.indexOf('\n')) >= 0) {
      const line = this.buffered.slice(0, newline);
      this.buffered = this.buffered.slice(newline + 1);
      if (!line.trim()) continue;
      const message = JSON.parse(line);
      const waiter = message.id !== undefined ? this.waiting.get(message.id) : undefined;
      if (!waiter) continue;  // a notification or a request from the server
      this.waiting.delete(message.id);
      if (message.error) waiter.reject(new Error(JSON.stringify(message.error)));
      else waiter.resolve(message.result);
    }
  }

  request(method, params) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
    });
  }

  notify(method, params) {
    this.child.stdin.write(JSON.stringify({ jsonrpc: '2.0', method, params }) + '\n');
  }

  // Resolves to the tool's result ({content, structuredContent, isError}).
  callTool({ name, arguments: args }) {
    return this.request('tools/call', { name, arguments: args });
  }

  async close() {
    this.child.stdin.end();
    await new Promise((resolve) => {
      if (this.child.exitCode !== null || this.child.signalCode !== null) resolve();
      else this.child.once('exit', resolve);
    });
  }
}
