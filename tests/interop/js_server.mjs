// An A2A agent served by the official JavaScript SDK (@a2a-js/sdk 1.x server, on its express
// integration), for our Rust client to talk to. The JS counterpart of py_server.py.
//
// Usage: node js_server.mjs [PORT]     (default 0: any free port)
//
// Prints one line `LISTENING <port>` on stdout once the HTTP port is bound and the routes are
// mounted, then serves on 127.0.0.1 until killed; everything else (the SDK's logs included)
// goes to stderr. The SDK is loaded from $A2A_INTEROP_JS (default ../../.scratch/interop/js,
// relative to this file), where tests/interop/setup.sh installs it (with express 5, the
// optional peer dependency of `@a2a-js/sdk/server/express`).
//
// - /echo   its card at /echo/.well-known/agent-card.json (the SDK's agentCardHandler), JSON-RPC
//           at /echo/jsonrpc (jsonRpcHandler), HTTP+JSON at /echo/rest (restHandler), all on one
//           DefaultRequestHandler + InMemoryTaskStore; protocol 1.0, streaming, no push.
//           The executor publishes the Task (SUBMITTED) first, reports WORKING, emits the
//           artifact `echo: <text>` (one chunk, lastChunk=true), then COMPLETED, ~50 ms apart.
//           A text starting with `msg:` is answered with a single Message `you said: <rest>`
//           (no task). Cancel publishes CANCELED and stops the run.

import { createRequire } from 'node:module';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

// stdout carries only the LISTENING line.
console.log = console.error;
console.info = console.error;
console.debug = console.error;

const here = dirname(fileURLToPath(import.meta.url));
const sdkDir = resolve(process.env.A2A_INTEROP_JS ?? join(here, '..', '..', '.scratch', 'interop', 'js'));
const require = createRequire(join(sdkDir, 'package.json'));
const express = require('express');
const { AGENT_CARD_PATH, Role, TaskState } = require('@a2a-js/sdk');
const { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } = require('@a2a-js/sdk/server');
const { agentCardHandler, jsonRpcHandler, restHandler, UserBuilder } = require('@a2a-js/sdk/server/express');

const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

function textPart(text) {
  return { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' };
}

function agentMessage(text, contextId, taskId = '') {
  return {
    messageId: randomUUID(),
    contextId,
    taskId,
    role: Role.ROLE_AGENT,
    parts: [textPart(text)],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

function status(state, message = undefined) {
  return { state, message, timestamp: new Date().toISOString() };
}

function userText(message) {
  return message.parts
    .map((part) => (part.content?.$case === 'text' ? part.content.value : ''))
    .join('');
}

class EchoExecutor {
  // taskId -> contextId of the runs in progress; a canceled run is removed from it.
  running = new Map();

  async execute(requestContext, eventBus) {
    const { taskId, contextId } = requestContext;
    const text = userText(requestContext.userMessage);
    if (text.startsWith('msg:')) {
      eventBus.publish(AgentEvent.message(agentMessage(`you said: ${text.slice(4).trim()}`, contextId)));
      return;
    }
    if (!requestContext.task) {
      eventBus.publish(
        AgentEvent.task({
          id: taskId,
          contextId,
          status: status(TaskState.TASK_STATE_SUBMITTED),
          artifacts: [],
          history: [requestContext.userMessage],
          metadata: undefined,
        }),
      );
    }
    this.running.set(taskId, contextId);
    const steps = [
      () =>
        AgentEvent.statusUpdate({
          taskId,
          contextId,
          status: status(TaskState.TASK_STATE_WORKING, agentMessage('echoing', contextId, taskId)),
          metadata: undefined,
        }),
      () =>
        AgentEvent.artifactUpdate({
          taskId,
          contextId,
          artifact: {
            artifactId: 'echo',
            name: 'echo',
            description: '',
            parts: [textPart(`echo: ${text}`)],
            metadata: undefined,
            extensions: [],
          },
          append: false,
          lastChunk: true,
          metadata: undefined,
        }),
      () =>
        AgentEvent.statusUpdate({
          taskId,
          contextId,
          status: status(TaskState.TASK_STATE_COMPLETED),
          metadata: undefined,
        }),
    ];
    try {
      for (const [i, step] of steps.entries()) {
        if (i > 0) await sleep(50);
        if (!this.running.has(taskId)) return; // canceled meanwhile
        eventBus.publish(step());
      }
    } finally {
      this.running.delete(taskId);
    }
  }

  async cancelTask(taskId, eventBus) {
    const contextId = this.running.get(taskId);
    this.running.delete(taskId);
    if (contextId === undefined) return; // not running here: the handler cancels it in the store
    eventBus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId,
        status: status(TaskState.TASK_STATE_CANCELED, agentMessage('canceled', contextId, taskId)),
        metadata: undefined,
      }),
    );
  }
}

function echoCard(base) {
  const path = '/echo';
  return {
    name: 'js-echo',
    description: 'js-echo (@a2a-js/sdk interop fixture)',
    supportedInterfaces: [
      { url: `${base}${path}/jsonrpc`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
      { url: `${base}${path}/rest`, protocolBinding: 'HTTP+JSON', tenant: '', protocolVersion: '1.0' },
    ],
    provider: undefined,
    version: '1.0.0',
    capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [
      {
        id: 'echo',
        name: 'echo',
        description: 'echo skill',
        tags: ['echo'],
        examples: [],
        inputModes: [],
        outputModes: [],
        securityRequirements: [],
      },
    ],
    signatures: [],
  };
}

/** Mounts one agent under `path`: its card, JSON-RPC and HTTP+JSON, sharing one handler. */
function mountAgent(app, path, card, executor) {
  const requestHandler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
  const userBuilder = UserBuilder.noAuthentication;
  app.use(`${path}/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: requestHandler }));
  app.use(`${path}/jsonrpc`, jsonRpcHandler({ requestHandler, userBuilder }));
  app.use(`${path}/rest`, restHandler({ requestHandler, userBuilder }));
}

async function main() {
  const port = Number(process.argv[2] ?? 0);
  const app = express();
  const server = createServer(app);
  await new Promise((listening, failed) => {
    server.once('error', failed);
    server.listen(port, '127.0.0.1', listening);
  });
  const bound = server.address().port;
  const base = `http://127.0.0.1:${bound}`;
  // Requests reach the app only once the port line is out, so mounting after listen is safe.
  mountAgent(app, '/echo', echoCard(base), new EchoExecutor());
  console.error(`js_server.mjs: serving /echo at ${base}`);
  process.stdout.write(`LISTENING ${bound}\n`);
}

for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(0));

main().catch((error) => {
  console.error('js_server.mjs failed:', error);
  process.exit(1);
});
