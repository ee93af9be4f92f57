// Interruption metrics with Karpenter's names (spec/aws-provider.md §6), on an injectable prom-client
// Registry. Messages that cannot be parsed are counted under message_type="unparseable".
import { Counter, Histogram, type Registry } from 'prom-client';

export interface InterruptionMetrics {
  readonly received: Counter<'message_type'>;
  readonly deleted: Counter;
  readonly queueDuration: Histogram;
}

export function interruptionMetrics(registry: Registry): InterruptionMetrics {
  return {
    received: new Counter({
      name: 'karpenter_interruption_received_messages_total',
      help: 'Interruption messages received from the queue, by message type.',
      labelNames: ['message_type'],
      registers: [registry],
    }),
    deleted: new Counter({
      name: 'karpenter_interruption_deleted_messages_total',
      help: 'Interruption messages deleted from the queue.',
      registers: [registry],
    }),
    queueDuration: new Histogram({
      name: 'karpenter_interruption_message_queue_duration_seconds',
      help: 'Time from the event being emitted to the controller receiving it.',
      buckets: [0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600],
      registers: [registry],
    }),
  };
}
