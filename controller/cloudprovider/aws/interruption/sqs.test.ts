import { readFileSync } from 'node:fs';
import {
  DeleteMessageCommand,
  GetQueueUrlCommand,
  QueueDoesNotExist,
  ReceiveMessageCommand,
} from '@aws-sdk/client-sqs';
import 'aws-sdk-client-mock-vitest/extend';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { mockedAws } from '../../../../test/fakes/aws.ts';
import { interruptionMetrics } from './metrics.ts';
import { SqsInterruptionSource } from './sqs.ts';

const sample = (name: string) =>
  readFileSync(new URL(`../testdata/interruption-events/${name}`, import.meta.url), 'utf8');
const URL_ = 'https://sqs.us-west-2.amazonaws.com/123456789012/my-cluster';

function setup() {
  const aws = mockedAws();
  aws.sqs.on(GetQueueUrlCommand).resolves({ QueueUrl: URL_ });
  aws.sqs.on(DeleteMessageCommand).resolves({});
  const registry = new Registry();
  const logs: string[] = [];
  const source = new SqsInterruptionSource({
    sqs: aws.ports.sqs,
    queueName: 'my-cluster',
    metrics: interruptionMetrics(registry),
    log: (m) => logs.push(m),
  });
  return { aws, registry, source, logs };
}

async function metric(registry: Registry, name: string) {
  return (await registry.getMetricsAsJSON()).find((m) => m.name === name)?.values ?? [];
}

describe('SqsInterruptionSource', () => {
  it('resolves the queue URL once and long-polls with Karpenter parameters', async () => {
    const { aws, source } = setup();
    aws.sqs.on(ReceiveMessageCommand).resolves({ Messages: [] });
    await source.receive(new AbortController().signal);
    await source.receive(new AbortController().signal);
    expect(aws.sqs).toHaveReceivedCommandTimes(GetQueueUrlCommand, 1);
    expect(aws.sqs).toHaveReceivedCommandWith(GetQueueUrlCommand, { QueueName: 'my-cluster' });
    expect(aws.sqs).toHaveReceivedCommandWith(ReceiveMessageCommand, {
      QueueUrl: URL_,
      MaxNumberOfMessages: 10,
      WaitTimeSeconds: 20,
      VisibilityTimeout: 20,
      MessageSystemAttributeNames: ['SentTimestamp'],
      MessageAttributeNames: ['All'],
    });
  });

  it('returns parsed events with their handles and leaves counting and deletion to the controller', async () => {
    const { aws, source, registry } = setup();
    aws.sqs.on(ReceiveMessageCommand).resolves({
      Messages: [
        { MessageId: '1', ReceiptHandle: 'h1', Body: sample('spot-interruption-warning.json') },
        { MessageId: '2', ReceiptHandle: 'h2', Body: sample('ignored-instance-state-change-running.json') },
        { MessageId: '3', ReceiptHandle: 'h3', Body: sample('scheduled-change-health-event.json') },
      ],
    });
    const got = await source.receive(new AbortController().signal);
    expect(got.map((m) => [m.handle, m.event.kind])).toEqual([
      ['h1', 'spotInterruption'],
      ['h2', 'noop'],
      ['h3', 'scheduledChange'],
    ]);
    expect(aws.sqs).not.toHaveReceivedCommand(DeleteMessageCommand);
    expect(await metric(registry, 'karpenter_interruption_received_messages_total')).toEqual([]);
  });

  it('logs, counts and deletes a message that cannot be parsed, without returning it', async () => {
    const { aws, source, registry, logs } = setup();
    aws.sqs.on(ReceiveMessageCommand).resolves({
      Messages: [
        { MessageId: 'bad', ReceiptHandle: 'hb', Body: '{"not":"an event"}' },
        { MessageId: '1', ReceiptHandle: 'h1', Body: sample('rebalance-recommendation.json') },
      ],
    });
    const got = await source.receive(new AbortController().signal);
    expect(got.map((m) => m.handle)).toEqual(['h1']);
    expect(aws.sqs).toHaveReceivedCommandWith(DeleteMessageCommand, { QueueUrl: URL_, ReceiptHandle: 'hb' });
    expect(logs).toEqual(['deleting an interruption message that cannot be parsed']);
    const received = await metric(registry, 'karpenter_interruption_received_messages_total');
    expect(received.find((v) => v.labels.message_type === 'unparseable')?.value).toBe(1);
    expect((await metric(registry, 'karpenter_interruption_deleted_messages_total'))[0]?.value).toBe(1);
  });

  it('deletes acknowledged messages (the controller counts those deletions)', async () => {
    const { aws, source, registry } = setup();
    await source.acknowledge('h9');
    expect(aws.sqs).toHaveReceivedCommandWith(DeleteMessageCommand, { QueueUrl: URL_, ReceiptHandle: 'h9' });
    expect((await metric(registry, 'karpenter_interruption_deleted_messages_total'))[0]?.value ?? 0).toBe(0);
  });

  it('returns nothing once aborted, and retries the queue lookup after a failure', async () => {
    const { aws, source } = setup();
    const ac = new AbortController();
    ac.abort();
    expect(await source.receive(ac.signal)).toEqual([]);
    expect(aws.sqs).not.toHaveReceivedAnyCommand();
    aws.sqs
      .on(GetQueueUrlCommand)
      .rejectsOnce(new QueueDoesNotExist({ $metadata: {}, message: 'no queue' }))
      .resolves({ QueueUrl: URL_ });
    aws.sqs.on(ReceiveMessageCommand).resolves({});
    await expect(source.receive(new AbortController().signal)).rejects.toThrow(
      'getting the url of interruption queue my-cluster',
    );
    await expect(source.receive(new AbortController().signal)).resolves.toEqual([]);
  });
});
