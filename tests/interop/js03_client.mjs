// Drives an A2A server with the official JavaScript SDK client of the v0.3 generation
// (@a2a-js/sdk 0.3.14, installed under the npm alias `a2a-js-sdk-v03`).
//
// Usage: node js03_client.mjs BASE_URL
//
// The client is built from the server's agent card the 0.3 way (top-level `url`,
// `preferredTransport`) and speaks v0.3 JSON-RPC (`message/send`, `message/stream`,
// `tasks/get`, `tasks/cancel`, `tasks/resubscribe`) with v0.3 objects (`kind`, lowercase
// states). The server must run the a2a-rust demo agent. One JSON report goes to stdout
// ({"error": "..."} for a scenario that threw); tests/tests/interop_js.rs asserts on it.

import { createRequire } from 'node:module';
import { randomUUID } from 'node:crypto';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const sdkDir = resolve(process.env.A2A_INTEROP_JS ?? join(here, '..', '..', '.scratch', 'interop', 'js'));
const require = createRequire(join(sdkDir, 'package.json'));
const { ClientFactory } = require('a2a-js-sdk-v03/client');

const TERMINAL = new Set(['completed', 'failed', 'canceled', 'rejected']);

function userMessage(text, taskId, contextId) {
  const m = { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text }] };
  if (taskId) m.taskId = taskId;
  if (contextId) m.contextId = contextId;
  return m;
}

const params = (message, blocking = true) => ({ message, configuration: { blocking } });
const textOf = (parts) => (parts ?? []).filter((p) => p.kind === 'text').map((p) => p.text).join('');

function taskSummary(t) {
  return {
    kind: t.kind,
    id: t.id,
    contextId: t.contextId,
    state: t.status?.state,
    statusText: t.status?.message ? textOf(t.status.message.parts) : null,
    artifacts: (t.artifacts ?? []).map((a) => textOf(a.parts)),
  };
}

function eventSummary(ev) {
  switch (ev.kind) {
    case 'task':
      return taskSummary(ev);
    case 'status-update':
      return {
        kind: ev.kind,
        taskId: ev.taskId,
        state: ev.status?.state,
        text: ev.status?.message ? textOf(ev.status.message.parts) : null,
        final: ev.final,
      };
    case 'artifact-update':
      return {
        kind: ev.kind,
        taskId: ev.taskId,
        artifactId: ev.artifact?.artifactId,
        text: textOf(ev.artifact?.parts),
        append: ev.append ?? null,
        lastChunk: ev.lastChunk ?? null,
      };
    case 'message':
      return { kind: 'message', text: textOf(ev.parts) };
    default:
      return { kind: String(ev.kind) };
  }
}

async function collect(gen) {
  const out = [];
  for await (const ev of gen) out.push(eventSummary(ev));
  return out;
}

async function run(baseUrl) {
  const client = await new ClientFactory().createFromUrl(baseUrl);
  const report = { transport: client.transport.constructor.name };
  const scenario = async (name, fn) => {
    try {
      report[name] = await fn();
    } catch (e) {
      report[name] = { error: `${e?.name ?? 'Error'}: ${e?.message ?? e}`, stack: String(e?.stack ?? '').split('\n').slice(0, 4) };
    }
  };

  await scenario('send_blocking', async () => taskSummary(await client.sendMessage(params(userMessage('hello from js 0.3')))));

  await scenario('send_non_blocking', async () => {
    const first = await client.sendMessage(params(userMessage('countdown 2'), false));
    let final = null;
    for (let i = 0; i < 100; i++) {
      const t = await client.getTask({ id: first.id });
      if (TERMINAL.has(t.status?.state)) {
        final = taskSummary(t);
        break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    return { first: taskSummary(first), final };
  });

  await scenario('stream_countdown', () => collect(client.sendMessageStream(params(userMessage('countdown 3')))));

  await scenario('get', async () => {
    const sent = await client.sendMessage(params(userMessage('get me')));
    const got = await client.getTask({ id: sent.id });
    return { sent: taskSummary(sent), got: taskSummary(got) };
  });

  await scenario('cancel_running', async () => {
    const started = await client.sendMessage(params(userMessage('countdown 20'), false));
    const canceled = await client.cancelTask({ id: started.id });
    const after = await client.getTask({ id: started.id });
    return { started: taskSummary(started), cancel: taskSummary(canceled), after: taskSummary(after) };
  });

  await scenario('subscribe_running', async () => {
    const started = await client.sendMessage(params(userMessage('countdown 10'), false));
    return { taskId: started.id, events: await collect(client.resubscribeTask({ id: started.id })) };
  });

  await scenario('multi_turn', async () => {
    const asked = await client.sendMessage(params(userMessage('greet')));
    const answered = await client.sendMessage(params(userMessage('Ada', asked.id, asked.contextId)));
    return { asked: taskSummary(asked), answered: taskSummary(answered) };
  });

  await scenario('errors', async () => {
    const out = {};
    const errorOf = async (name, fn) => {
      try {
        await fn();
        out[name] = 'no error';
      } catch (e) {
        out[name] = `${e?.constructor?.name}: ${e?.message}`;
      }
    };
    await errorOf('get_unknown', () => client.getTask({ id: 'no-such-task' }));
    const done = await client.sendMessage(params(userMessage('done already')));
    await errorOf('cancel_completed', () => client.cancelTask({ id: done.id }));
    await errorOf('send_to_completed', () => client.sendMessage(params(userMessage('more', done.id, done.contextId))));
    await errorOf('resubscribe_completed', () => collect(client.resubscribeTask({ id: done.id })));
    await errorOf('stream_to_completed', () => collect(client.sendMessageStream(params(userMessage('more', done.id, done.contextId)))));
    return out;
  });

  return report;
}

const [baseUrl] = process.argv.slice(2);
if (!baseUrl) {
  console.error('usage: node js03_client.mjs BASE_URL');
  process.exit(2);
}
const timer = setTimeout(() => {
  console.error('js03_client: gave up after 90 s');
  process.exit(3);
}, 90_000);
run(baseUrl).then(
  (report) => {
    clearTimeout(timer);
    console.log(JSON.stringify(report, null, 1));
  },
  (e) => {
    console.error('js03_client failed:', e);
    process.exit(1);
  }
);
