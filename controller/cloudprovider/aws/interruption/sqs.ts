// The InterruptionSource over SQS (docs/karpenter/aws-provider.md §6): the queue URL is resolved once (GetQueueUrl),
// each receive() is one long poll (20 s, up to 10 messages, visibility 20 s), every body is parsed through
// the registry, and a message that cannot be parsed is logged, counted and deleted here so it never comes
// back. Parsed messages (noop included) go to the controller, which counts them, acknowledges them after
// handling and counts the deletion; an unacknowledged message reappears after the visibility timeout.
import type { InterruptionEvent, InterruptionSource } from '../../types.ts';
import type { SqsPort } from '../sdk.ts';
import type { InterruptionMetrics } from './metrics.ts';
import { parseMessage } from './registry.ts';

interface SqsSourceDeps {
  readonly sqs: SqsPort;
  /** INTERRUPTION_QUEUE: the queue's name. */
  readonly queueName: string;
  /** Counts unparseable messages (received{message_type="unparseable"}) and their deletion. */
  readonly metrics: InterruptionMetrics;
  readonly log?: (message: string, fields: Record<string, unknown>) => void;
}

const isAbort = (e: unknown, signal: AbortSignal): boolean =>
  signal.aborted || (e instanceof Error && e.name === 'AbortError');

export class SqsInterruptionSource implements InterruptionSource {
  private url: Promise<string> | undefined;

  constructor(private readonly deps: SqsSourceDeps) {}

  /** The queue URL, fetched once (a failed lookup is retried on the next call). */
  queueUrl(): Promise<string> {
    if (!this.url) {
      this.url = this.deps.sqs.getQueueUrl(this.deps.queueName).catch((e: unknown) => {
        this.url = undefined;
        throw new Error(`getting the url of interruption queue ${this.deps.queueName}`, { cause: e });
      });
    }
    return this.url;
  }

  async receive(signal: AbortSignal): Promise<Array<{ event: InterruptionEvent; handle: string }>> {
    if (signal.aborted) return [];
    const url = await this.queueUrl();
    let messages;
    try {
      messages = await this.deps.sqs.receiveMessages(url, signal);
    } catch (e) {
      if (isAbort(e, signal)) return [];
      throw new Error(`receiving from interruption queue ${this.deps.queueName}`, { cause: e });
    }
    const out: Array<{ event: InterruptionEvent; handle: string }> = [];
    for (const m of messages) {
      if (!m.ReceiptHandle) continue;
      let event: InterruptionEvent;
      try {
        event = parseMessage(m.Body ?? '');
      } catch (e) {
        this.deps.metrics.received.inc({ message_type: 'unparseable' });
        this.deps.log?.('deleting an interruption message that cannot be parsed', {
          messageId: m.MessageId,
          error: (e as Error).message,
        });
        await this.acknowledge(m.ReceiptHandle);
        this.deps.metrics.deleted.inc();
        continue;
      }
      out.push({ event, handle: m.ReceiptHandle });
    }
    return out;
  }

  async acknowledge(handle: string): Promise<void> {
    await this.deps.sqs.deleteMessage(await this.queueUrl(), handle);
  }
}
