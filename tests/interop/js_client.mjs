// Drives an A2A server with the official JavaScript SDK client (@a2a-js/sdk 1.x).
//
// Usage: node js_client.mjs BASE_URL MODE
//   MODE = JSONRPC | HTTP+JSON   v1.0 client over that binding
//          GRPC                  v1.0 client over gRPC: the SDK's GrpcTransportFactory
//                                (@a2a-js/sdk/client/grpc, on @grpc/grpc-js, insecure channel
//                                credentials by default: plain HTTP/2 to the card's host:port)
//          v0.3                  the SDK's v0.3 compat JSON-RPC client (LegacyJsonRpcTransport),
//                                given the server's card with only its v0.3 JSON-RPC interface
//
// The SDK is loaded from $A2A_INTEROP_JS (default ../../.scratch/interop/js, relative to this
// file), where tests/interop/setup.sh installs it. The server must run the a2a-rust demo agent.
// Each scenario's outcome goes into one JSON report on stdout ({"error": "..."} if it threw);
// the Rust test (tests/tests/interop_js.rs) asserts on it.

import { createRequire } from 'node:module';
import { randomUUID } from 'node:crypto';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const sdkDir = resolve(process.env.A2A_INTEROP_JS ?? join(here, '..', '..', '.scratch', 'interop', 'js'));
const require = createRequire(join(sdkDir, 'package.json'));
const { Role, TaskState, taskStateToJSON } = require('@a2a-js/sdk');
const {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
} = require('@a2a-js/sdk/client');

const TERMINAL = new Set([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
]);

function userMessage(text, taskId = '', contextId = '') {
  return {
    messageId: randomUUID(),
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' }],
    taskId,
    contextId,
    extensions: [],
    metadata: undefined,
    referenceTaskIds: [],
  };
}

function request(message, returnImmediately = false) {
  return {
    tenant: '',
    message,
    configuration: returnImmediately
      ? { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true }
      : undefined,
    metadata: undefined,
  };
}

const partsText = (parts) =>
  (parts ?? []).map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
const state = (status) => taskStateToJSON(status?.state);

function taskSummary(t) {
  return {
    id: t.id,
    contextId: t.contextId,
    state: state(t.status),
    statusText: t.status?.message ? partsText(t.status.message.parts) : null,
    artifacts: (t.artifacts ?? []).map((a) => partsText(a.parts)),
    historyLength: (t.history ?? []).length,
  };
}

function eventSummary(ev) {
  const p = ev.payload;
  switch (p?.$case) {
    case 'task':
      return { kind: 'task', ...taskSummary(p.value) };
    case 'statusUpdate':
      return {
        kind: 'statusUpdate',
        taskId: p.value.taskId,
        contextId: p.value.contextId,
        state: state(p.value.status),
        text: p.value.status?.message ? partsText(p.value.status.message.parts) : null,
      };
    case 'artifactUpdate':
      return {
        kind: 'artifactUpdate',
        taskId: p.value.taskId,
        artifactId: p.value.artifact?.artifactId,
        text: partsText(p.value.artifact?.parts),
        append: p.value.append,
        lastChunk: p.value.lastChunk,
      };
    case 'message':
      return { kind: 'message', text: partsText(p.value.parts) };
    default:
      return { kind: String(p?.$case) };
  }
}

function resultSummary(r) {
  return 'messageId' in r ? { kind: 'message', text: partsText(r.parts) } : { kind: 'task', ...taskSummary(r) };
}

async function collect(gen) {
  const out = [];
  for await (const ev of gen) out.push(eventSummary(ev));
  return out;
}

async function makeClient(baseUrl, mode) {
  if (mode === 'v0.3') {
    const legacy = { legacyCompat: { enabled: true } };
    const factory = new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new JsonRpcTransportFactory(legacy)],
        cardResolver: new DefaultAgentCardResolver(legacy),
      })
    );
    const card = await new DefaultAgentCardResolver(legacy).resolve(baseUrl);
    const v03 = card.supportedInterfaces.filter((i) => i.protocolVersion === '0.3');
    if (v03.length === 0) throw new Error('the card offers no v0.3 interface');
    return factory.createFromAgentCard({ ...card, supportedInterfaces: v03 });
  }
  const transport =
    mode === 'HTTP+JSON'
      ? new RestTransportFactory()
      : mode === 'GRPC'
        ? // Only this mode needs the optional peer dependencies (@grpc/grpc-js, @bufbuild/protobuf).
          new (require('@a2a-js/sdk/client/grpc').GrpcTransportFactory)()
        : new JsonRpcTransportFactory();
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [transport],
      preferredTransports: [mode],
    })
  );
  return factory.createFromUrl(baseUrl);
}

async function run(baseUrl, mode) {
  const client = await makeClient(baseUrl, mode);
  const report = {
    mode,
    transport: client.transport.constructor.name,
    protocolVersion: client.protocolVersion,
  };
  const scenario = async (name, fn) => {
    try {
      report[name] = await fn();
    } catch (e) {
      report[name] = { error: `${e?.name ?? 'Error'}: ${e?.message ?? e}`, stack: String(e?.stack ?? '').split('\n').slice(0, 4) };
    }
  };

  await scenario('send_blocking', async () => resultSummary(await client.sendMessage(request(userMessage('hello from js')))));

  await scenario('send_return_immediately', async () => {
    const first = await client.sendMessage(request(userMessage('countdown 2'), true));
    let final = null;
    for (let i = 0; i < 100; i++) {
      const t = await client.getTask({ tenant: '', id: first.id });
      if (TERMINAL.has(t.status?.state)) {
        final = taskSummary(t);
        break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    return { first: resultSummary(first), final };
  });

  await scenario('stream_countdown', () => collect(client.sendMessageStream(request(userMessage('countdown 3')))));

  await scenario('get', async () => {
    const sent = await client.sendMessage(request(userMessage('get me')));
    const got = await client.getTask({ tenant: '', id: sent.id });
    return { sent: resultSummary(sent), got: taskSummary(got) };
  });

  if (mode !== 'v0.3') {
    await scenario('list', async () => {
      const sent = await client.sendMessage(request(userMessage('list me')));
      // ts-proto messages: every plain field must be present (status 0 = no filter).
      const listed = await client.listTasks({
        tenant: '',
        contextId: sent.contextId,
        status: TaskState.TASK_STATE_UNSPECIFIED,
        pageToken: '',
      });
      return {
        taskId: sent.id,
        ids: listed.tasks.map((t) => t.id),
        totalSize: listed.totalSize,
        nextPageToken: listed.nextPageToken,
      };
    });
  }

  await scenario('cancel_running', async () => {
    const started = await client.sendMessage(request(userMessage('countdown 20'), true));
    const canceled = await client.cancelTask({ tenant: '', id: started.id, metadata: undefined });
    const after = await client.getTask({ tenant: '', id: started.id });
    return { started: resultSummary(started), cancel: taskSummary(canceled), after: taskSummary(after) };
  });

  await scenario('subscribe_running', async () => {
    const started = await client.sendMessage(request(userMessage('countdown 10'), true));
    const events = await collect(client.resubscribeTask({ tenant: '', id: started.id }));
    return { taskId: started.id, events };
  });

  await scenario('multi_turn', async () => {
    const asked = await client.sendMessage(request(userMessage('greet')));
    const answered = await client.sendMessage(request(userMessage('Ada', asked.id, asked.contextId)));
    return { asked: resultSummary(asked), answered: resultSummary(answered) };
  });

  await scenario('errors', async () => {
    const out = {};
    const errorOf = async (name, fn) => {
      try {
        await fn();
        out[name] = 'no error';
      } catch (e) {
        out[name] = e?.constructor?.name ?? String(e);
      }
    };
    await errorOf('get_unknown', () => client.getTask({ tenant: '', id: 'no-such-task' }));
    const done = await client.sendMessage(request(userMessage('done already')));
    await errorOf('cancel_completed', () => client.cancelTask({ tenant: '', id: done.id, metadata: undefined }));
    await errorOf('subscribe_completed', () => collect(client.resubscribeTask({ tenant: '', id: done.id })));
    await errorOf('send_to_completed', () => client.sendMessage(request(userMessage('more', done.id, done.contextId))));
    return out;
  });

  return report;
}

const [baseUrl, mode] = process.argv.slice(2);
if (!baseUrl || !['JSONRPC', 'HTTP+JSON', 'GRPC', 'v0.3'].includes(mode)) {
  console.error('usage: node js_client.mjs BASE_URL JSONRPC|HTTP+JSON|GRPC|v0.3');
  process.exit(2);
}
const timer = setTimeout(() => {
  console.error('js_client: gave up after 90 s');
  process.exit(3);
}, 90_000);
run(baseUrl, mode).then(
  (report) => {
    clearTimeout(timer);
    console.log(JSON.stringify(report, null, 1));
  },
  (e) => {
    console.error('js_client failed:', e);
    process.exit(1);
  }
);
